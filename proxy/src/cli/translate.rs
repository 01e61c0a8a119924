//! `a2a-compat-proxy translate`: one document, stdin to stdout; with
//! `--jsonl`, one document per line, one result per line in the same order.

use std::io::{BufRead, Read, Write};

use translate::document::{self, Kind};
use translate::{TranslateError, Version};

use crate::cli::{CliKind, TargetVersion, TranslateArgs};

/// The document kind `--kind` names.
pub fn kind_of(k: CliKind) -> Kind {
    match k {
        CliKind::Request => Kind::Request,
        CliKind::Response => Kind::Response,
        CliKind::Event => Kind::Event,
        CliKind::Card => Kind::Card,
        CliKind::PushBody => Kind::PushBody,
        CliKind::Task => Kind::Task,
        CliKind::Message => Kind::Message,
        CliKind::PushConfig => Kind::PushConfig,
    }
}

/// The version `--to` names.
pub fn version_of(v: TargetVersion) -> Version {
    match v {
        TargetVersion::V10 => Version::V10,
        TargetVersion::V03 => Version::V03,
    }
}

/// Translates `input` as the flags say. Errors are one line, for exit code 2.
pub fn run(args: &TranslateArgs, input: &[u8]) -> Result<Vec<u8>, String> {
    let to = version_of(args.to);
    let kind = kind_of(args.kind);
    document::translate(kind, to, args.method.as_deref(), input).map_err(|e| {
        format!(
            "cannot translate {} to A2A {to}: {e} (JSON-RPC code {})",
            kind.name(),
            e.jsonrpc_code()
        )
    })
}

/// The output line of a document that failed: its JSON-RPC code and the
/// translator's message.
pub fn error_line(e: &TranslateError, out: &mut Vec<u8>) {
    let line = serde_json::json!({
        "error": {"code": e.jsonrpc_code(), "message": e.to_string()}
    });
    // A `Value` of strings and numbers always renders.
    let _ = serde_json::to_writer(&mut *out, &line);
}

/// Translates every line of `input` (`\n`-separated; a trailing `\r` is
/// dropped) into `output`, one line each, in order: the translated
/// document, or an error object. A blank line is an error line too, so
/// that line N of the output always answers line N of the input. Returns
/// how many lines were read and how many failed.
pub fn jsonl(
    kind: Kind,
    to: Version,
    method: Option<&str>,
    mut input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<(u64, u64)> {
    let (mut lines, mut failed) = (0u64, 0u64);
    let mut line = Vec::with_capacity(1 << 16);
    let mut out = Vec::with_capacity(1 << 16);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        lines += 1;
        let mut doc = line.as_slice();
        doc = doc.strip_suffix(b"\n").unwrap_or(doc);
        doc = doc.strip_suffix(b"\r").unwrap_or(doc);
        out.clear();
        let result = if doc.iter().all(u8::is_ascii_whitespace) {
            Err(TranslateError::Json("empty line".into()))
        } else {
            document::translate(kind, to, method, doc)
        };
        match result {
            Ok(translated) => {
                output.write_all(&translated)?;
            }
            Err(e) => {
                failed += 1;
                error_line(&e, &mut out);
                output.write_all(&out)?;
            }
        }
        output.write_all(b"\n")?;
    }
    output.flush()?;
    Ok((lines, failed))
}

/// Runs the subcommand on the process's stdin/stdout; returns the exit code.
pub fn main(args: &TranslateArgs) -> i32 {
    if args.jsonl {
        return main_jsonl(args);
    }
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut input) {
        eprintln!("error: cannot read stdin: {e}");
        return 2;
    }
    match run(args, &input) {
        Ok(mut out) => {
            out.push(b'\n');
            let mut stdout = std::io::stdout().lock();
            if stdout.write_all(&out).and_then(|_| stdout.flush()).is_err() {
                return 2;
            }
            0
        }
        Err(line) => {
            eprintln!("error: {line}");
            2
        }
    }
}

/// `--jsonl`: exit 0 when every line translated, 1 when any failed, 2 on a
/// usage or I/O error.
fn main_jsonl(args: &TranslateArgs) -> i32 {
    let kind = kind_of(args.kind);
    if let Some(m) = &args.method {
        if translate::method::Method::from_name(m).is_none() {
            eprintln!("error: no A2A method is named {m:?}");
            return 2;
        }
    } else if kind == Kind::Response {
        eprintln!("error: --kind response needs --method (the method answered)");
        return 2;
    }
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let input = std::io::BufReader::with_capacity(1 << 20, stdin.lock());
    let output = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
    match jsonl(
        kind,
        version_of(args.to),
        args.method.as_deref(),
        input,
        output,
    ) {
        Ok((_, 0)) => 0,
        Ok((lines, failed)) => {
            eprintln!("translate: {lines} lines, {failed} failed");
            1
        }
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}
