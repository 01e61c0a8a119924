//! The README's "Property-test an SDK's v0.3 ⇄ v1.0 converter" examples,
//! run as they are written: every `sh` block of that section, in order, in
//! one shell in a scratch directory (with `examples/` and `.venv-v10` of
//! the repository beside it and the built binary on `PATH`); then what
//! they wrote is checked.

mod oracle_support;

use std::path::Path;
use std::process::Command;

use oracle_support::{root, venvs};
use serde_json::Value;

/// The `sh` blocks of the README section headed `heading`.
fn blocks(heading: &str) -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let start = readme.find(heading).expect("the section is in the README");
    let section = &readme[start..];
    let end = section[heading.len()..]
        .find("\n## ")
        .map_or(section.len(), |e| e + heading.len());
    let mut out = Vec::new();
    let mut rest = &section[..end];
    while let Some(s) = rest.find("```sh\n") {
        let body = &rest[s + 6..];
        let e = body.find("```").expect("a closed block");
        out.push(body[..e].to_string());
        rest = &body[e + 3..];
    }
    out
}

fn lines(dir: &Path, file: &str) -> Vec<Value> {
    std::fs::read_to_string(dir.join(file))
        .unwrap_or_else(|e| panic!("{file}: {e}"))
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect()
}

#[test]
fn the_readme_examples_run() {
    venvs();
    let blocks = blocks("## Property-test an SDK's v0.3 ⇄ v1.0 converter");
    assert_eq!(blocks.len(), 3, "the section's examples");
    let dir = std::env::temp_dir().join(format!("a2a-readme-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    for link in ["examples", ".venv-v10"] {
        let _ = std::os::unix::fs::symlink(root().join(link), dir.join(link));
    }
    let bin = Path::new(env!("CARGO_BIN_EXE_a2a-compat-proxy"));
    let path = format!(
        "{}:{}",
        bin.parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(blocks.join("\n"))
        .current_dir(&dir)
        .env("PATH", path)
        .output()
        .expect("run the examples");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // gen: three v0.3 tasks on stdout, then the grep counts.
    let printed: Vec<&str> = stdout.lines().collect();
    for l in &printed[..3] {
        let t: Value = serde_json::from_str(l).expect("a task");
        assert_eq!(t["kind"], "task");
    }
    assert_eq!(lines(&dir, "answers.v10.jsonl").len(), 1000);
    let v03 = lines(&dir, "tasks.v03.jsonl");
    let v10 = lines(&dir, "tasks.v10.jsonl");
    assert_eq!((v03.len(), v10.len()), (1000, 1000));
    assert!(v10.iter().all(|t| t["status"]["state"]
        .as_str()
        .is_some_and(|s| s.starts_with("TASK_STATE_"))));
    let report = lines(&dir, "report.jsonl");
    assert!(
        report.iter().all(|r| r["status"] == "exact"),
        "the lossless domain comes back exact"
    );
    for sdk in ["python", "js"] {
        let r = lines(&dir, &format!("{sdk}.jsonl"));
        assert_eq!(r.len(), 1000, "{sdk}");
        assert!(
            r.iter().all(|x| x["compare"].is_array()),
            "{sdk}: compared with ours"
        );
        assert!(
            printed
                .iter()
                .any(|l| l.starts_with(&format!("{sdk}.jsonl:"))),
            "{stdout}"
        );
    }
    assert!(stderr.contains("roundtrip: 1000 lines"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
