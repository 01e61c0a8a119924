//! `a2a-compat-proxy gen`: generated, valid A2A wire documents as JSON
//! Lines, one per line, drawn from the `translate` crate's own proptest
//! strategies (`translate::strategy::wire`): the inputs an SDK author
//! feeds to their own v0.3 ⇄ v1.0 converter, then to `roundtrip`.

use std::io::Write;

use translate::method::Method;
use translate::strategy::wire::{Doc, Domain, Generator};
use translate::Version;

use crate::cli::TargetVersion;

/// Flags of `gen`.
#[derive(Debug, Clone, clap::Args)]
pub struct GenArgs {
    /// What to generate.
    #[arg(long, value_enum)]
    pub kind: GenKind,
    /// The wire version of the documents.
    #[arg(long, value_enum)]
    pub version: TargetVersion,
    /// How many documents.
    #[arg(long, default_value_t = 100)]
    pub count: u64,
    /// The seed: the same seed gives the same documents (stable within a
    /// minor release).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// `lossless`: documents whose round trip through the other version is
    /// exact; `full`: everything the version's wire allows, the inputs of
    /// the declared lossy mappings (docs/mapping.md) included.
    #[arg(long, value_enum, default_value = "lossless")]
    pub domain: GenDomain,
    /// Requests: the method (in either version's spelling; default: any
    /// method of the version). Responses: the method answered (required).
    /// Events: the streaming method (default SendStreamingMessage).
    #[arg(long)]
    pub method: Option<String>,
    /// The largest document, in bytes (compact JSON).
    #[arg(long, default_value_t = 65536)]
    pub max_bytes: usize,
    /// Keep unknown members (`x-…`) in v0.3 documents (the v0.3 schema
    /// allows them; v1.0 documents never have them: ProtoJSON readers
    /// refuse unknown fields).
    #[arg(long)]
    pub extras: bool,
}

/// `--kind` of `gen`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum GenKind {
    Task,
    Message,
    Card,
    Request,
    Response,
    Event,
    PushBody,
    PushConfig,
}

/// `--domain` of `gen`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum GenDomain {
    Lossless,
    Full,
}

fn doc(k: GenKind) -> Doc {
    match k {
        GenKind::Task => Doc::Task,
        GenKind::Message => Doc::Message,
        GenKind::Card => Doc::Card,
        GenKind::Request => Doc::Request,
        GenKind::Response => Doc::Response,
        GenKind::Event => Doc::Event,
        GenKind::PushBody => Doc::PushBody,
        GenKind::PushConfig => Doc::PushConfig,
    }
}

/// The generator the flags describe; `Err`: a usage error.
pub fn generator(args: &GenArgs) -> Result<Generator, String> {
    let version = match args.version {
        TargetVersion::V03 => Version::V03,
        TargetVersion::V10 => Version::V10,
    };
    let domain = match args.domain {
        GenDomain::Lossless => Domain::Lossless,
        GenDomain::Full => Domain::Full,
    };
    let method = match &args.method {
        None => None,
        Some(name) => Some(
            Method::from_name(name)
                .map(|(m, _)| m)
                .ok_or_else(|| format!("no A2A method is named {name:?}"))?,
        ),
    };
    if args.max_bytes < 2 {
        return Err("--max-bytes must be at least 2".into());
    }
    Ok(Generator::new(
        doc(args.kind),
        version,
        domain,
        method,
        args.seed,
        args.max_bytes,
    )?
    .with_extras(args.extras))
}

/// Runs the subcommand, writing to stdout; returns the exit code (0; 2 on
/// a usage error or when no document fits `--max-bytes`).
pub fn main(args: &GenArgs) -> i32 {
    let mut g = match generator(args) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    for _ in 0..args.count {
        let line = match g.next_document() {
            Ok(line) => line,
            Err(e) => {
                eprintln!("error: {e}");
                return 2;
            }
        };
        if out
            .write_all(&line)
            .and_then(|()| out.write_all(b"\n"))
            .is_err()
        {
            // The reader went away (`| head`): nothing more to do.
            return 0;
        }
    }
    if out.flush().is_err() {
        return 0;
    }
    0
}
