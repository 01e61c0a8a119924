//! `[limits]`: every bound the proxy keeps, with its default, resolved and
//! checked.

use std::time::Duration;

use super::*;

/// Resource limits and timeouts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest request body accepted; larger ones get 413.
    pub max_body_bytes: usize,
    /// Largest number of proxied requests (streams included; local endpoints
    /// not counted) handled at once; more get 503.
    pub max_connections: usize,
    pub connect_timeout: Duration,
    /// Longest wait for upstream bytes (also the longest gap between SSE events).
    pub read_timeout: Duration,
    /// Longest life of one SSE stream.
    pub stream_max_duration: Duration,
    /// Card cache lifetime when the upstream sends no `max-age`.
    pub card_default_ttl: Duration,
    /// Longest time a client may take to send a request head (from the
    /// accept on a new connection, from its first byte on a kept-alive one).
    pub header_timeout: Duration,
    /// Longest silence of a kept-alive client connection between requests
    /// (HTTP/1.1), or of an HTTP/2 connection with no open stream.
    pub idle_timeout: Duration,
    /// Largest request head (request line and headers); 431 beyond.
    pub max_header_bytes: usize,
    /// Longest time an agent may take over a whole non-streaming answer,
    /// however steadily its bytes trickle in.
    pub answer_timeout: Duration,
    /// Longest time a client may take over a whole request (head and body),
    /// however steadily it trickles the body.
    pub body_timeout: Duration,
    // sse (issue #20):
    /// Largest upstream SSE event, or whole JSON answer, held to be
    /// translated; a stream whose event grows past it ends with an error
    /// event in the client's version (never forwarded untranslated).
    pub max_event_bytes: usize,
    // ListTasks emulation (area: listtasks).
    /// Bounds of the ListTasks index.
    pub list_index: IndexLimits,
    /// Tasks of one ListTasks page asked of the agent at once.
    pub list_fetch_parallel: usize,
    // Relayed subscriptions (area: relay, issue #22 item 6).
    pub relay: RelayLimits,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: 4 * 1024 * 1024,
            max_connections: 1024,
            connect_timeout: Duration::from_secs(5),
            read_timeout: Duration::from_secs(60),
            stream_max_duration: Duration::from_secs(3600),
            card_default_ttl: Duration::from_secs(60),
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_header_bytes: 64 * 1024,
            answer_timeout: Duration::from_secs(120),
            body_timeout: Duration::from_secs(60),
            // sse (issue #20):
            max_event_bytes: 16 * 1024 * 1024,
            list_index: IndexLimits::default(),
            list_fetch_parallel: 8,
            // Relayed subscriptions (area: relay).
            relay: RelayLimits::default(),
        }
    }
}

/// Bounds of the ListTasks index (`crate::tasks`) (`limits.list_index_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexLimits {
    /// Most entries kept.
    pub max_tasks: usize,
    /// Most bytes of ids, context ids, states and scopes kept.
    pub max_bytes: usize,
    /// A task whose id or context id is longer is not indexed.
    pub max_id_bytes: usize,
}

impl Default for IndexLimits {
    fn default() -> Self {
        IndexLimits {
            max_tasks: 10_000,
            max_bytes: 8 * 1024 * 1024,
            max_id_bytes: 1024,
        }
    }
}

/// Bounds of the relay of subscriptions (`crate::tasks::relay`) (`limits.relay_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RelayLimits {
    /// Relayed subscriptions open at once (0: relaying is off).
    pub max_subscriptions: usize,
    /// Longest wait of one relayed subscription for its task's end.
    pub max_wait: Duration,
    /// Bytes of events held for one subscriber not yet sent.
    pub max_buffer_bytes: usize,
}

impl Default for RelayLimits {
    fn default() -> Self {
        RelayLimits {
            max_subscriptions: 1024,
            max_wait: Duration::from_secs(600),
            max_buffer_bytes: 1024 * 1024,
        }
    }
}

pub(crate) fn resolve_limits(raw: &RawLimits) -> Result<Limits, ConfigError> {
    let d = Limits::default();
    let read_timeout = millis(
        "limits.read_timeout_ms",
        raw.read_timeout_ms,
        d.read_timeout,
    )?;
    let (header_timeout, idle_timeout, max_header_bytes) = listener_bounds(raw, &d)?;
    Ok(Limits {
        max_body_bytes: at_most(
            "limits.max_body_bytes",
            raw.max_body_bytes,
            d.max_body_bytes,
            1 << 30,
            "must be at most 1 GiB",
        )?,
        max_connections: at_most(
            "limits.max_connections",
            raw.max_connections,
            d.max_connections,
            1_000_000,
            "must be at most 1000000",
        )?,
        connect_timeout: millis(
            "limits.connect_timeout_ms",
            raw.connect_timeout_ms,
            d.connect_timeout,
        )?,
        read_timeout,
        stream_max_duration: seconds(
            "limits.stream_max_duration_secs",
            raw.stream_max_duration_secs,
            d.stream_max_duration,
        )?,
        // 0 is allowed here: revalidate on every request.
        card_default_ttl: raw
            .card_default_ttl_secs
            .map_or(d.card_default_ttl, Duration::from_secs),
        list_index: resolve_list_index(raw, d.list_index)?,
        list_fetch_parallel: within(
            "limits.list_fetch_parallel",
            raw.list_fetch_parallel,
            d.list_fetch_parallel,
            1..=64,
            "must be 1..=64",
        )?,
        header_timeout,
        idle_timeout,
        max_header_bytes,
        // Default: twice the read timeout (a whole answer may take as long
        // as two of the longest gaps).
        answer_timeout: millis(
            "limits.answer_timeout_ms",
            raw.answer_timeout_ms,
            read_timeout * 2,
        )?,
        body_timeout: millis(
            "limits.body_timeout_ms",
            raw.body_timeout_ms,
            d.body_timeout,
        )?,
        // sse (issue #20):
        max_event_bytes: at_most(
            "limits.max_event_bytes",
            raw.max_event_bytes,
            d.max_event_bytes,
            1 << 30,
            "must be at most 1 GiB",
        )?,
        // Relayed subscriptions (area: relay).
        relay: resolve_relay(raw, d.relay)?,
    })
}

/// A listener's own bounds: the time and size of a request head, and how
/// long an idle connection stays (`d`: the defaults).
fn listener_bounds(
    raw: &RawLimits,
    d: &Limits,
) -> Result<(Duration, Duration, usize), ConfigError> {
    let header_timeout = millis(
        "limits.header_timeout_ms",
        raw.header_timeout_ms,
        d.header_timeout,
    )?;
    let idle_timeout = millis(
        "limits.idle_timeout_ms",
        raw.idle_timeout_ms,
        d.idle_timeout,
    )?;
    let max_header_bytes = within(
        "limits.max_header_bytes",
        raw.max_header_bytes,
        d.max_header_bytes,
        1024..=1024 * 1024,
        "must be from 1024 to 1048576",
    )?;
    Ok((header_timeout, idle_timeout, max_header_bytes))
}

/// A count that must be above 0 (`default` when unset).
fn positive(key: &str, v: Option<u64>, default: u64) -> Result<u64, ConfigError> {
    match v {
        None => Ok(default),
        Some(0) => Err(bad(key, 0, "must be greater than 0")),
        Some(n) => Ok(n),
    }
}

/// A size or count above 0 and at most `max`.
fn at_most(
    key: &str,
    v: Option<u64>,
    default: usize,
    max: u64,
    why: &str,
) -> Result<usize, ConfigError> {
    match positive(key, v, default as u64)? {
        n if n > max => Err(bad(key, n, why)),
        n => Ok(n as usize),
    }
}

/// A value in `range` (`default` when unset).
fn within(
    key: &str,
    v: Option<u64>,
    default: usize,
    range: std::ops::RangeInclusive<u64>,
    why: &str,
) -> Result<usize, ConfigError> {
    match v {
        None => Ok(default),
        Some(n) if range.contains(&n) => Ok(n as usize),
        Some(n) => Err(bad(key, n, why)),
    }
}

/// A duration in milliseconds, above 0.
fn millis(key: &str, v: Option<u64>, default: Duration) -> Result<Duration, ConfigError> {
    positive(key, v, default.as_millis() as u64).map(Duration::from_millis)
}

/// A duration in seconds, above 0.
fn seconds(key: &str, v: Option<u64>, default: Duration) -> Result<Duration, ConfigError> {
    positive(key, v, default.as_secs()).map(Duration::from_secs)
}

/// `limits.relay_*` (area: relay, issue #22 item 6).
pub(super) fn resolve_relay(raw: &RawLimits, d: RelayLimits) -> Result<RelayLimits, ConfigError> {
    let within = |key: &str, v: Option<u64>, default: u64, min: u64, max: u64| match v {
        None => Ok(default),
        Some(n) if (min..=max).contains(&n) => Ok(n),
        Some(n) => Err(bad(key, n, format!("must be {min}..={max}"))),
    };
    Ok(RelayLimits {
        max_subscriptions: within(
            "limits.relay_max_subscriptions",
            raw.relay_max_subscriptions,
            d.max_subscriptions as u64,
            0,
            1_000_000,
        )? as usize,
        max_wait: Duration::from_secs(within(
            "limits.relay_max_wait_secs",
            raw.relay_max_wait_secs,
            d.max_wait.as_secs(),
            1,
            86_400,
        )?),
        max_buffer_bytes: within(
            "limits.relay_max_buffer_bytes",
            raw.relay_max_buffer_bytes,
            d.max_buffer_bytes as u64,
            1024,
            1 << 30,
        )? as usize,
    })
}

/// `limits.list_index_*` (area: listtasks).
pub(super) fn resolve_list_index(
    raw: &RawLimits,
    d: IndexLimits,
) -> Result<IndexLimits, ConfigError> {
    let within = |key: &str, v: Option<u64>, default: usize, max: u64| match v {
        None => Ok(default),
        Some(n) if (1..=max).contains(&n) => Ok(n as usize),
        Some(n) => Err(bad(key, n, format!("must be 1..={max}"))),
    };
    Ok(IndexLimits {
        max_tasks: within(
            "limits.list_index_max_tasks",
            raw.list_index_max_tasks,
            d.max_tasks,
            1_000_000,
        )?,
        max_bytes: within(
            "limits.list_index_max_bytes",
            raw.list_index_max_bytes,
            d.max_bytes,
            1 << 30,
        )?,
        max_id_bytes: within(
            "limits.list_index_max_id_bytes",
            raw.list_index_max_id_bytes,
            d.max_id_bytes,
            64 * 1024,
        )?,
    })
}
