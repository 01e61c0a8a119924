//! `[push]`: the push-notification settings, resolved and checked.

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use super::*;

/// Where push state lives.
#[derive(Clone, PartialEq, Eq)]
pub enum PushBackend {
    /// The embedded store: one file under this directory.
    Embedded(std::path::PathBuf),
    /// A PostgreSQL database shared by several proxy instances.
    Postgres(String),
}

impl fmt::Debug for PushBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PushBackend::Embedded(d) => write!(f, "Embedded({})", d.display()),
            // The URL may carry a password.
            PushBackend::Postgres(_) => write!(f, "Postgres(<redacted>)"),
        }
    }
}

/// Push-notification interception and delivery (`[push]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushSettings {
    /// Off: push configs pass through (translated) with the subscriber's own
    /// URL, so webhook bodies arrive in the agent's version.
    pub enabled: bool,
    pub backend: PushBackend,
    /// The base URL the upstream agent reaches the proxy's callback at.
    pub callback_url: HttpUrl,
    /// Also intercept when client and agent speak the same version.
    pub intercept_same_version: bool,
    /// Allow loopback, private and link-local webhook targets.
    pub allow_private_targets: bool,
    /// Hosts (or IP literals) allowed even when private.
    pub allow_hosts: Vec<String>,
    /// Attempts before a notification becomes a dead letter.
    pub max_attempts: u32,
    pub backoff_initial: Duration,
    pub backoff_max: Duration,
    /// Per attempt: connect, send and the response head.
    pub delivery_timeout: Duration,
    /// Names this instance's delivery leases (several instances on one database).
    pub instance_id: String,
    // pg (issue #25)
    /// How long a claim holds notifications; renewed every third of it
    /// while the instance delivers them, so another instance takes a
    /// crashed one's over within about this long.
    pub lease: Duration,
    /// The key (64 hex digits) that seals stored credentials. `None`: the
    /// embedded store keeps one in `<data_dir>/credentials.key` (made on
    /// first use); PostgreSQL stores them in clear (warned at start).
    pub credentials_key_file: Option<std::path::PathBuf>,
    /// How many notifications, and how many bytes of them, wait for
    /// delivery at most, per config and in all (a shared store: across its
    /// instances). An agent's push beyond them is refused, to retry later.
    pub outbox: OutboxBounds,
    /// Bytes of agents' callback bodies read (and being accepted) at once,
    /// across all callbacks; a larger body is refused (413).
    pub callback_read_bytes: usize,
}

/// Bounds of the push outbox: notifications accepted and not yet
/// delivered (nor given up), each counted by the bytes of its stored body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutboxBounds {
    /// Items of one config (`push.outbox_config_max_items`).
    pub config_items: u64,
    /// Body bytes of one config (`push.outbox_config_max_bytes`).
    pub config_bytes: u64,
    /// Items in all (`push.outbox_max_items`).
    pub total_items: u64,
    /// Body bytes in all (`push.outbox_max_bytes`).
    pub total_bytes: u64,
}

impl OutboxBounds {
    /// No bound at all (tests, and stores' unbounded appends).
    pub const NONE: OutboxBounds = OutboxBounds {
        config_items: u64::MAX,
        config_bytes: u64::MAX,
        total_items: u64::MAX,
        total_bytes: u64::MAX,
    };
}

/// Defaults of the outbox bounds (`push.outbox_*`).
pub const DEFAULT_OUTBOX: OutboxBounds = OutboxBounds {
    config_items: 10_000,
    config_bytes: 64 << 20,
    total_items: 100_000,
    total_bytes: 512 << 20,
};

/// Default of `push.callback_read_bytes`.
pub const DEFAULT_CALLBACK_READ_BYTES: usize = 32 << 20;

/// Default data directory of the embedded push store.
pub const DEFAULT_PUSH_DATA_DIR: &str = "./a2a-proxy-data";

// pg (issue #25)
/// Default delivery lease: a crashed instance's notifications are taken
/// over within about 9 s (plus one idle poll).
pub const DEFAULT_PUSH_LEASE_MS: u64 = 9_000;
const MIN_PUSH_LEASE_MS: u64 = 300;
const MAX_PUSH_LEASE_MS: u64 = 3_600_000;

/// `push.postgres_url`: a `postgres://` URL or a libpq `key=value` string,
/// checked here so a bad one stops the start with the key named. TLS to
/// PostgreSQL is not built in: `sslmode=require` is refused (`disable`
/// and `prefer` connect without TLS). Errors never echo the string (it
/// may hold a password).
pub(super) fn check_postgres_url(u: &str) -> Result<(), ConfigError> {
    let err = |message: &str| ConfigError {
        key: "push.postgres_url".into(),
        message: message.into(),
    };
    let t = u.trim();
    if t.is_empty() {
        return Err(err("must not be empty"));
    }
    let is_url = t.starts_with("postgres://") || t.starts_with("postgresql://");
    if t.contains("://") && !is_url {
        return Err(err(
            "must be a postgres:// or postgresql:// URL or a libpq key=value string",
        ));
    }
    if !is_url && !t.contains('=') {
        return Err(err(
            "must be a postgres:// or postgresql:// URL or a libpq key=value string (host=... dbname=...)",
        ));
    }
    const NO_TLS: &str = "asks for TLS (sslmode=require, verify-ca or verify-full, or sslnegotiation=direct): TLS to PostgreSQL is not supported by this build; use sslmode=disable or prefer (no TLS) over a trusted network or a local TLS tunnel";
    let lower = t.to_ascii_lowercase();
    if ["sslmode=verify-ca", "sslmode=verify-full"]
        .iter()
        .any(|m| lower.contains(m))
    {
        return Err(err(NO_TLS));
    }
    let parsed: postgres::Config = t.parse().map_err(|_| {
        err("is not a valid connection string (a postgres:// URL or libpq key=value pairs of the options the proxy's client knows)")
    })?;
    if parsed.get_hosts().is_empty() {
        return Err(err("names no host (host=... or postgres://host/...)"));
    }
    if parsed.get_ssl_mode() == postgres::config::SslMode::Require
        || parsed.get_ssl_negotiation() == postgres::config::SslNegotiation::Direct
    {
        return Err(err(NO_TLS));
    }
    Ok(())
}

pub(super) fn resolve_push(raw: &RawPush, listen: SocketAddr) -> Result<PushSettings, ConfigError> {
    let backend = push_backend(raw)?;
    let callback_url = default_callback(raw, listen)?;
    let max_attempts = raw.max_attempts.unwrap_or(10);
    if max_attempts == 0 || max_attempts > 1000 {
        return Err(bad("push.max_attempts", max_attempts, "must be 1..=1000"));
    }
    let ms = |key: &str, v: Option<u64>, default: u64| -> Result<Duration, ConfigError> {
        match v {
            Some(0) => Err(bad(key, 0, "must be greater than 0")),
            Some(n) => Ok(Duration::from_millis(n)),
            None => Ok(Duration::from_millis(default)),
        }
    };
    let backoff_initial = ms("push.backoff_initial_ms", raw.backoff_initial_ms, 500)?;
    let backoff_max = ms("push.backoff_max_ms", raw.backoff_max_ms, 300_000)?;
    if backoff_max < backoff_initial {
        return Err(bad(
            "push.backoff_max_ms",
            backoff_max.as_millis(),
            "must not be below push.backoff_initial_ms",
        ));
    }
    let delivery_timeout = ms("push.delivery_timeout_ms", raw.delivery_timeout_ms, 10_000)?;
    let allow_hosts = push_allow_hosts(raw)?;
    let instance_id = match raw.instance_id.as_deref() {
        Some(s) if s.trim().is_empty() || s.len() > 100 => {
            return Err(bad("push.instance_id", s, "must be 1..=100 characters"))
        }
        Some(s) => s.to_string(),
        None => format!("{}-{}", std::process::id(), crate::ids::random_id()),
    };
    // pg (issue #25)
    let lease = ms("push.lease_ms", raw.lease_ms, DEFAULT_PUSH_LEASE_MS)?;
    if !(MIN_PUSH_LEASE_MS..=MAX_PUSH_LEASE_MS).contains(&(lease.as_millis() as u64)) {
        return Err(bad(
            "push.lease_ms",
            lease.as_millis(),
            format!("must be {MIN_PUSH_LEASE_MS}..={MAX_PUSH_LEASE_MS}"),
        ));
    }
    let outbox = resolve_outbox(raw)?;
    let callback_read_bytes = match raw.callback_read_bytes {
        None => DEFAULT_CALLBACK_READ_BYTES,
        Some(n) if (64 * 1024..=1 << 32).contains(&n) => n as usize,
        Some(n) => {
            return Err(bad(
                "push.callback_read_bytes",
                n,
                "must be from 65536 to 4294967296",
            ))
        }
    };
    Ok(PushSettings {
        outbox,
        callback_read_bytes,
        enabled: raw.enabled.unwrap_or(true),
        backend,
        callback_url,
        intercept_same_version: raw.intercept_same_version.unwrap_or(false),
        allow_private_targets: raw.allow_private_targets.unwrap_or(false),
        allow_hosts,
        max_attempts,
        backoff_initial,
        backoff_max,
        delivery_timeout,
        instance_id,
        lease,
        credentials_key_file: match raw.credentials_key_file.as_deref() {
            Some(f) if f.trim().is_empty() => {
                return Err(bad("push.credentials_key_file", f, "must not be empty"))
            }
            f => f.map(std::path::PathBuf::from),
        },
    })
}

/// `push.outbox_*`: each above 0; a config's bound at most the total.
fn resolve_outbox(raw: &RawPush) -> Result<OutboxBounds, ConfigError> {
    let d = DEFAULT_OUTBOX;
    let count = |key: &str, v: Option<u64>, default: u64| match v {
        None => Ok(default),
        Some(n) if (1..=1 << 40).contains(&n) => Ok(n),
        Some(n) => Err(bad(key, n, "must be from 1 to 1099511627776")),
    };
    let b = OutboxBounds {
        config_items: count(
            "push.outbox_config_max_items",
            raw.outbox_config_max_items,
            d.config_items,
        )?,
        config_bytes: count(
            "push.outbox_config_max_bytes",
            raw.outbox_config_max_bytes,
            d.config_bytes,
        )?,
        total_items: count("push.outbox_max_items", raw.outbox_max_items, d.total_items)?,
        total_bytes: count("push.outbox_max_bytes", raw.outbox_max_bytes, d.total_bytes)?,
    };
    // Unset, a config's bound follows a smaller total.
    let b = OutboxBounds {
        config_items: match raw.outbox_config_max_items {
            None => b.config_items.min(b.total_items),
            Some(_) => b.config_items,
        },
        config_bytes: match raw.outbox_config_max_bytes {
            None => b.config_bytes.min(b.total_bytes),
            Some(_) => b.config_bytes,
        },
        ..b
    };
    if b.config_items > b.total_items {
        return Err(bad(
            "push.outbox_config_max_items",
            b.config_items,
            "must not be above push.outbox_max_items",
        ));
    }
    if b.config_bytes > b.total_bytes {
        return Err(bad(
            "push.outbox_config_max_bytes",
            b.config_bytes,
            "must not be above push.outbox_max_bytes",
        ));
    }
    Ok(b)
}

/// Where the push store lives: an embedded directory or PostgreSQL.
fn push_backend(raw: &RawPush) -> Result<PushBackend, ConfigError> {
    let backend = match (&raw.postgres_url, &raw.data_dir) {
        (Some(_), Some(_)) => {
            return Err(bad(
                "push.postgres_url",
                "<url>",
                "set either push.postgres_url or push.data_dir, not both",
            ))
        }
        (Some(u), None) => {
            check_postgres_url(u)?;
            PushBackend::Postgres(u.clone())
        }
        (None, d) => {
            let d = d.as_deref().unwrap_or(DEFAULT_PUSH_DATA_DIR);
            if d.trim().is_empty() {
                return Err(bad("push.data_dir", d, "must not be empty"));
            }
            PushBackend::Embedded(d.into())
        }
    };
    Ok(backend)
}

/// `push.callback_url`, by default the listener (a wildcard listener as
/// loopback).
fn default_callback(raw: &RawPush, listen: SocketAddr) -> Result<HttpUrl, ConfigError> {
    let callback_url = match raw.callback_url.as_deref() {
        Some(s) => HttpUrl::parse("push.callback_url", s)?,
        None => {
            let ip = match listen.ip() {
                std::net::IpAddr::V4(v) if v.is_unspecified() => "127.0.0.1".to_string(),
                std::net::IpAddr::V6(v) if v.is_unspecified() => "::1".to_string(),
                ip => ip.to_string(),
            };
            HttpUrl {
                scheme: "http".into(),
                host: ip,
                port: listen.port(),
                base_path: String::new(),
            }
        }
    };
    Ok(callback_url)
}

/// `push.allow_hosts`: host names or IP literals, lower-cased.
fn push_allow_hosts(raw: &RawPush) -> Result<Vec<String>, ConfigError> {
    let mut allow_hosts = Vec::new();
    for h in raw.allow_hosts.iter().flatten() {
        let h = h.trim().trim_start_matches('[').trim_end_matches(']');
        if h.is_empty() || h.contains('/') || h.contains(' ') {
            return Err(bad(
                "push.allow_hosts",
                h,
                "must be a host name or IP literal",
            ));
        }
        allow_hosts.push(h.to_ascii_lowercase());
    }
    Ok(allow_hosts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(text: &str) -> Result<PushSettings, ConfigError> {
        let raw = RawConfig::from_toml(
            &format!("[upstream]\nurl = \"http://a\"\n[push]\n{text}\n"),
            "test.toml",
        )?;
        Ok(Config::resolve(raw)?.push)
    }

    #[test]
    fn outbox_and_callback_bounds_default_safe_and_are_checked() {
        let p = push("").unwrap();
        assert_eq!(p.outbox, DEFAULT_OUTBOX);
        assert_eq!(p.callback_read_bytes, 32 << 20);
        let p = push("outbox_max_items = 50\noutbox_max_bytes = 1000000").unwrap();
        // A config's unset bound follows a smaller total.
        assert_eq!(
            (p.outbox.config_items, p.outbox.config_bytes),
            (50, 1_000_000)
        );
        for (text, key) in [
            ("outbox_max_items = 0", "push.outbox_max_items"),
            (
                "outbox_config_max_bytes = 0",
                "push.outbox_config_max_bytes",
            ),
            (
                "outbox_max_items = 10\noutbox_config_max_items = 11",
                "push.outbox_config_max_items",
            ),
            (
                "outbox_max_bytes = 100\noutbox_config_max_bytes = 101",
                "push.outbox_config_max_bytes",
            ),
            ("callback_read_bytes = 1000", "push.callback_read_bytes"),
        ] {
            assert_eq!(push(text).unwrap_err().key, key, "{text}");
        }
    }
}
