//! `a2a-compat-proxy check-upstream`: fetches the upstream's agent card the
//! way `serve` would and reports what the proxy makes of it, without starting
//! the proxy. Exit 0 when the card was fetched and both client versions can be
//! served, 1 when not, 2 for a bad configuration.

use serde_json::{json, Value};
use translate::Version;

use crate::app::App;
use crate::card::translate_card;
use crate::serve_cmd::ServeArgs;

/// The report printed for one upstream (also used by tests).
pub async fn report(app: &App) -> (bool, Value) {
    let upstream = app.config.upstream.as_string();
    let addr = match app.upstream_addr().await {
        Ok(a) => a,
        Err(e) => {
            return (
                false,
                json!({"upstream": upstream, "ok": false, "error": format!("{e:?}")}),
            )
        }
    };
    let card = match app.cards.get(addr, false).await {
        Ok(c) => c,
        Err(e) => {
            return (
                false,
                json!({"upstream": upstream, "ok": false, "error": e}),
            )
        }
    };
    let ends = app.endpoints().await;
    let mut served = serde_json::Map::new();
    let mut ok = true;
    for v in Version::ALL {
        let entry = if v == card.version {
            json!({"mode": "passthrough"})
        } else {
            match translate_card(&card.json, v, &ends) {
                Ok(_) => json!({"mode": "translated"}),
                Err(e) => {
                    ok = false;
                    json!({"mode": "unavailable", "error": e})
                }
            }
        };
        served.insert(v.as_str().to_string(), entry);
    }
    let report = json!({
        "upstream": upstream,
        "ok": ok,
        "card_version": card.version.as_str(),
        "name": card.json.get("name"),
        "etag": card.etag,
        "cache_seconds": card.ttl.as_secs(),
        "clients": served,
    });
    (ok, report)
}

/// Runs the subcommand; returns the exit code.
pub fn main(args: &ServeArgs) -> i32 {
    let config = match args.resolve() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("a2a-compat-proxy check-upstream: {e}");
            return 2;
        }
    };
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        eprintln!("a2a-compat-proxy check-upstream: cannot start a runtime");
        return 2;
    };
    let app = App::new(config);
    let (ok, report) = rt.block_on(report(&app));
    // Pingora's socket toward an https agent (upstream_tls).
    app.config.upstream_tls.close_tunnels();
    println!(
        "{}",
        serde_json::to_string_pretty(&report).unwrap_or_default()
    );
    if ok {
        0
    } else {
        1
    }
}
