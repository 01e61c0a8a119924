use clap::Parser;
use proxy::cli::{Cli, Command};

fn main() {
    let cli = Cli::parse();
    let code = match &cli.command {
        Command::Serve(args) => proxy::serve_cmd::main(args),
        Command::Config(cmd) => proxy::config_cmd::main(cmd),
        Command::CheckUpstream(args) => proxy::check_cmd::main(args),
        Command::Demo(args) => proxy::demo::main(args),
        Command::Translate(args) => proxy::translate_cmd::main(args),
    };
    std::process::exit(code);
}
