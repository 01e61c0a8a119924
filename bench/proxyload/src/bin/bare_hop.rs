//! `bare_hop LISTEN UPSTREAM`: pingora's HTTP proxy with no hook but the
//! upstream's address, one thread, pingora's default buffers: the floor
//! under the proxy's passthrough hop in `proxyload --hop` (what pingora
//! itself costs per request, next to what the proxy adds).

use std::time::Duration;

use async_trait::async_trait;
use pingora::prelude::HttpPeer;
use pingora::proxy::{ProxyHttp, Session};
use pingora::server::configuration::ServerConf;
use pingora::server::Server;

struct Bare {
    upstream: String,
}

#[async_trait]
impl ProxyHttp for Bare {
    type CTX = ();

    fn new_ctx(&self) {}

    async fn upstream_peer(
        &self,
        _session: &mut Session,
        _ctx: &mut (),
    ) -> pingora::Result<Box<HttpPeer>> {
        let mut peer = HttpPeer::new(self.upstream.as_str(), false, String::new());
        peer.options.idle_timeout = Some(Duration::from_secs(60));
        Ok(Box::new(peer))
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(listen), Some(upstream)) = (args.next(), args.next()) else {
        eprintln!("usage: bare_hop LISTEN UPSTREAM (both host:port on 127.0.0.1)");
        std::process::exit(2);
    };
    let conf = ServerConf {
        threads: 1,
        ..ServerConf::default()
    };
    let mut server = Server::new_with_opt_and_conf(None, conf);
    server.bootstrap();
    let mut svc = pingora::proxy::http_proxy_service(&server.configuration, Bare { upstream });
    svc.add_tcp(&listen);
    server.add_service(svc);
    server.run_forever();
}
