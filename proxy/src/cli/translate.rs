//! `a2a-compat-proxy translate`: one document, stdin to stdout.

use std::io::{Read, Write};

use translate::document::{self, Kind};
use translate::Version;

use crate::cli::{CliKind, TargetVersion, TranslateArgs};

/// Translates `input` as the flags say. Errors are one line, for exit code 2.
pub fn run(args: &TranslateArgs, input: &[u8]) -> Result<Vec<u8>, String> {
    let to = match args.to {
        TargetVersion::V10 => Version::V10,
        TargetVersion::V03 => Version::V03,
    };
    let kind = match args.kind {
        CliKind::Request => Kind::Request,
        CliKind::Response => Kind::Response,
        CliKind::Event => Kind::Event,
        CliKind::Card => Kind::Card,
        CliKind::PushBody => Kind::PushBody,
    };
    document::translate(kind, to, args.method.as_deref(), input).map_err(|e| {
        format!(
            "cannot translate {} to A2A {to}: {e} (JSON-RPC code {})",
            kind.name(),
            e.jsonrpc_code()
        )
    })
}

/// Runs the subcommand on the process's stdin/stdout; returns the exit code.
pub fn main(args: &TranslateArgs) -> i32 {
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
