//! Webhook URL safety (SSRF): http/https only; loopback, private,
//! link-local, unspecified, multicast and other special targets refused
//! unless `push.allow_private_targets` or the allow list (`push.allow_hosts`,
//! host names or IP literals) permits. Checked at registration and again,
//! on the resolved addresses, before each send.

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
    pub host: String,
    pub port: u16,
    /// Path and query, at least `/`.
    pub path_and_query: String,
}

/// Why a URL was refused (text safe to show to the registering client).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

fn special_v4(ip: Ipv4Addr) -> bool {
    ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || ip.octets()[0] == 0
        // 100.64.0.0/10 carrier-grade NAT
        || (ip.octets()[0] == 100 && (ip.octets()[1] & 0xc0) == 64)
}

fn special_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return special_v4(v4);
    }
    let seg0 = ip.segments()[0];
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (seg0 & 0xfe00) == 0xfc00 // unique local
        || (seg0 & 0xffc0) == 0xfe80 // link local
}

/// Whether `ip` is a non-public address.
pub fn is_special(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => special_v6(v6),
    }
}

impl TargetPolicy {
    fn host_allowed(&self, host: &str) -> bool {
        self.allow_private
            || self
                .allow_hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host))
    }

    /// Parses and checks a URL at registration (IP literals and `localhost`
    /// are checked here; names are checked again after resolution).
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
        let host = auth
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        if host.is_empty() {
            return Err(Refused("webhook url needs a host".into()));
        }
        let port = auth.port_u16().unwrap_or(if https { 443 } else { 80 });
        if !self.host_allowed(&host) {
            let special = match host.parse::<IpAddr>() {
                Ok(ip) => is_special(ip),
                Err(_) => host == "localhost" || host.ends_with(".localhost"),
            };
            if special {
                return Err(Refused(
                    "webhook url targets a private, loopback or link-local address".into(),
                ));
            }
        }
        let path_and_query = uri
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| "/".into());
        Ok(Target {
            https,
            host,
            port,
            path_and_query,
        })
    }

    /// Checks the resolved addresses before a send.
    pub fn check_resolved(&self, t: &Target, addrs: &[SocketAddr]) -> Result<(), Refused> {
        if self.host_allowed(&t.host) {
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

    #[test]
    fn refuses_special_targets_unless_allowed() {
        let p = TargetPolicy::default();
        for u in [
            "http://127.0.0.1/x",
            "http://10.1.2.3/",
            "http://192.168.0.1/",
            "http://169.254.169.254/latest",
            "http://[::1]:8/",
            "http://[fe80::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://localhost:9/",
            "http://0.0.0.0/",
            "ftp://example.com/",
            "file:///etc/passwd",
            "http://u:p@example.com/",
            "not a url",
        ] {
            assert!(p.check_url(u).is_err(), "{u}");
        }
        let t = p.check_url("https://example.com/hook?a=1").unwrap();
        assert_eq!(
            (t.https, t.port, t.path_and_query.as_str()),
            (true, 443, "/hook?a=1")
        );
        let allow = TargetPolicy {
            allow_private: false,
            allow_hosts: vec!["127.0.0.1".into()],
        };
        assert!(allow.check_url("http://127.0.0.1:5/h").is_ok());
        assert!(allow.check_url("http://10.0.0.1/").is_err());
        let addr: SocketAddr = "10.0.0.1:80".parse().unwrap();
        let t = p.check_url("http://example.com/").unwrap();
        assert!(p.check_resolved(&t, &[addr]).is_err());
    }
}
