//! `proxyload`: the load side of `bench/proxy.sh`. Starts fake v0.3 and
//! v1.0 agents in-process, two proxies (child processes of `--proxy-bin`) in
//! front of them, and measures in one run, with the same client and payload:
//! unary SendMessage → Task throughput and latency direct / passthrough /
//! translated, SSE events per second, and proxy RSS per open stream.
//! Everything binds and targets 127.0.0.1; every phase has a fixed length.

mod client;
mod hop;
mod http;
mod payload;
mod tlsfront;
mod upstream;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;

#[derive(Parser, Debug)]
#[command(about = "Benchmark a2a-compat-proxy on 127.0.0.1 (see bench/proxy.sh)")]
struct Args {
    /// The a2a-compat-proxy binary (a release build).
    #[arg(long)]
    proxy_bin: PathBuf,
    /// Seconds per measured unary run.
    #[arg(long, default_value_t = 3)]
    seconds: u64,
    /// Interleaved rounds (medians are reported).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Concurrent connections of the throughput runs.
    #[arg(long, default_value_t = 16)]
    conns: usize,
    /// Pingora worker threads of each proxy.
    #[arg(long, default_value_t = 1)]
    proxy_threads: usize,
    /// Events per SSE stream in the events/s runs.
    #[arg(long, default_value_t = 200)]
    sse_events: usize,
    /// SSE streams open at once in the events/s runs. With few, a proxy
    /// faster than the load waits for each read; with more, its own work
    /// per event bounds the rate.
    #[arg(long, default_value_t = 4)]
    sse_streams: usize,
    /// Open streams for the RSS measurement.
    #[arg(long, default_value_t = 1000)]
    streams: usize,
    /// File the proxies' logs are appended to (pingora logs a line for
    /// each held stream the bench closes).
    #[arg(long, default_value = "target/bench-proxy.log")]
    proxy_log: PathBuf,
    /// Profiling aid: run only the unary throughput of the paths whose name
    /// contains this text (e.g. "translated  v1.0"), print req/s and proxy
    /// CPU us/req per round, and skip everything else; `rss`: only the RSS
    /// measurement; `sse`: only the SSE events/s runs.
    #[arg(long)]
    only: Option<String>,
    /// One hop side by side instead (bench/hop.sh): direct, nginx, the
    /// proxy passing through and translating, in front of one v0.3 agent.
    #[arg(long)]
    hop: bool,
    /// The nginx binary of `--hop`.
    #[arg(long)]
    nginx_bin: Option<PathBuf>,
    /// `--hop`: also measure this `bare_hop` binary (pingora with no hooks).
    #[arg(long)]
    bare_bin: Option<PathBuf>,
    /// `--hop`: also count each hop's system calls per request under
    /// `strace -c -f`, in a separate run.
    #[arg(long)]
    strace: bool,
    /// Seconds of each `--strace` run.
    #[arg(long, default_value_t = 2)]
    strace_seconds: u64,
    /// The agents behind a TLS front: the proxies reach them as
    /// `https://` agents (the direct rows stay plaintext).
    #[arg(long)]
    https: bool,
}

/// Where a proxy reaches an agent: its URL, and the CA file to trust.
#[derive(Clone)]
struct AgentUrl {
    url: String,
    ca_file: Option<PathBuf>,
}

/// A proxy child process, killed on drop.
struct Proxy {
    child: Child,
    addr: SocketAddr,
}

impl Proxy {
    /// The proxy once it accepts connections (within 15 s); `what` names
    /// it in the error.
    fn listening(self, what: &str) -> Result<Proxy, String> {
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)).is_ok() {
                return Ok(self);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!("{what} did not listen on {}", self.addr))
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_addr() -> std::io::Result<SocketAddr> {
    TcpListener::bind("127.0.0.1:0")?.local_addr()
}

fn start_proxy(args: &Args, upstream: &AgentUrl, version: &str) -> Result<Proxy, String> {
    let addr = free_addr().map_err(|e| e.to_string())?;
    if let Some(dir) = args
        .proxy_log
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
    {
        let _ = std::fs::create_dir_all(dir);
    }
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&args.proxy_log)
        .map_err(|e| format!("cannot open {}: {e}", args.proxy_log.display()))?;
    let mut cmd = Command::new(&args.proxy_bin);
    cmd.args(["serve", "--no-push", "--listen", &addr.to_string()]);
    if let Some(ca) = &upstream.ca_file {
        let file = ca.with_extension("toml");
        std::fs::write(
            &file,
            format!("[upstream]\nca_file = {:?}\n", ca.display().to_string()),
        )
        .map_err(|e| e.to_string())?;
        cmd.arg("--config").arg(&file);
    }
    let child = cmd
        .args(["--upstream", &upstream.url])
        .args(["--upstream-version", version])
        .args(["--threads", &args.proxy_threads.to_string()])
        .args(["--max-connections", &(args.streams * 2 + 64).to_string()])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(log))
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", args.proxy_bin.display()))?;
    Proxy { child, addr }.listening("the proxy")
}

/// CPU time (user + system) a process has used so far, in seconds.
fn cpu_secs(pid: u32) -> f64 {
    let (user, system) = cpu_split(pid);
    user + system
}

/// User and system CPU time a process has used so far, in seconds.
fn cpu_split(pid: u32) -> (f64, f64) {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return (f64::NAN, f64::NAN);
    };
    // Fields after the command name (which may hold spaces) closed by ')'.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        f.get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    // utime and stime are fields 14 and 15 of the whole line (11, 12 here).
    (ticks(11) / 100.0, ticks(12) / 100.0)
}

/// Resident set size of a process, KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.retain(|x| x.is_finite());
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

/// One measured path: who the client is and where it sends.
struct Mode {
    name: &'static str,
    addr: SocketAddr,
    client_v10: bool,
    /// The proxy on the path, if any.
    proxy_pid: Option<u32>,
}

#[derive(Default)]
struct Samples {
    rps: Vec<f64>,
    /// Requests per upstream connection accepted during the runs.
    per_conn: Vec<f64>,
    /// Proxy CPU microseconds per request.
    cpu_us: Vec<f64>,
    p50: Vec<f64>,
    p99: Vec<f64>,
    errors: usize,
}

fn main() {
    let args = Args::parse();
    let result = if args.hop {
        hop::run(&args)
    } else {
        run(&args)
    };
    if let Err(e) = result {
        eprintln!("proxyload: {e}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> Result<(), String> {
    // The agents get their own thread so the client's work does not slow them.
    let agents = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("agents")
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let up03 = agents
        .block_on(upstream::spawn(false))
        .map_err(|e| e.to_string())?;
    let up10 = agents
        .block_on(upstream::spawn(true))
        .map_err(|e| e.to_string())?;
    let (url03, url10) = if args.https {
        let dir = std::env::temp_dir();
        let (a03, ca03) = agents.block_on(tlsfront::spawn(up03, &dir))?;
        let (a10, ca10) = agents.block_on(tlsfront::spawn(up10, &dir))?;
        println!("agents behind TLS fronts: the proxies reach https://{a03} and https://{a10}");
        (
            AgentUrl {
                url: format!("https://{a03}"),
                ca_file: Some(ca03),
            },
            AgentUrl {
                url: format!("https://{a10}"),
                ca_file: Some(ca10),
            },
        )
    } else {
        (
            AgentUrl {
                url: format!("http://{up03}"),
                ca_file: None,
            },
            AgentUrl {
                url: format!("http://{up10}"),
                ca_file: None,
            },
        )
    };
    let p03 = start_proxy(args, &url03, "0.3")?;
    let p10 = start_proxy(args, &url10, "1.0")?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("client")
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;

    let modes = [
        Mode {
            name: "direct      v0.3 -> v0.3 agent",
            addr: up03,
            client_v10: false,
            proxy_pid: None,
        },
        Mode {
            name: "passthrough v0.3 -> proxy -> v0.3",
            addr: p03.addr,
            client_v10: false,
            proxy_pid: Some(p03.child.id()),
        },
        Mode {
            name: "translated  v1.0 -> proxy -> v0.3",
            addr: p03.addr,
            client_v10: true,
            proxy_pid: Some(p03.child.id()),
        },
        Mode {
            name: "direct      v1.0 -> v1.0 agent",
            addr: up10,
            client_v10: true,
            proxy_pid: None,
        },
        Mode {
            name: "passthrough v1.0 -> proxy -> v1.0",
            addr: p10.addr,
            client_v10: true,
            proxy_pid: Some(p10.child.id()),
        },
        Mode {
            name: "translated  v0.3 -> proxy -> v1.0",
            addr: p10.addr,
            client_v10: false,
            proxy_pid: Some(p10.child.id()),
        },
    ];
    let req = |m: &Mode, streaming: bool, mode: Option<&str>| {
        client::request(
            m.client_v10,
            &payload::send_request(m.client_v10, streaming),
            mode,
        )
    };
    let secs = Duration::from_secs(args.seconds);

    println!(
        "a2a-compat-proxy benchmark (loopback; {} rounds x {} s per path, interleaved; proxy threads {})",
        args.rounds, args.seconds, args.proxy_threads
    );
    println!(
        "payload: SendMessage -> Task, {} B (v0.3 answer)",
        payload::task_response(false).len()
    );

    let rss_only = args.only.as_deref() == Some("rss");
    let sse_only = args.only.as_deref() == Some("sse");
    // Warm-up: connections, caches, allocator.
    for m in &modes {
        rt.block_on(client::unary(
            m.addr,
            req(m, false, None),
            2,
            Duration::from_millis(500),
        ));
    }

    if let Some(only) = args.only.as_deref().filter(|o| *o != "rss" && *o != "sse") {
        for round in 0..args.rounds {
            for m in modes.iter().filter(|m| m.name.contains(only)) {
                let cpu0 = m.proxy_pid.map(cpu_split);
                let r = rt.block_on(client::unary(m.addr, req(m, false, None), args.conns, secs));
                let per_req = |s: f64| s * 1e6 / r.ok.max(1) as f64;
                let (user, system) = match (m.proxy_pid, cpu0) {
                    (Some(pid), Some((u0, s0))) => {
                        let (u, s) = cpu_split(pid);
                        (per_req(u - u0), per_req(s - s0))
                    }
                    _ => (f64::NAN, f64::NAN),
                };
                // User time is what the proxy's own code costs; system time
                // also moves with how often the load and agent sleep.
                println!(
                    "round {round} {:<36} {:>8.0} req/s  p99 {:>7.3} ms  errors {}  proxy CPU {:>6.1} us/req (user {:.1}, system {:.1})",
                    m.name,
                    r.rate(),
                    r.quantile_ms(0.99),
                    r.errors,
                    user + system,
                    user,
                    system
                );
            }
        }
        return Ok(());
    }

    if !rss_only && !sse_only {
        // Throughput at `conns` concurrent connections, and latency at 1.
        let mut load: Vec<Samples> = modes.iter().map(|_| Samples::default()).collect();
        let mut lat: Vec<Samples> = modes.iter().map(|_| Samples::default()).collect();
        for round in 0..args.rounds {
            for k in 0..modes.len() {
                let i = (k + round) % modes.len();
                let m = &modes[i];
                let accepted = upstream::ACCEPTED.load(std::sync::atomic::Ordering::Relaxed);
                let cpu0 = m.proxy_pid.map(cpu_secs);
                let r = rt.block_on(client::unary(m.addr, req(m, false, None), args.conns, secs));
                let opened =
                    upstream::ACCEPTED.load(std::sync::atomic::Ordering::Relaxed) - accepted;
                load[i].per_conn.push(r.ok as f64 / opened.max(1) as f64);
                if let (Some(pid), Some(c0)) = (m.proxy_pid, cpu0) {
                    load[i]
                        .cpu_us
                        .push((cpu_secs(pid) - c0) * 1e6 / r.ok.max(1) as f64);
                }
                load[i].rps.push(r.rate());
                load[i].p50.push(r.quantile_ms(0.50));
                load[i].p99.push(r.quantile_ms(0.99));
                load[i].errors += r.errors;
                let r = rt.block_on(client::unary(m.addr, req(m, false, None), 1, secs / 2));
                lat[i].rps.push(r.rate());
                lat[i].p50.push(r.quantile_ms(0.50));
                lat[i].p99.push(r.quantile_ms(0.99));
                lat[i].errors += r.errors;
            }
        }
        println!();
        println!(
            "{:<36} {:>10} {:>9} {:>9} | {:>9} {:>9} {:>7} {:>10} {:>16}",
            "unary SendMessage",
            "req/s",
            "p50 ms",
            "p99 ms",
            "c=1 p50",
            "c=1 p99",
            "errors",
            "req/upconn",
            "proxy CPU us/req"
        );
        let med = |s: &Vec<f64>| median(s.clone());
        for (i, m) in modes.iter().enumerate() {
            println!(
                "{:<36} {:>10.0} {:>9.3} {:>9.3} | {:>9.3} {:>9.3} {:>7} {:>10.0} {:>16.1}",
                m.name,
                med(&load[i].rps),
                med(&load[i].p50),
                med(&load[i].p99),
                med(&lat[i].p50),
                med(&lat[i].p99),
                load[i].errors + lat[i].errors,
                med(&load[i].per_conn),
                med(&load[i].cpu_us)
            );
        }
        // Ratios per round, then their median (the rounds are interleaved, so
        // each ratio compares runs measured next to each other).
        let ratio = |a: usize, b: usize| {
            median(
                load[a]
                    .rps
                    .iter()
                    .zip(&load[b].rps)
                    .map(|(x, y)| x / y)
                    .collect(),
            )
        };
        let added_p99 = |a: usize, b: usize| {
            median(
                lat[a]
                    .p99
                    .iter()
                    .zip(&lat[b].p99)
                    .map(|(x, y)| x - y)
                    .collect(),
            )
        };
        println!();
        println!("ratios (median over rounds)                       measured  target");
        println!(
            "translated/passthrough throughput, v1.0 client -> v0.3 agent  {:>6.2}   >= 0.95",
            ratio(2, 1)
        );
        println!(
            "translated/passthrough throughput, v0.3 client -> v1.0 agent  {:>6.2}   >= 0.95",
            ratio(5, 4)
        );
        println!(
            "passthrough/direct throughput, v0.3                           {:>6.2}",
            ratio(1, 0)
        );
        println!(
            "passthrough/direct throughput, v1.0                           {:>6.2}",
            ratio(4, 3)
        );
        println!(
            "added p99 of translation at c=1, v1.0 -> v0.3 (ms)            {:>6.3}   <= 0.300",
            added_p99(2, 1)
        );
        println!(
            "added p99 of translation at c=1, v0.3 -> v1.0 (ms)            {:>6.3}   <= 0.300",
            added_p99(5, 4)
        );
    }

    if !rss_only {
        // SSE: events per second, `streams` of `sse_events` status updates.
        let events_mode = format!("events:{}", args.sse_events);
        let sse_modes = [1usize, 2, 4, 5];
        let mut sse: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
        let mut sse_errors = 0;
        for round in 0..args.rounds {
            for k in 0..sse_modes.len() {
                let i = sse_modes[(k + round) % sse_modes.len()];
                let m = &modes[i];
                let (rate, errors) = rt.block_on(client::sse(
                    m.addr,
                    req(m, true, Some(&events_mode)),
                    args.sse_streams,
                    secs,
                ));
                if sse_only {
                    println!("round {round} {:<36} {:>10.0} events/s", m.name, rate);
                }
                sse[i].push(rate);
                sse_errors += errors;
            }
        }
        let sse_ratio =
            |a: usize, b: usize| median(sse[a].iter().zip(&sse[b]).map(|(x, y)| x / y).collect());
        println!();
        println!(
            "SSE ({} status updates per stream, {} streams at once)  events/s",
            args.sse_events, args.sse_streams
        );
        for &i in &sse_modes {
            println!("{:<36} {:>10.0}", modes[i].name, median(sse[i].clone()));
        }
        println!(
            "translated/passthrough events/s, v1.0 client -> v0.3 agent     {:>6.2}   >= 0.95",
            sse_ratio(2, 1)
        );
        println!(
            "translated/passthrough events/s, v0.3 client -> v1.0 agent     {:>6.2}   >= 0.95",
            sse_ratio(5, 4)
        );
        if sse_errors > 0 {
            println!("SSE errors: {sse_errors}");
        }
    }
    if sse_only {
        return Ok(());
    }

    // RSS per open stream, through the translating and the passing path.
    println!();
    println!(
        "proxy RSS with {} open streams (first event received, then idle)",
        args.streams
    );
    // Each path in a proxy process of its own, started for it: memory freed
    // by an earlier phase would otherwise be reused and hide the cost.
    for &i in &[2usize, 1] {
        let m = &modes[i];
        let fresh = start_proxy(args, &url03, "0.3")?;
        let pid = fresh.child.id();
        // The same warm-up as the measured proxies had.
        rt.block_on(client::unary(
            fresh.addr,
            req(m, false, None),
            2,
            Duration::from_millis(500),
        ));
        std::thread::sleep(Duration::from_millis(500));
        let before = rss_kib(pid).ok_or("cannot read the proxy's RSS")?;
        let (held, errors) = rt.block_on(client::hold(
            fresh.addr,
            req(m, true, Some("hold")),
            args.streams,
        ));
        std::thread::sleep(Duration::from_millis(500));
        let during = rss_kib(pid).ok_or("cannot read the proxy's RSS")?;
        let per = (during.saturating_sub(before)) as f64 / held.len().max(1) as f64;
        println!(
            "{:<36} open {:>5} (failed {:>3})  RSS {:>7} -> {:>7} KiB  = {:>6.1} KiB per stream   bound <= 80",
            m.name,
            held.len(),
            errors,
            before,
            during,
            per
        );
        drop(held);
        // Give the proxy a moment to close the upstream sides.
        std::thread::sleep(Duration::from_millis(500));
        drop(fresh);
    }
    drop(p03);
    drop(p10);
    Ok(())
}
