//! `--hop`: one reverse-proxy hop measured side by side (bench/hop.sh). The
//! same fake v0.3 agent is reached directly, through nginx (one worker,
//! keep-alive upstream pool), and through the proxy passing through (v0.3
//! client) and translating (v1.0 client), with the same closed-loop client;
//! the paths take turns round by round and medians are printed, with each
//! hop's CPU per request (utime + stime of its processes) and the ratios to
//! nginx. `--bare-bin`: also pingora's proxy with no hooks (`bare_hop`), the
//! floor under the proxy's own hop. `--strace`: a separate short run per hop
//! under `strace -c -f`, for system calls per request.

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::{client, cpu_secs, free_addr, median, payload, start_proxy, upstream, Args, Proxy};

/// nginx started on a config of its own in a temporary directory; stopped
/// (and the directory removed) on drop.
struct Nginx {
    child: Child,
    addr: SocketAddr,
    dir: PathBuf,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM lets the master stop its worker; SIGKILL would leave it.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Anything nginx complained of, before its directory goes.
        let log = std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default();
        let complaints: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("[error]") || l.contains("[crit]") || l.contains("[alert]"))
            .collect();
        if !complaints.is_empty() {
            eprintln!("nginx logged {} errors, the last:", complaints.len());
            for l in complaints.iter().rev().take(3) {
                eprintln!("  {l}");
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// nginx's config: one worker, access log off, `keepalive 32` to the agent,
/// no cap on requests per connection on either side (nginx's default of
/// 1,000 closes the load client's connections mid-run; the proxy has none),
/// every path under `dir`, listening on `addr` only.
fn nginx_conf(dir: &Path, addr: SocketAddr, agent: SocketAddr) -> String {
    let d = dir.display();
    format!(
        "worker_processes 1;
daemon off;
master_process on;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    upstream agent {{
        server {agent};
        keepalive 32;
        keepalive_requests 1000000;
    }}
    server {{
        listen {addr};
        keepalive_requests 1000000;
        location / {{
            proxy_pass http://agent;
            proxy_http_version 1.1;
            proxy_set_header Connection \"\";
        }}
    }}
}}
"
    )
}

fn start_nginx(bin: &Path, agent: SocketAddr) -> Result<Nginx, String> {
    let dir = std::env::temp_dir().join(format!("proxyload-nginx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let addr = free_addr().map_err(|e| e.to_string())?;
    let conf = dir.join("nginx.conf");
    std::fs::write(&conf, nginx_conf(&dir, addr, agent))
        .map_err(|e| format!("cannot write {}: {e}", conf.display()))?;
    let child = Command::new(bin)
        .arg("-p")
        .arg(&dir)
        .arg("-c")
        .arg(&conf)
        .arg("-e")
        .arg(dir.join("error.log"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
    let mut nginx = Nginx { child, addr, dir };
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if let Ok(Some(status)) = nginx.child.try_wait() {
            let log = std::fs::read_to_string(nginx.dir.join("error.log")).unwrap_or_default();
            return Err(format!("nginx exited ({status}): {log}"));
        }
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(nginx);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(format!("nginx did not listen on {addr}"))
}

/// `bare_hop` (pingora's proxy with no hooks) in front of `agent`.
fn start_bare(bin: &Path, agent: SocketAddr) -> Result<Proxy, String> {
    let addr = free_addr().map_err(|e| e.to_string())?;
    let child = Command::new(bin)
        .args([addr.to_string(), agent.to_string()])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
    Proxy { child, addr }.listening("bare_hop")
}

/// `pid` and its direct children (nginx's worker under its master).
fn family(pid: u32) -> Vec<u32> {
    let mut out = vec![pid];
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(child) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // Field 4 (ppid), the second after the command name's ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, r)| r.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(pid) {
            out.push(child);
        }
    }
    out
}

/// CPU seconds of a set of processes.
fn cpu_of(pids: &[u32]) -> f64 {
    pids.iter().map(|&p| cpu_secs(p)).sum()
}

/// One measured path.
struct Path1 {
    name: &'static str,
    addr: SocketAddr,
    client_v10: bool,
    /// The hop's processes (empty: direct).
    pids: Vec<u32>,
}

#[derive(Default)]
struct Series {
    rps: Vec<f64>,
    p50: Vec<f64>,
    p99: Vec<f64>,
    cpu_us: Vec<f64>,
    errors: usize,
}

/// What `strace -c -f` counted over a short run of one hop: requests
/// answered, system calls in all, the most frequent calls by name.
type Syscalls = (usize, u64, Vec<(String, u64)>);

/// System calls of one hop over a short run, from `strace -c -f`.
fn strace_run(
    rt: &tokio::runtime::Runtime,
    p: &Path1,
    conns: usize,
    secs: Duration,
    dir: &Path,
) -> Result<Syscalls, String> {
    let out = dir.join(format!("strace-{}.txt", p.pids[0]));
    let mut cmd = Command::new("strace");
    cmd.args(["-c", "-f", "-o"]).arg(&out);
    // Every process of the hop, its threads with it (`-f` follows new ones).
    for pid in &p.pids {
        cmd.args(["-p", &pid.to_string()]);
    }
    let mut strace = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start strace: {e}"))?;
    std::thread::sleep(Duration::from_millis(500));
    let req = client::request(
        p.client_v10,
        &payload::send_request(p.client_v10, false),
        None,
    );
    let r = rt.block_on(client::unary(p.addr, req, conns, secs));
    // SIGINT: strace detaches and writes its summary.
    let _ = Command::new("kill")
        .args(["-INT", &strace.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = strace.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = strace.kill();
    let _ = strace.wait();
    let text = std::fs::read_to_string(&out).map_err(|e| format!("strace summary: {e}"))?;
    let _ = std::fs::remove_file(&out);
    let mut total = 0;
    let mut calls = Vec::new();
    for line in text.lines() {
        let t: Vec<&str> = line.split_whitespace().collect();
        // % time, seconds, usecs/call, calls, [errors], syscall
        if t.len() < 5 || t[0].starts_with('%') || t[0].starts_with('-') {
            continue;
        }
        let Ok(n) = t[3].parse::<u64>() else {
            continue;
        };
        let name = t[t.len() - 1];
        if name == "total" {
            total = n;
        } else {
            calls.push((name.to_string(), n));
        }
    }
    calls.sort_by_key(|c| std::cmp::Reverse(c.1));
    calls.truncate(6);
    Ok((r.ok, total, calls))
}

pub fn run(args: &Args) -> Result<(), String> {
    let nginx_bin = args
        .nginx_bin
        .clone()
        .ok_or("--hop needs --nginx-bin (see bench/hop.sh)")?;
    let agents = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("agents")
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let agent = agents
        .block_on(upstream::spawn(false))
        .map_err(|e| e.to_string())?;
    let nginx = start_nginx(&nginx_bin, agent)?;
    let url = crate::AgentUrl {
        url: format!("http://{agent}"),
        ca_file: None,
    };
    let proxy = start_proxy(args, &url, "0.3")?;
    let bare = match &args.bare_bin {
        Some(bin) => Some(start_bare(bin, agent)?),
        None => None,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("client")
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    // Warm-up (connections, caches, allocator); nginx's worker is up after.
    for (addr, v10) in [
        (agent, false),
        (nginx.addr, false),
        (proxy.addr, false),
        (proxy.addr, true),
    ] {
        let req = client::request(v10, &payload::send_request(v10, false), None);
        rt.block_on(client::unary(addr, req, 2, Duration::from_millis(500)));
    }
    let nginx_pids = family(nginx.child.id());
    let proxy_pid = proxy.child.id();
    let mut paths = vec![
        Path1 {
            name: "direct      v0.3 -> agent",
            addr: agent,
            client_v10: false,
            pids: Vec::new(),
        },
        Path1 {
            name: "nginx       v0.3 -> nginx -> agent",
            addr: nginx.addr,
            client_v10: false,
            pids: nginx_pids.clone(),
        },
        Path1 {
            name: "passthrough v0.3 -> proxy -> agent",
            addr: proxy.addr,
            client_v10: false,
            pids: vec![proxy_pid],
        },
        Path1 {
            name: "translating v1.0 -> proxy -> agent",
            addr: proxy.addr,
            client_v10: true,
            pids: vec![proxy_pid],
        },
    ];
    if let Some(b) = &bare {
        paths.push(Path1 {
            name: "bare pingora v0.3 -> pingora -> agent",
            addr: b.addr,
            client_v10: false,
            pids: vec![b.child.id()],
        });
    }
    let req = |p: &Path1| {
        client::request(
            p.client_v10,
            &payload::send_request(p.client_v10, false),
            None,
        )
    };
    let secs = Duration::from_secs(args.seconds);
    println!(
        "one hop (loopback; {} rounds x {} s per path, interleaved; c={}; nginx 1 worker + keepalive 32; proxy threads {})",
        args.rounds, args.seconds, args.conns, args.proxy_threads
    );
    println!(
        "payload: SendMessage -> Task, {} B request, {} B answer (v0.3)",
        payload::send_request(false, false).len(),
        payload::task_response(false).len()
    );
    let mut s: Vec<Series> = paths.iter().map(|_| Series::default()).collect();
    for round in 0..args.rounds {
        for k in 0..paths.len() {
            let i = (k + round) % paths.len();
            let p = &paths[i];
            if args.only.as_deref().is_some_and(|o| !p.name.contains(o)) {
                continue;
            }
            let cpu0 = cpu_of(&p.pids);
            let r = rt.block_on(client::unary(p.addr, req(p), args.conns, secs));
            if !p.pids.is_empty() {
                s[i].cpu_us
                    .push((cpu_of(&p.pids) - cpu0) * 1e6 / r.ok.max(1) as f64);
            }
            s[i].rps.push(r.rate());
            s[i].p50.push(r.quantile_ms(0.50));
            s[i].p99.push(r.quantile_ms(0.99));
            s[i].errors += r.errors;
        }
    }
    let med = |v: &Vec<f64>| median(v.clone());
    println!();
    println!(
        "{:<36} {:>9} {:>8} {:>8} {:>11} {:>7}",
        "unary SendMessage", "req/s", "p50 ms", "p99 ms", "CPU us/req", "errors"
    );
    for (i, p) in paths.iter().enumerate() {
        println!(
            "{:<36} {:>9.0} {:>8.3} {:>8.3} {:>11.1} {:>7}",
            p.name,
            med(&s[i].rps),
            med(&s[i].p50),
            med(&s[i].p99),
            med(&s[i].cpu_us),
            s[i].errors
        );
    }
    // Ratios per round (the paths of a round ran next to each other).
    let ratio = |a: &Vec<f64>, b: &Vec<f64>| median(a.iter().zip(b).map(|(x, y)| x / y).collect());
    // Bare pingora (no hooks) is the floor the hop is measured against;
    // nginx is a reference row.
    if bare.is_some() {
        println!();
        println!("ratios to bare pingora (median over rounds)   measured  target");
        println!(
            "passthrough req/s / bare pingora req/s         {:>6.2}   >= 0.97",
            ratio(&s[2].rps, &s[4].rps)
        );
        println!(
            "passthrough CPU/req / bare pingora CPU/req     {:>6.2}   <= 1.05",
            ratio(&s[2].cpu_us, &s[4].cpu_us)
        );
        println!(
            "translating req/s / bare pingora req/s         {:>6.2}",
            ratio(&s[3].rps, &s[4].rps)
        );
        println!(
            "translating req/s / passthrough req/s          {:>6.2}",
            ratio(&s[3].rps, &s[2].rps)
        );
    }
    println!();
    println!("ratios to nginx, a reference (median over rounds)");
    println!(
        "passthrough req/s / nginx req/s                {:>6.2}",
        ratio(&s[2].rps, &s[1].rps)
    );
    println!(
        "passthrough CPU/req / nginx CPU/req            {:>6.2}",
        ratio(&s[2].cpu_us, &s[1].cpu_us)
    );
    println!(
        "translating req/s / nginx req/s                {:>6.2}",
        ratio(&s[3].rps, &s[1].rps)
    );
    println!(
        "translating CPU/req / nginx CPU/req            {:>6.2}",
        ratio(&s[3].cpu_us, &s[1].cpu_us)
    );
    println!(
        "nginx req/s / direct req/s                     {:>6.2}",
        ratio(&s[1].rps, &s[0].rps)
    );
    if bare.is_some() {
        println!(
            "bare pingora req/s / nginx req/s               {:>6.2}",
            ratio(&s[4].rps, &s[1].rps)
        );
        println!(
            "bare pingora CPU/req / nginx CPU/req           {:>6.2}",
            ratio(&s[4].cpu_us, &s[1].cpu_us)
        );
    }

    if args.strace {
        println!();
        println!(
            "system calls per request (strace -c -f, {} s per hop at c={}; strace slows the hop, counts stay)",
            args.strace_seconds, args.conns
        );
        let dir = std::env::temp_dir();
        for p in paths.iter().skip(1) {
            match strace_run(
                &rt,
                p,
                args.conns,
                Duration::from_secs(args.strace_seconds),
                &dir,
            ) {
                Ok((ok, total, calls)) => {
                    let per = |n: u64| n as f64 / ok.max(1) as f64;
                    let top: Vec<String> = calls
                        .iter()
                        .map(|(name, n)| format!("{name} {:.2}", per(*n)))
                        .collect();
                    println!(
                        "{:<36} {:>6.2} per request ({} requests): {}",
                        p.name,
                        per(total),
                        ok,
                        top.join(", ")
                    );
                }
                Err(e) => println!("{:<36} {e}", p.name),
            }
        }
    }
    drop(bare);
    drop(proxy);
    drop(nginx);
    Ok(())
}
