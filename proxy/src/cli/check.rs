//! `a2a-compat-proxy check-upstream`: fetches the upstream's agent card the
//! way `serve` would and reports what the proxy makes of it, without starting
//! the proxy; with `[[agents]]`, every agent's. Exit 0 when every card was
//! fetched and both client versions can be served, 1 when not, 2 for a bad
//! configuration.

use std::sync::Arc;

use serde_json::{json, Value};
use translate::Version;

use crate::app::App;
use crate::card::translate_card;
use crate::cli::serve::ServeArgs;

/// The report printed for one upstream (also used by tests).
pub async fn report(app: &App) -> (bool, Value) {
    let upstream = app.config.upstream.as_string();
    let addr = match app.upstream_addr().await {
        Ok(a) => a,
        Err(e) => {
            return (
                false,
                json!({"upstream": upstream, "ok": false, "error": e.operator_text()}),
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

/// Every agent's report (checked at once), in config order, each naming
/// its agent (`"agent"` first); `true` when every one is ok.
pub async fn report_all(apps: &[Arc<App>]) -> (bool, Vec<Value>) {
    let mut set = tokio::task::JoinSet::new();
    for (i, app) in apps.iter().enumerate() {
        let app = app.clone();
        set.spawn(async move {
            let (ok, r) = report(&app).await;
            let mut named = serde_json::Map::new();
            named.insert("agent".into(), Value::from(app.config.agent.name.as_str()));
            if let Value::Object(m) = r {
                named.extend(m);
            }
            (i, ok, Value::Object(named))
        });
    }
    let mut out = vec![(false, Value::Null); apps.len()];
    while let Some(done) = set.join_next().await {
        if let Ok((i, ok, r)) = done {
            out[i] = (ok, r);
        }
    }
    // A check that did not end (it panicked) is a failure, still named.
    for (slot, app) in out.iter_mut().zip(apps) {
        if slot.1.is_null() {
            slot.1 = json!({"agent": app.config.agent.name, "ok": false, "error": "the check did not end"});
        }
    }
    let ok = out.iter().all(|(ok, _)| *ok);
    (ok, out.into_iter().map(|(_, r)| r).collect())
}

/// Runs the subcommand; returns the exit code. One agent: its report as
/// one JSON object. Several (`[[agents]]`): one JSON object per line, each
/// naming its agent, then a summary line on stderr; exit 1 when any fails.
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
    let several = !config.agents.is_empty();
    let apps: Vec<Arc<App>> = config
        .agent_configs()
        .into_iter()
        .map(|c| Arc::new(App::new(c)))
        .collect();
    let (ok, reports) = rt.block_on(report_all(&apps));
    if several {
        for r in &reports {
            println!("{}", serde_json::to_string(r).unwrap_or_default());
        }
        let failed: Vec<&str> = reports
            .iter()
            .filter(|r| r["ok"] != true)
            .filter_map(|r| r["agent"].as_str())
            .collect();
        if failed.is_empty() {
            eprintln!("check-upstream: all {} agents ok", reports.len());
        } else {
            eprintln!(
                "check-upstream: {} of {} agents failed: {}",
                failed.len(),
                reports.len(),
                failed.join(", ")
            );
        }
    } else if let Some(r) = reports.first() {
        println!("{}", serde_json::to_string_pretty(r).unwrap_or_default());
    }
    if ok {
        0
    } else {
        1
    }
}
