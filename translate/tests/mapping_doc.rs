//! `docs/mapping.md` is generated from the crate's `LOSSY` tables; this test
//! fails when the file and the code disagree. `BLESS=1` rewrites the file.

use std::path::Path;

#[test]
fn mapping_doc_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/mapping.md");
    let want = translate::lossy::render_markdown();
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, &want).expect("write docs/mapping.md");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        have, want,
        "docs/mapping.md is stale: run BLESS=1 cargo test -p translate --test mapping_doc"
    );
}

#[test]
fn every_lossy_row_names_an_existing_fixture() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
    for (module, rows) in translate::lossy::all() {
        for r in rows {
            for f in r.fixture.split(',').map(str::trim) {
                assert!(
                    root.join(f).exists(),
                    "{module}: {} names missing fixture {f}",
                    r.entity
                );
            }
        }
    }
}
