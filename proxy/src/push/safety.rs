//! Webhook URL safety (SSRF): http/https only; any target that is or embeds
//! a non-public address (loopback, private, link-local, shared, reserved,
//! documentation, multicast; IPv6 ranges that carry an IPv4 address) is
//! refused unless `push.allow_private_targets` or the allow list
//! (`push.allow_hosts`, host names or IP literals) permits.
//!
//! A URL's host is read the way URL parsers (WHATWG URL) and resolvers read
//! it, so no spelling of an address slips through as a "name": IPv4 in 1 to
//! 4 parts, each decimal, octal (`0` prefix) or hex (`0x`), with one
//! trailing dot; IPv6 literals without zone ids; names of letters, digits,
//! `-` and `_` only (a percent-encoded host is refused). The address found is what the proxy connects to. Checked at
//! registration and again before each send, on the resolved addresses of a
//! name (the connection then goes to a checked address, never resolved
//! again).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The policy in force.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetPolicy {
    pub allow_private: bool,
    /// Hosts (lower case) or IP literals always allowed.
    pub allow_hosts: Vec<String>,
}

/// A webhook URL, split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub https: bool,
    /// The host in its canonical form: an IP literal as the address it
    /// spells (`2130706433` is `127.0.0.1`), a name in lower case.
    pub host: String,
    /// The address, when the host is an IP literal (no lookup then).
    pub ip: Option<IpAddr>,
    pub port: u16,
    /// Path and query, at least `/`.
    pub path_and_query: String,
}

/// Why a URL was refused (text safe to show to the registering client).
/// Every refusal is final: the same URL is refused again on every try.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

/// A URL host, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Ip(IpAddr),
    /// A DNS name, lower case, without its trailing dot.
    Name(String),
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], bits: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
    (u32::from(ip) & mask) == (u32::from(Ipv4Addr::from(net)) & mask)
}

/// IPv4 ranges that are not public unicast (IANA special-purpose registry).
const SPECIAL_V4: &[([u8; 4], u32)] = &[
    ([0, 0, 0, 0], 8),       // "this network", unspecified
    ([10, 0, 0, 0], 8),      // private
    ([100, 64, 0, 0], 10),   // shared address space (carrier-grade NAT)
    ([127, 0, 0, 0], 8),     // loopback
    ([169, 254, 0, 0], 16),  // link local
    ([172, 16, 0, 0], 12),   // private
    ([192, 0, 0, 0], 24),    // IETF protocol assignments
    ([192, 0, 2, 0], 24),    // documentation
    ([192, 88, 99, 0], 24),  // 6to4 relay anycast (deprecated)
    ([192, 168, 0, 0], 16),  // private
    ([198, 18, 0, 0], 15),   // benchmarking
    ([198, 51, 100, 0], 24), // documentation
    ([203, 0, 113, 0], 24),  // documentation
    ([224, 0, 0, 0], 4),     // multicast
    ([240, 0, 0, 0], 4),     // reserved, and the broadcast address
];

fn special_v4(ip: Ipv4Addr) -> bool {
    SPECIAL_V4.iter().any(|(net, bits)| in_v4(ip, *net, *bits))
}

fn in_v6(ip: Ipv6Addr, net: [u16; 8], bits: u32) -> bool {
    let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
    (u128::from(ip) & mask) == (u128::from(Ipv6Addr::from(net)) & mask)
}

/// IPv6 ranges refused whole: not public unicast, or carrying an IPv4
/// address the host stack or a translator may turn into an IPv4 connection.
const SPECIAL_V6: &[([u16; 8], u32)] = &[
    ([0, 0, 0, 0, 0, 0, 0, 0], 96),          // ::, ::1, IPv4-compatible
    ([0, 0, 0, 0, 0, 0xffff, 0, 0], 96),     // IPv4-mapped
    ([0, 0, 0, 0, 0xffff, 0, 0, 0], 96),     // IPv4-translated (SIIT)
    ([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96),  // NAT64 well-known prefix
    ([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48),  // NAT64 local use
    ([0x100, 0, 0, 0, 0, 0, 0, 0], 64),      // discard only
    ([0x2001, 0x2, 0, 0, 0, 0, 0, 0], 48),   // benchmarking
    ([0x2001, 0x10, 0, 0, 0, 0, 0, 0], 28),  // ORCHID
    ([0x2001, 0x20, 0, 0, 0, 0, 0, 0], 28),  // ORCHIDv2
    ([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32), // documentation
    ([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20),     // documentation
    ([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7),      // unique local
    ([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10),     // link local
    ([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10),     // site local (deprecated)
    ([0xff00, 0, 0, 0, 0, 0, 0, 0], 8),      // multicast
];

fn v4_at(hi: u16, lo: u16) -> Ipv4Addr {
    Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo))
}

fn special_v6(ip: Ipv6Addr) -> bool {
    if SPECIAL_V6.iter().any(|(net, bits)| in_v6(ip, *net, *bits)) {
        return true;
    }
    let s = ip.segments();
    // 6to4 (2002::/16): the IPv4 address follows the prefix.
    if s[0] == 0x2002 {
        return special_v4(v4_at(s[1], s[2]));
    }
    // Teredo (2001::/32): the server's IPv4 address, then the client's,
    // bit-inverted, in the last 32 bits.
    if s[0] == 0x2001 && s[1] == 0 {
        return special_v4(v4_at(s[2], s[3])) || special_v4(v4_at(!s[6], !s[7]));
    }
    false
}

/// Whether `ip` is, or carries, a non-public address.
pub fn is_special(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => special_v6(v6),
    }
}

/// One part of a WHATWG IPv4 address: decimal, `0x` hex (empty after the
/// prefix is 0) or `0`-prefixed octal. `None` when it is not a number.
fn v4_number(part: &str) -> Option<u64> {
    let (digits, radix) =
        if let Some(h) = part.strip_prefix("0x").or_else(|| part.strip_prefix("0X")) {
            (h, 16)
        } else if part.len() > 1 && part.starts_with('0') {
            (&part[1..], 8)
        } else {
            (part, 10)
        };
    if digits.is_empty() {
        return (radix != 10).then_some(0);
    }
    if !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    // Only too many digits fail here: read as "too large".
    Some(u64::from_str_radix(digits, radix).unwrap_or(u64::MAX))
}

/// WHATWG "ends in a number": whether `host` is to be read as IPv4.
fn ends_in_number(host: &str) -> bool {
    let mut parts: Vec<&str> = host.split('.').collect();
    if parts.last() == Some(&"") {
        if parts.len() == 1 {
            return false;
        }
        parts.pop();
    }
    let last = parts.last().copied().unwrap_or_default();
    (!last.is_empty() && last.bytes().all(|b| b.is_ascii_digit())) || v4_number(last).is_some()
}

/// WHATWG IPv4 parser (1 to 4 parts, the last filling the rest).
fn parse_v4(host: &str) -> Option<Ipv4Addr> {
    let mut parts: Vec<&str> = host.split('.').collect();
    if parts.last() == Some(&"") && parts.len() > 1 {
        parts.pop();
    }
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let nums = parts
        .iter()
        .map(|p| if p.is_empty() { None } else { v4_number(p) })
        .collect::<Option<Vec<u64>>>()?;
    let (last, first) = nums.split_last()?;
    if first.iter().any(|n| *n > 255) {
        return None;
    }
    if *last >= 1u64 << (8 * (5 - nums.len())) {
        return None;
    }
    let mut v = *last;
    for (i, n) in first.iter().enumerate() {
        v += n << (8 * (3 - i));
    }
    u32::try_from(v).ok().map(Ipv4Addr::from)
}

/// Reads a URL host (as the URL has it: IPv6 in brackets) the way URL
/// parsers and resolvers do.
pub fn parse_host(raw: &str) -> Result<Host, Refused> {
    let bad = |what: &str| Refused(format!("webhook url host {what}"));
    if let Some(inner) = raw.strip_prefix('[') {
        let inner = inner
            .strip_suffix(']')
            .ok_or_else(|| bad("is not a valid IPv6 literal"))?;
        if inner.contains('%') {
            return Err(bad("must not carry an IPv6 zone id"));
        }
        return inner
            .parse::<Ipv6Addr>()
            .map(|ip| Host::Ip(IpAddr::V6(ip)))
            .map_err(|_| bad("is not a valid IPv6 literal"));
    }
    // No percent-decoding: `http::Uri` refuses `%` in a host already, and
    // a host read here is only letters, digits, `.`, `-` and `_`.
    let host = raw.to_ascii_lowercase();
    if host.is_empty() {
        return Err(Refused("webhook url needs a host".into()));
    }
    if !host
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
    {
        return Err(bad("is not a valid host name"));
    }
    if ends_in_number(&host) {
        return parse_v4(&host)
            .map(|ip| Host::Ip(IpAddr::V4(ip)))
            .ok_or_else(|| bad("is not a valid IPv4 address"));
    }
    let name = host.strip_suffix('.').unwrap_or(&host);
    if name.len() > 253 || name.split('.').any(|l| l.is_empty() || l.len() > 63) {
        return Err(bad("is not a valid host name"));
    }
    Ok(Host::Name(name.to_string()))
}

/// Whether a name is the local host's (`localhost`, `*.localhost`).
fn is_local_name(name: &str) -> bool {
    name == "localhost" || name.ends_with(".localhost")
}

/// An allow-list entry read as a host (IPv6 with or without brackets).
fn allowed_entry(entry: &str) -> Option<Host> {
    let e = entry.trim();
    if let Ok(ip) = e.trim_start_matches('[').trim_end_matches(']').parse() {
        return Some(Host::Ip(ip));
    }
    parse_host(e).ok()
}

const REFUSED_TARGET: &str = "webhook url targets a private, loopback or link-local address";

impl TargetPolicy {
    fn host_allowed(&self, host: &Host) -> bool {
        self.allow_private
            || self
                .allow_hosts
                .iter()
                .any(|h| allowed_entry(h).as_ref() == Some(host))
    }

    /// Parses and checks a URL, at registration and before each send: an
    /// IP literal in any spelling, and the local host's names, are checked
    /// here; other names again after resolution ([`Self::check_resolved`]).
    pub fn check_url(&self, url: &str) -> Result<Target, Refused> {
        let uri: http::Uri = url
            .parse()
            .map_err(|_| Refused("webhook url is not a valid URL".into()))?;
        let https = match uri.scheme_str().map(str::to_ascii_lowercase).as_deref() {
            Some("http") => false,
            Some("https") => true,
            _ => return Err(Refused("webhook url must be http or https".into())),
        };
        let auth = uri
            .authority()
            .ok_or_else(|| Refused("webhook url needs a host".into()))?;
        if auth.as_str().contains('@') {
            return Err(Refused("webhook url must not carry user info".into()));
        }
        let host = parse_host(auth.host())?;
        let port = auth.port_u16().unwrap_or(if https { 443 } else { 80 });
        if !self.host_allowed(&host) {
            let special = match &host {
                Host::Ip(ip) => is_special(*ip),
                Host::Name(n) => is_local_name(n),
            };
            if special {
                return Err(Refused(REFUSED_TARGET.into()));
            }
        }
        let path_and_query = uri
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| "/".into());
        let (host, ip) = match host {
            Host::Ip(ip) => (ip.to_string(), Some(ip)),
            Host::Name(n) => (n, None),
        };
        Ok(Target {
            https,
            host,
            ip,
            port,
            path_and_query,
        })
    }

    /// Checks the addresses a name resolved to, before a send: refused when
    /// any is not public (the connection goes to one of these addresses).
    pub fn check_resolved(&self, t: &Target, addrs: &[SocketAddr]) -> Result<(), Refused> {
        let host = match t.ip {
            Some(ip) => Host::Ip(ip),
            None => Host::Name(t.host.clone()),
        };
        if self.host_allowed(&host) {
            return Ok(());
        }
        if addrs.iter().any(|a| is_special(a.ip())) {
            return Err(Refused("webhook host resolves to a private address".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (url, allowed by the default policy).
    const TABLE: &[(&str, bool)] = &[
        // Public targets.
        ("http://8.8.8.8/", true),
        ("https://example.com/hook", true),
        ("HTTPS://Example.COM:8443/Hook?a=1", true),
        ("http://example.com./h", true),
        ("http://[2606:4700::1111]/", true),
        ("http://[2606:4700::1111]:8080/h", true),
        ("http://[2002:0808:0808::]/", true),
        ("http://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/", true),
        ("http://134744072/", true),
        ("http://0x08080808/", true),
        ("http://8.8.8.8./", true),
        ("http://1.1.1.1:443/", true),
        // IPv4 loopback in every spelling.
        ("http://127.0.0.1/x", false),
        ("http://127.0.0.1./", false),
        ("http://2130706433/", false),
        ("http://0x7f000001/", false),
        ("http://0X7F000001/", false),
        ("http://127.1/", false),
        ("http://127.0.1/", false),
        ("http://017700000001/", false),
        ("http://0177.0.0.1/", false),
        ("http://0x7f.1/", false),
        ("http://0x7f.0x0.0x0.0x1:8080/", false),
        ("http://%31%32%37.0.0.1/", false),
        ("http://0/", false),
        ("http://0x/", false),
        ("http://0.0.0.0/", false),
        // Other non-public IPv4.
        ("http://10.1.2.3/", false),
        ("http://172.16.5.4/", false),
        ("http://192.168.0.1/", false),
        ("http://169.254.169.254/latest", false),
        ("http://100.64.0.1/", false),
        ("http://198.18.0.1/", false),
        ("http://192.0.2.1/", false),
        ("http://203.0.113.9/", false),
        ("http://224.0.0.1/", false),
        ("http://240.0.0.1/", false),
        ("http://255.255.255.255/", false),
        ("http://0.1.2.3/", false),
        // IPv6 forms, plain or embedding a non-public IPv4.
        ("http://[::]/", false),
        ("http://[::1]:8/", false),
        ("http://[0:0:0:0:0:0:0:1]/", false),
        ("http://[::7f00:1]/", false),
        ("http://[::ffff:7f00:1]/", false),
        ("http://[::ffff:127.0.0.1]/", false),
        ("http://[::FFFF:8.8.8.8]/", false),
        ("http://[64:ff9b::7f00:1]/", false),
        ("http://[64:ff9b::808:808]/", false),
        ("http://[64:ff9b:1::a00:1]/", false),
        ("http://[2002:7f00:1::]/", false),
        ("http://[2002:c0a8:101::1]/", false),
        ("http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", false),
        ("http://[2001:0:7f00:1:8000:63bf:f7f7:f7f7]/", false),
        ("http://[2001:db8::1]/", false),
        ("http://[fc00::1]/", false),
        ("http://[fd12:3456::1]/", false),
        ("http://[fe80::1]/", false),
        ("http://[FE80::1]/", false),
        ("http://[fe80::1%25lo]/", false),
        ("http://[fe80::1%25eth0]:80/", false),
        ("http://[ff02::1]/", false),
        // Local names.
        ("http://localhost:9/", false),
        ("http://LOCALHOST/", false),
        ("http://localhost./", false),
        ("http://api.localhost/", false),
        ("http://a.b.localhost./", false),
        ("http://%6c%6f%63%61%6c%68%6f%73%74/", false),
        // Not a usable URL or host.
        ("http://256.0.0.1/", false),
        ("http://1.2.3.4.5/", false),
        ("http://4294967296/", false),
        ("http://0x100000000/", false),
        ("http://08.0.0.1/", false),
        ("http://127.0.0.1../", false),
        ("http://a..b/", false),
        // Percent-encoded hosts are not decoded but refused.
        ("http://%65xample.com/", false),
        ("http://%ff%fe/", false),
        ("http://%zz/", false),
        ("http://[::1/", false),
        ("ftp://example.com/", false),
        ("file:///etc/passwd", false),
        ("http://u:p@example.com/", false),
        ("http://user@127.0.0.1/", false),
        ("http://8.8.8.8@127.0.0.1/", false),
        ("not a url", false),
    ];

    #[test]
    fn literal_hosts_in_every_spelling() {
        let p = TargetPolicy::default();
        assert!(TABLE.len() >= 40);
        let mut wrong = Vec::new();
        for (url, allowed) in TABLE {
            let got = p.check_url(url);
            if got.is_ok() != *allowed {
                wrong.push(format!("{url}: {got:?}"));
            }
        }
        assert!(wrong.is_empty(), "misjudged:\n{}", wrong.join("\n"));
    }

    #[test]
    fn hosts_read_as_addresses() {
        let p = TargetPolicy::default();
        for (url, host, port) in [
            ("http://134744072/", "8.8.8.8", 80),
            ("http://0x8.0x8.0x8.0x8/", "8.8.8.8", 80),
            ("http://010.010.010.010/", "8.8.8.8", 80),
            ("http://8.526344/", "8.8.8.8", 80),
            ("https://8.8.8.8./", "8.8.8.8", 443),
            ("http://[2606:4700:0::1111]:81/", "2606:4700::1111", 81),
            ("http://Example.COM./", "example.com", 80),
        ] {
            let t = p.check_url(url).unwrap();
            assert_eq!((t.host.as_str(), t.port), (host, port), "{url}");
            assert_eq!(t.ip.is_some(), host != "example.com", "{url}");
        }
        let t = p.check_url("https://example.com/hook?a=1").unwrap();
        assert_eq!(
            (t.https, t.port, t.path_and_query.as_str()),
            (true, 443, "/hook?a=1")
        );
    }

    #[test]
    fn policy_knobs_still_allow() {
        let allow = TargetPolicy {
            allow_private: false,
            allow_hosts: vec!["127.0.0.1".into(), "::1".into(), "hooks.internal".into()],
        };
        assert!(allow.check_url("http://127.0.0.1:5/h").is_ok());
        // The same address in another spelling is the same allowed host.
        assert!(allow.check_url("http://2130706433:5/h").is_ok());
        assert!(allow.check_url("http://[::1]:5/h").is_ok());
        assert!(allow.check_url("http://Hooks.Internal./h").is_ok());
        assert!(allow.check_url("http://10.0.0.1/").is_err());
        assert!(allow.check_url("http://127.0.0.2/").is_err());
        let t = allow.check_url("http://hooks.internal/").unwrap();
        let lo: SocketAddr = "127.0.0.1:80".parse().unwrap();
        assert!(allow.check_resolved(&t, &[lo]).is_ok());
        let open = TargetPolicy {
            allow_private: true,
            allow_hosts: vec![],
        };
        assert!(open.check_url("http://127.1/").is_ok());
        assert!(open.check_url("http://[fe80::1]/").is_ok());
        // A broken host stays refused whatever the policy.
        assert!(open.check_url("http://[fe80::1%25lo]/").is_err());
        assert!(open.check_url("http://256.1/").is_err());
    }

    #[test]
    fn resolved_addresses_are_checked() {
        let p = TargetPolicy::default();
        let t = p.check_url("http://example.com/").unwrap();
        for bad in [
            "10.0.0.1:80",
            "127.0.0.1:80",
            "[::1]:80",
            "[::ffff:10.0.0.1]:80",
            "[64:ff9b::a00:1]:80",
            "[2002:a00:1::]:80",
        ] {
            let a: SocketAddr = bad.parse().unwrap();
            let good: SocketAddr = "8.8.8.8:80".parse().unwrap();
            assert!(p.check_resolved(&t, &[good, a]).is_err(), "{bad}");
        }
        let good: SocketAddr = "[2606:4700::1111]:80".parse().unwrap();
        assert!(p.check_resolved(&t, &[good]).is_ok());
    }
}
