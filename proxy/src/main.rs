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
    // No transparent huge pages for this process: mimalloc reserves its
    // arenas aligned to 2 MiB, and where the kernel backs such memory with
    // huge pages whenever it can (THP "always", the default of many
    // distributions) a few small live objects keep whole 2 MiB pages
    // resident: 76 KiB per open stream against 62 without (1,000 streams,
    // bench/RESULTS.md, "#38"). Set before the proxy allocates anything of
    // its own; the flag covers the process's mappings, earlier ones too.
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_THP_DISABLE reads no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
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
