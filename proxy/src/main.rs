use clap::Parser;
use proxy::cli::{Cli, Command};

fn main() {
    let cli = Cli::parse();
    let code = match &cli.command {
        Command::Translate(args) => proxy::translate_cmd::main(args),
    };
    std::process::exit(code);
}
