//! Unit tests of `crate::card`.

use super::*;
use serde_json::json;

fn url(s: &str) -> HttpUrl {
    HttpUrl::parse("t", s).unwrap()
}

#[test]
fn versions() {
    assert_eq!(
        card_version(&json!({"url": "x", "protocolVersion": "0.3.0"})),
        Version::V03
    );
    assert_eq!(
        card_version(&json!({"supportedInterfaces": []})),
        Version::V10
    );
    assert_eq!(
        card_version(&json!({"supportedInterfaces": null})),
        Version::V03
    );
}

#[test]
fn precise_versions() {
    let p = |c: Value| card_protocol(&c).to_string();
    let iface = |v: &str| json!({"url": "x", "protocolBinding": "JSONRPC", "protocolVersion": v});
    assert_eq!(p(json!({"url": "x", "protocolVersion": "1.1"})), "0.3");
    assert_eq!(p(json!({"supportedInterfaces": []})), "1.0");
    assert_eq!(p(json!({"supportedInterfaces": [iface("1.0")]})), "1.0");
    assert_eq!(p(json!({"supportedInterfaces": [iface("1.0.2")]})), "1.0");
    assert_eq!(p(json!({"supportedInterfaces": [iface("1.1")]})), "1.1");
    assert_eq!(
        p(json!({"supportedInterfaces": [iface("1.0"), iface("1.1"), iface("0.3")]})),
        "1.1"
    );
    // Unreadable or other versions do not count.
    assert_eq!(
        p(json!({"supportedInterfaces": [iface("2.0"), iface("x"), {"protocolVersion": 11}]})),
        "1.0"
    );
}

#[test]
fn url_rewrite() {
    let up = url("http://10.0.0.5:9000/agent");
    let public = url("https://proxy.example.com/a2a");
    let cases = [
        (
            "http://10.0.0.5:9000/agent",
            "https://proxy.example.com/a2a",
        ),
        (
            "http://10.0.0.5:9000/agent/jsonrpc",
            "https://proxy.example.com/a2a/jsonrpc",
        ),
        (
            "http://agent.internal/rest",
            "https://proxy.example.com/a2a/rest",
        ),
        (
            "http://10.0.0.5:9000/agentx",
            "https://proxy.example.com/a2a/agentx",
        ),
        ("not a url", "not a url"),
    ];
    for (input, want) in cases {
        assert_eq!(rewrite_url(input, &up, &public), want, "{input}");
    }
}

#[test]
fn card_rewrite_covers_every_interface() {
    let up = url("http://127.0.0.1:9000");
    let public = url("http://proxy:8080");
    let mut card = json!({
        "name": "a",
        "url": "http://127.0.0.1:9000/rpc",
        "additionalInterfaces": [{"url": "http://127.0.0.1:9000/rest", "transport": "HTTP+JSON"}],
        "supportedInterfaces": [{"url": "http://127.0.0.1:9000/v10", "protocolBinding": "JSONRPC"}],
        "provider": {"url": "https://vendor.example"},
    });
    rewrite_card(&mut card, &up, &public);
    assert_eq!(card["url"], "http://proxy:8080/rpc");
    assert_eq!(
        card["additionalInterfaces"][0]["url"],
        "http://proxy:8080/rest"
    );
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        "http://proxy:8080/v10"
    );
    assert_eq!(card["provider"]["url"], "https://vendor.example");
}

#[test]
fn translated_cards_keep_jsonrpc_and_rest() {
    let v03 = json!({
        "name": "a", "description": "d", "version": "1", "protocolVersion": "0.3.0",
        "url": "http://u/rest", "preferredTransport": "HTTP+JSON",
        "additionalInterfaces": [
            {"url": "http://u/rest", "transport": "HTTP+JSON"},
            {"url": "http://u/grpc", "transport": "GRPC"},
            {"url": "http://u/rpc", "transport": "JSONRPC"}
        ],
        "capabilities": {}, "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"], "skills": []
    });
    let up = url("http://u");
    let all = crate::config::AllowedHosts::resolve(None, &up, None).unwrap();
    let ends = |c: &Value| crate::card::endpoints::resolve(c, &up, &all);
    let v10 = translate_card(&v03, Version::V10, &ends(&v03)).unwrap();
    let ifs = v10["supportedInterfaces"].as_array().unwrap();
    let got: Vec<(&str, &str)> = ifs
        .iter()
        .map(|i| {
            (
                i["url"].as_str().unwrap(),
                i["protocolBinding"].as_str().unwrap(),
            )
        })
        .collect();
    // JSON-RPC first; the agent's gRPC is not the proxy's to offer.
    assert_eq!(
        got,
        [("http://u/rpc", "JSONRPC"), ("http://u/rest", "HTTP+JSON")],
        "{v10}"
    );
    assert!(ifs.iter().all(|i| i["protocolVersion"] == "1.0"), "{v10}");
    assert_eq!(card_version(&v10), Version::V10);

    let back = translate_card(&v10, Version::V03, &ends(&v10)).unwrap();
    assert_eq!(back["url"], "http://u/rpc");
    assert_eq!(back["preferredTransport"], "JSONRPC");
    assert_eq!(
        back["additionalInterfaces"][1]["transport"], "HTTP+JSON",
        "{back}"
    );
    assert_eq!(card_version(&back), Version::V03);

    let rest_only = json!({"name": "a", "description": "d", "version": "1",
            "supportedInterfaces": [{"url": "http://u/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}],
            "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": []});
    let v = translate_card(&rest_only, Version::V03, &ends(&rest_only)).unwrap();
    assert_eq!(
        (v["url"].as_str(), v["preferredTransport"].as_str()),
        (Some("http://u/rest"), Some("HTTP+JSON"))
    );
    let grpc_only = json!({"name": "a", "description": "d", "version": "1",
            "supportedInterfaces": [{"url": "http://u/g", "protocolBinding": "GRPC", "protocolVersion": "1.0"}],
            "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": []});
    assert!(translate_card(&grpc_only, Version::V03, &ends(&grpc_only)).is_err());
    // With the proxy's gRPC listener (advertised next by cards::advertise)
    // it is served with that one: nothing of the agent's gRPC address.
    let v = translate_card_for(&grpc_only, Version::V03, &ends(&grpc_only), true).unwrap();
    assert_eq!(v["preferredTransport"], "GRPC");
    assert_eq!(v.get("url"), None);
    assert_eq!(v["additionalInterfaces"], json!([]));
    let mut grpc_only_v03 = v.clone();
    grpc_only_v03["url"] = json!("http://u/g");
    grpc_only_v03["additionalInterfaces"] = json!([{"url": "http://u/g", "transport": "GRPC"}]);
    let v = translate_card_for(&grpc_only_v03, Version::V10, &ends(&grpc_only_v03), true).unwrap();
    assert_eq!(v["supportedInterfaces"], json!([]));
    // A second HTTP+JSON interface, or one on a host not allowed, is
    // not served: not offered.
    let mut two = v03.clone();
    two["additionalInterfaces"] = json!([
        {"url": "http://evil:1/rest", "transport": "HTTP+JSON"},
        {"url": "http://u/rpc", "transport": "JSONRPC"},
    ]);
    let v10 = translate_card(&two, Version::V10, &ends(&two)).unwrap();
    let ifs = v10["supportedInterfaces"].as_array().unwrap();
    let urls: Vec<&str> = ifs.iter().map(|i| i["url"].as_str().unwrap()).collect();
    assert_eq!(urls, ["http://u/rpc", "http://u/rest"], "{v10}");
    // Nothing usable: JSON-RPC at upstream.url, offered.
    let mut elsewhere = v03.clone();
    elsewhere["url"] = json!("http://evil:1/");
    elsewhere["preferredTransport"] = json!("JSONRPC");
    elsewhere
        .as_object_mut()
        .unwrap()
        .remove("additionalInterfaces");
    let v10 = translate_card(&elsewhere, Version::V10, &ends(&elsewhere)).unwrap();
    assert_eq!(
        v10["supportedInterfaces"],
        json!([{"url": "http://u", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}])
    );
}

#[test]
fn v03_schemes_in_both_forms() {
    // An a2a-python 0.3 card (JSON-schema) and an a2a-js 0.3 one (ProtoJSON).
    let mut schema = json!({"securitySchemes": {
            "b": {"type": "http", "scheme": "bearer"},
            "k": {"type": "apiKey", "in": "query", "name": "k", "x-extra": 1},
            "odd": {"type": "kerberos"}
        }, "security": [{"b": []}]});
    v03_scheme_forms(&mut schema);
    assert_eq!(
        schema,
        json!({"securitySchemes": {
                "b": {"type": "http", "scheme": "bearer",
                      "httpAuthSecurityScheme": {"scheme": "bearer"}},
                "k": {"type": "apiKey", "in": "query", "name": "k", "x-extra": 1,
                      "apiKeySecurityScheme": {"location": "query", "name": "k"}},
                "odd": {"type": "kerberos"}
            }, "security": [{"b": []}]})
    );
    let mut proto = json!({"securitySchemes": {
            "o": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://i/.well-known"}}
        }, "security": [{"schemes": {"o": {"list": ["openid"]}}}]});
    v03_scheme_forms(&mut proto);
    assert_eq!(
        proto,
        json!({"securitySchemes": {
                "o": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://i/.well-known"},
                      "type": "openIdConnect", "openIdConnectUrl": "https://i/.well-known"}
            }, "security": [{"schemes": {"o": {"list": ["openid"]}}}]})
    );
    let mut none = json!({"name": "a", "securitySchemes": []});
    v03_scheme_forms(&mut none);
    assert_eq!(none, json!({"name": "a", "securitySchemes": []}));
}

#[test]
fn cache_control() {
    let d = Duration::from_secs(60);
    assert_eq!(ttl_from_cache_control(None, d), d);
    assert_eq!(
        ttl_from_cache_control(Some("public, max-age=300"), d),
        Duration::from_secs(300)
    );
    assert_eq!(ttl_from_cache_control(Some("no-cache"), d), Duration::ZERO);
    assert_eq!(ttl_from_cache_control(Some("max-age=x"), d), d);
}

#[test]
fn etags() {
    let a = etag_for(CardShape::V03, b"{}");
    let b = etag_for(CardShape::V10, b"{}");
    let h = etag_for(CardShape::Hybrid, b"{}");
    assert!(a != b && a != h && b != h);
    assert!(etag_matches(&a, &a));
    assert!(etag_matches(&format!("W/{a}, \"x\""), &a));
    assert!(etag_matches("*", &a));
    assert!(!etag_matches("\"x\"", &a));
}

/// The hybrid card (issue #37 item 4): every security scheme carries its
/// v1.0 member, also one the v1.0 card lacks (made from its v0.3 form),
/// the v0.3 members beside it.
#[test]
fn hybrid_schemes_carry_their_v10_member() {
    let v03 = json!({"name": "a", "url": "http://p/", "securitySchemes": {
        "bearer": {"type": "http", "scheme": "bearer"},
        "key": {"type": "apiKey", "in": "header", "name": "X-Key"}}});
    // The v1.0 card has only one of them.
    let v10 = json!({"name": "a", "supportedInterfaces": [], "securitySchemes": {
        "bearer": {"httpAuthSecurityScheme": {"scheme": "bearer"}}}});
    let h = hybrid(&v03, &v10);
    let s = &h["securitySchemes"];
    assert_eq!(s["bearer"]["type"], "http");
    assert_eq!(
        s["bearer"]["httpAuthSecurityScheme"],
        json!({"scheme": "bearer"})
    );
    assert_eq!(s["key"]["in"], "header");
    assert_eq!(
        s["key"]["apiKeySecurityScheme"],
        json!({"location": "header", "name": "X-Key"})
    );
}

#[test]
fn http_dates() {
    let t = std::time::UNIX_EPOCH + Duration::from_secs(784_111_777);
    assert_eq!(http_date(t), "Sun, 06 Nov 1994 08:49:37 GMT");
    let now = std::time::SystemTime::now();
    assert_eq!(
        parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT", now),
        Some(t)
    );
    let future = http_date(now + Duration::from_secs(3600));
    assert_eq!(parse_http_date(&future, now), None);
    assert_eq!(parse_http_date("yesterday", now), None);
}
