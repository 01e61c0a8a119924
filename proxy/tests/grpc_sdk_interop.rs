//! The real a2a-sdk gRPC clients (v0.3 stub and 1.x `GrpcTransport`) through
//! the proxy's gRPC listener to the real a2a-sdk 0.3 and 1.x agents:
//! and to the real a2a-sdk 1.x gRPC servers of both versions through
//! `upstream.grpc_url`:
//! `tests/sdk/grpc_interop.sh` (it makes its venvs when missing; needs PyPI
//! or a registry mirror the first time). Everything on 127.0.0.1.

use std::process::Command;

#[test]
fn real_sdk_grpc_clients_reach_sdk_agents_and_sdk_grpc_servers_through_the_proxy() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new("timeout")
        .arg("600")
        .arg("bash")
        .arg(root.join("tests/sdk/grpc_interop.sh"))
        .env("A2A_PROXY_BIN", env!("CARGO_BIN_EXE_a2a-compat-proxy"))
        .current_dir(&root)
        .output()
        .expect("run grpc_interop.sh");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "grpc_interop.sh failed:\n{text}");
    // All four agents were reached (the script prints one header per agent).
    assert_eq!(
        text.matches("== gRPC clients -> proxy -> a2a-sdk").count(),
        4,
        "{text}"
    );
    assert_eq!(text.matches("(upstream.grpc_url)").count(), 2, "{text}");
}
