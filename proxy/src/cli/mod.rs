//! Raw command-line input (clap). Resolution into validated settings lives
//! next to the code that uses it; this module only describes the flags.

use clap::{Parser, Subcommand, ValueEnum};

pub mod check;
pub mod config;
pub mod demo;
pub mod doctor;
pub mod gen;
pub mod roundtrip;
pub mod serve;
pub mod translate;

/// a2a-compat-proxy: lets A2A v0.3 and v1.0 clients and agents talk to each other.
#[derive(Debug, Parser)]
#[command(name = "a2a-compat-proxy", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the proxy in front of an A2A agent.
    #[command(after_help = crate::cli::serve::CONFIG_DOCS)]
    Serve(crate::cli::serve::ServeArgs),
    /// Check a config file, or print an example one.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Fetch the upstream's agent card and report what the proxy would serve.
    CheckUpstream(crate::cli::serve::ServeArgs),
    /// Run the proxy in front of a built-in A2A v0.3 echo agent.
    Demo(crate::cli::demo::DemoArgs),
    /// Translate one A2A JSON document (or, with --jsonl, one per line) from
    /// stdin to stdout.
    Translate(TranslateArgs),
    /// Check a running deployment from outside, as its clients see it.
    Doctor(crate::cli::doctor::DoctorArgs),
    /// Write generated, valid A2A documents as JSON Lines.
    Gen(crate::cli::gen::GenArgs),
    /// Translate each JSON line to the other version and back, reporting
    /// every difference (optionally against an external converter).
    Roundtrip(crate::cli::roundtrip::RoundtripArgs),
}

/// `config` subcommands.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Validate a config file (TLS files included) and print the resolved
    /// settings, secrets left out. Exit 0 when valid, 2 when not.
    Check {
        /// The TOML file.
        file: std::path::PathBuf,
    },
    /// Print a commented example config file (`config check` accepts it).
    Example,
}

/// Flags of `translate`.
#[derive(Debug, clap::Args)]
pub struct TranslateArgs {
    /// The wire version to produce; the input is read as the other one.
    #[arg(long, value_enum)]
    pub to: TargetVersion,
    /// What the document is.
    #[arg(long, value_enum)]
    pub kind: CliKind,
    /// For `response` and `event`: the method of the request, named in the
    /// source version (e.g. `message/send` when translating to 1.0).
    #[arg(long)]
    pub method: Option<String>,
    /// JSON Lines: one document per input line, one result per output line
    /// in the same order (the translated document, or
    /// `{"error":{"code":…,"message":…}}` for that line); exit 1 when any
    /// line failed.
    #[arg(long)]
    pub jsonl: bool,
}

/// `--to` values.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TargetVersion {
    #[value(name = "1.0")]
    V10,
    #[value(name = "0.3")]
    V03,
}

/// `--kind` values.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CliKind {
    /// A JSON-RPC request envelope (or bare params when `--method` is given).
    Request,
    /// A JSON-RPC response envelope for `--method` (or a bare result).
    Response,
    /// One streaming event: a JSON-RPC response envelope or a bare event.
    Event,
    /// An agent card.
    Card,
    /// A push-notification webhook body.
    PushBody,
    /// A bare Task.
    Task,
    /// A bare Message.
    Message,
    /// A `TaskPushNotificationConfig`.
    PushConfig,
}
