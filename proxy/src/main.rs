use clap::Parser;
use proxy::cli::{Cli, Command};

/// mimalloc instead of the system allocator: each request through the hop
/// allocates and frees many small, short-lived pieces (pingora's header
/// maps, boxes and buffers; JSON values), and mimalloc does that for less
/// CPU than glibc's malloc (about a tenth less per request through the
/// hop), with the same memory per open stream (bench/RESULTS.md, "a faster
/// allocator").
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let cli = Cli::parse();
    let code = match &cli.command {
        Command::Serve(args) => proxy::cli::serve::main(args),
        Command::Config(cmd) => proxy::cli::config::main(cmd),
        Command::CheckUpstream(args) => proxy::cli::check::main(args),
        Command::Demo(args) => proxy::cli::demo::main(args),
        Command::Translate(args) => proxy::cli::translate::main(args),
        Command::Doctor(args) => proxy::cli::doctor::main(args),
        Command::Gen(args) => proxy::cli::gen::main(args),
        Command::Roundtrip(args) => proxy::cli::roundtrip::main(args),
    };
    std::process::exit(code);
}
