//! Agent card: same-version serde round trips, cross-version round trips on
//! the lossless domain, normal-form properties for lossy inputs, robustness
//! on mangled input, and exact-JSON unit tests for every lossy decision.

use proptest::prelude::*;
use serde_json::{json, Value};

use translate::agent_card::{to_v03, to_v10};
use translate::strategy::card::{v03_card, v03_card_any, v10_card, v10_card_any};
use translate::v03::agent_card as v03;
use translate::v10::agent_card as v10;
use translate::TranslateError;

fn v03_from(v: Value) -> v03::AgentCard {
    serde_json::from_value(v).expect("valid v0.3 card")
}

fn v10_from(v: Value) -> v10::AgentCard {
    serde_json::from_value(v).expect("valid v1.0 card")
}

fn json_of<T: serde::Serialize>(x: &T) -> Value {
    serde_json::to_value(x).expect("serialisable")
}

/// v0.3 → v1.0 as JSON.
fn up(v: Value) -> Value {
    json_of(&to_v10(v03_from(v)).expect("translates"))
}

/// v1.0 → v0.3 as JSON.
fn down(v: Value) -> Value {
    json_of(&to_v03(v10_from(v)).expect("translates"))
}

/// A minimal v0.3 card with `extra` merged in at the top level.
fn v03_base(extra: Value) -> Value {
    let mut card = json!({
        "protocolVersion": "0.3.0",
        "name": "Echo",
        "description": "Echoes",
        "url": "https://agent.example/a2a",
        "preferredTransport": "JSONRPC",
        "additionalInterfaces": [{"url": "https://agent.example/a2a", "transport": "JSONRPC"}],
        "version": "1.2.3",
        "capabilities": {},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": []
    });
    merge(&mut card, extra);
    card
}

/// The v1.0 counterpart of [`v03_base`] with `extra` merged in.
fn v10_base(extra: Value) -> Value {
    let mut card = json!({
        "name": "Echo",
        "description": "Echoes",
        "supportedInterfaces": [{
            "url": "https://agent.example/a2a",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "0.3"
        }],
        "version": "1.2.3",
        "capabilities": {},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": []
    });
    merge(&mut card, extra);
    card
}

fn merge(into: &mut Value, extra: Value) {
    if let (Some(m), Value::Object(e)) = (into.as_object_mut(), extra) {
        for (k, v) in e {
            m.insert(k, v);
        }
    }
}

// ------------------------------------------------------------ properties

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn v03_serde_round_trip(card in v03_card_any()) {
        let text = serde_json::to_string(&card).unwrap();
        let back: v03::AgentCard = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back, card);
    }

    #[test]
    fn v10_serde_round_trip(card in v10_card_any()) {
        let text = serde_json::to_string(&card).unwrap();
        let back: v10::AgentCard = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back, card);
    }

    #[test]
    fn v03_to_v10_to_v03_is_identity(card in v03_card()) {
        let there = to_v10(card.clone()).unwrap();
        let back = to_v03(there).unwrap();
        prop_assert_eq!(back, card);
    }

    #[test]
    fn v10_to_v03_to_v10_is_identity(card in v10_card()) {
        let there = to_v03(card.clone()).unwrap();
        let back = to_v10(there).unwrap();
        prop_assert_eq!(back, card);
    }

    /// Translated cards survive their own version's JSON round trip.
    #[test]
    fn translated_json_parses_back(a in v03_card_any(), b in v10_card_any()) {
        let up = to_v10(a).unwrap();
        let parsed: v10::AgentCard = serde_json::from_value(json_of(&up)).unwrap();
        prop_assert_eq!(parsed, up);
        let down = to_v03(b).unwrap();
        let parsed: v03::AgentCard = serde_json::from_value(json_of(&down)).unwrap();
        prop_assert_eq!(parsed, down);
    }

    /// Any v0.3 card reaches a normal form after one round trip, and the
    /// normal form says the same thing in v1.0.
    #[test]
    fn v03_normal_form(card in v03_card_any()) {
        let up = to_v10(card).unwrap();
        let normal = to_v03(up.clone()).unwrap();
        prop_assert_eq!(to_v10(normal.clone()).unwrap(), up.clone());
        prop_assert_eq!(to_v03(to_v10(normal.clone()).unwrap()).unwrap(), normal.clone());

        prop_assert_eq!(normal.protocol_version.as_deref(), Some("0.3.0"));
        prop_assert!(normal.signatures.is_none());
        prop_assert!(normal.supports_extended_agent_card.is_none());
        prop_assert!(normal.capabilities.state_transition_history.is_none());
        let additional = normal.additional_interfaces.clone().unwrap();
        prop_assert_eq!(&additional[0].url, &normal.url);
        prop_assert_eq!(Some(&additional[0].transport), normal.preferred_transport.as_ref());
        for (i, a) in additional.iter().enumerate() {
            for b in &additional[i + 1..] {
                prop_assert!(a.url != b.url || a.transport != b.transport, "repeated interface");
            }
        }
        for s in normal.security_schemes.iter().flat_map(|m| m.values()) {
            if let v03::SecurityScheme::OAuth2(o) = s {
                let n = usize::from(o.flows.authorization_code.is_some())
                    + usize::from(o.flows.client_credentials.is_some())
                    + usize::from(o.flows.implicit.is_some())
                    + usize::from(o.flows.password.is_some());
                prop_assert!(n <= 1, "several flows in normal form");
            }
        }
        prop_assert!(up.signatures.is_none());
        for i in &up.supported_interfaces {
            prop_assert_eq!(i.protocol_version.as_str(), "0.3");
        }
    }

    /// Any v1.0 card with an interface reaches a normal form after one round
    /// trip, and the normal form says the same thing in v0.3.
    #[test]
    fn v10_normal_form(card in v10_card_any()) {
        let n_interfaces = card.supported_interfaces.len();
        let down = to_v03(card).unwrap();
        let normal = to_v10(down.clone()).unwrap();
        prop_assert_eq!(to_v03(normal.clone()).unwrap(), down.clone());
        prop_assert_eq!(to_v10(to_v03(normal.clone()).unwrap()).unwrap(), normal.clone());

        prop_assert!(down.additional_interfaces.as_ref().is_some_and(|a| !a.is_empty() && a.len() <= n_interfaces));
        prop_assert!(down.signatures.is_none());
        prop_assert!(normal.signatures.is_none());
        prop_assert!(normal.supported_interfaces.len() <= n_interfaces);
        for i in &normal.supported_interfaces {
            prop_assert_eq!(i.protocol_version.as_str(), "0.3");
            prop_assert!(i.tenant.is_none());
        }
        for s in normal.security_schemes.iter().flat_map(|m| m.values()) {
            prop_assert!(s.extra.is_empty());
            match &s.scheme {
                v10::Scheme::ApiKey(k) => {
                    prop_assert!(["header", "query", "cookie"].contains(&k.location.as_str()));
                }
                v10::Scheme::OAuth2(o) => match &o.flows.flow {
                    Some(v10::OAuthFlow::DeviceCode(_)) => prop_assert!(false, "deviceCode kept"),
                    Some(v10::OAuthFlow::AuthorizationCode(a)) => {
                        prop_assert!(a.pkce_required.is_none());
                    }
                    Some(v10::OAuthFlow::ClientCredentials(_))
                    | Some(v10::OAuthFlow::Implicit(_))
                    | Some(v10::OAuthFlow::Password(_))
                    | None => {}
                },
                v10::Scheme::HttpAuth(_) | v10::Scheme::OpenIdConnect(_) | v10::Scheme::Mtls(_) => {}
            }
        }
    }

    /// Mangled cards (a member replaced by arbitrary JSON) either fail to
    /// parse or translate; nothing panics.
    #[test]
    fn mangled_cards_never_panic(
        a in v03_card_any(),
        b in v10_card_any(),
        path in proptest::collection::vec(0usize..40, 1..4),
        junk in junk_value(),
    ) {
        for (is_v03, mut doc) in [(true, json_of(&a)), (false, json_of(&b))] {
            mangle(&mut doc, &path, junk.clone());
            if is_v03 {
                if let Ok(card) = serde_json::from_value::<v03::AgentCard>(doc) {
                    let _ = to_v10(card);
                }
            } else if let Ok(card) = serde_json::from_value::<v10::AgentCard>(doc) {
                let _ = to_v03(card);
            }
        }
    }
}

/// Arbitrary JSON for [`mangled_cards_never_panic`].
fn junk_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop_oneof![
            Just("type".to_string()),
            Just("apiKeySecurityScheme".to_string()),
            Just("deviceCode".to_string()),
            ".{0,6}".prop_map(|s: String| s),
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("type".to_string()),
                    Just("flows".to_string()),
                    Just("apiKeySecurityScheme".to_string()),
                    Just("authorizationCode".to_string()),
                    Just("deviceCode".to_string()),
                    Just("url".to_string()),
                    "[a-z]{1,4}".prop_map(|s: String| s),
                ],
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Walks `path` (indices into object members / array items) and replaces
/// the value reached with `junk`.
fn mangle(doc: &mut Value, path: &[usize], junk: Value) {
    let Some((&i, rest)) = path.split_first() else {
        *doc = junk;
        return;
    };
    match doc {
        Value::Object(m) if !m.is_empty() => {
            let n = m.len();
            if let Some((_, v)) = m.iter_mut().nth(i % n) {
                mangle(v, rest, junk);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            let n = a.len();
            if let Some(v) = a.get_mut(i % n) {
                mangle(v, rest, junk);
            }
        }
        _ => *doc = junk,
    }
}

// ------------------------------------------------------------ unit tests

#[test]
fn full_card_both_ways() {
    let v03 = v03_base(json!({
        "url": "https://agent.example/a2a",
        "preferredTransport": "JSONRPC",
        "additionalInterfaces": [
            {"url": "https://agent.example/a2a", "transport": "JSONRPC"},
            {"url": "https://agent.example/grpc", "transport": "GRPC"}
        ],
        "iconUrl": "https://agent.example/icon.png",
        "provider": {"organization": "Example", "url": "https://example.com"},
        "documentationUrl": "https://agent.example/docs",
        "capabilities": {
            "streaming": true,
            "pushNotifications": false,
            "extensions": [{"uri": "urn:x", "required": true, "params": {"a": 1}}]
        },
        "securitySchemes": {
            "bearer": {"type": "http", "scheme": "Bearer", "bearerFormat": "JWT"},
            "mtls": {"type": "mutualTLS", "description": "client cert"},
            "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://id.example/.well-known/openid-configuration"}
        },
        "security": [{"bearer": []}],
        "skills": [{
            "id": "echo", "name": "Echo", "description": "echoes", "tags": ["t"],
            "examples": ["hi"], "inputModes": ["text/plain"], "outputModes": ["application/json"],
            "security": [{"oidc": ["openid"]}]
        }],
        "supportsAuthenticatedExtendedCard": true,
        "x-vendor": {"keep": true}
    }));
    let v10 = v10_base(json!({
        "supportedInterfaces": [
            {"url": "https://agent.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": "https://agent.example/grpc", "protocolBinding": "GRPC", "protocolVersion": "0.3"}
        ],
        "iconUrl": "https://agent.example/icon.png",
        "provider": {"url": "https://example.com", "organization": "Example"},
        "documentationUrl": "https://agent.example/docs",
        "capabilities": {
            "streaming": true,
            "pushNotifications": false,
            "extensions": [{"uri": "urn:x", "required": true, "params": {"a": 1}}],
            "extendedAgentCard": true
        },
        "securitySchemes": {
            "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
            "mtls": {"mtlsSecurityScheme": {"description": "client cert"}},
            "oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://id.example/.well-known/openid-configuration"}}
        },
        "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
        "skills": [{
            "id": "echo", "name": "Echo", "description": "echoes", "tags": ["t"],
            "examples": ["hi"], "inputModes": ["text/plain"], "outputModes": ["application/json"],
            "securityRequirements": [{"schemes": {"oidc": {"list": ["openid"]}}}]
        }],
        "x-vendor": {"keep": true}
    }));
    assert_eq!(up(v03.clone()), v10);
    assert_eq!(down(v10), v03);
}

#[test]
fn oauth_multi_flow_precedence() {
    let flows = json!({
        "implicit": {"authorizationUrl": "https://a.example/auth", "scopes": {"r": "read"}},
        "password": {"tokenUrl": "https://a.example/pw", "scopes": {}},
        "clientCredentials": {"tokenUrl": "https://a.example/token", "scopes": {"w": "write"}},
        "authorizationCode": {
            "authorizationUrl": "https://a.example/auth",
            "tokenUrl": "https://a.example/token",
            "refreshUrl": "https://a.example/refresh",
            "scopes": {"r": "read"}
        }
    });
    let card = v03_base(json!({
        "securitySchemes": {"oauth": {"type": "oauth2", "flows": flows}}
    }));
    let got = up(card);
    assert_eq!(
        got["securitySchemes"]["oauth"],
        json!({"oauth2SecurityScheme": {"flows": {"authorizationCode": {
            "authorizationUrl": "https://a.example/auth",
            "tokenUrl": "https://a.example/token",
            "refreshUrl": "https://a.example/refresh",
            "scopes": {"r": "read"}
        }}}})
    );

    // Without authorizationCode, clientCredentials wins over implicit and password.
    let card = v03_base(
        json!({"securitySchemes": {"oauth": {"type": "oauth2", "flows": {
            "implicit": {"authorizationUrl": "https://a.example/auth", "scopes": {}},
            "password": {"tokenUrl": "https://a.example/pw", "scopes": {}},
            "clientCredentials": {"tokenUrl": "https://a.example/token", "scopes": {}}
        }}}}),
    );
    assert_eq!(
        up(card)["securitySchemes"]["oauth"]["oauth2SecurityScheme"]["flows"],
        json!({"clientCredentials": {"tokenUrl": "https://a.example/token", "scopes": {}}})
    );

    // Then implicit over password.
    let card = v03_base(
        json!({"securitySchemes": {"oauth": {"type": "oauth2", "flows": {
            "password": {"tokenUrl": "https://a.example/pw", "scopes": {}},
            "implicit": {"authorizationUrl": "https://a.example/auth", "scopes": {}}
        }}}}),
    );
    assert_eq!(
        up(card)["securitySchemes"]["oauth"]["oauth2SecurityScheme"]["flows"],
        json!({"implicit": {"authorizationUrl": "https://a.example/auth", "scopes": {}}})
    );
}

#[test]
fn device_code_dropped_and_pkce_dropped() {
    let card = v10_base(json!({"securitySchemes": {
        "device": {"oauth2SecurityScheme": {"flows": {"deviceCode": {
            "deviceAuthorizationUrl": "https://a.example/device",
            "tokenUrl": "https://a.example/token",
            "scopes": {"r": "read"}
        }}, "description": "tv"}},
        "pkce": {"oauth2SecurityScheme": {"flows": {"authorizationCode": {
            "authorizationUrl": "https://a.example/auth",
            "tokenUrl": "https://a.example/token",
            "scopes": {},
            "pkceRequired": true
        }}}}
    }}));
    let got = down(card);
    assert_eq!(
        got["securitySchemes"]["device"],
        json!({"type": "oauth2", "description": "tv", "flows": {}})
    );
    assert_eq!(
        got["securitySchemes"]["pkce"],
        json!({"type": "oauth2", "flows": {"authorizationCode": {
            "authorizationUrl": "https://a.example/auth",
            "tokenUrl": "https://a.example/token",
            "scopes": {}
        }}})
    );
    // And back: the device-code scheme has no flow at all.
    assert_eq!(
        up(got)["securitySchemes"]["device"],
        json!({"oauth2SecurityScheme": {"description": "tv", "flows": {}}})
    );
}

#[test]
fn extended_card_flag_moves_into_capabilities() {
    for (member, value) in [
        ("supportsAuthenticatedExtendedCard", true),
        ("supportsAuthenticatedExtendedCard", false),
        ("supportsExtendedAgentCard", true),
    ] {
        let mut extra = serde_json::Map::new();
        extra.insert(member.to_string(), Value::Bool(value));
        let got = up(v03_base(Value::Object(extra)));
        assert_eq!(
            got["capabilities"],
            json!({"extendedAgentCard": value}),
            "{member}"
        );
        assert!(got.get(member).is_none());
    }
    // Either spelling true wins over a false one.
    let got = up(v03_base(json!({
        "supportsAuthenticatedExtendedCard": false,
        "supportsExtendedAgentCard": true
    })));
    assert_eq!(got["capabilities"]["extendedAgentCard"], json!(true));
    // Absent stays absent.
    assert_eq!(up(v03_base(json!({})))["capabilities"], json!({}));

    let got = down(v10_base(
        json!({"capabilities": {"streaming": true, "extendedAgentCard": true}}),
    ));
    assert_eq!(got["supportsAuthenticatedExtendedCard"], json!(true));
    assert_eq!(got["capabilities"], json!({"streaming": true}));
    assert!(got.get("supportsExtendedAgentCard").is_none());
}

#[test]
fn state_transition_history_dropped() {
    let got = up(v03_base(
        json!({"capabilities": {"streaming": true, "stateTransitionHistory": true}}),
    ));
    assert_eq!(got["capabilities"], json!({"streaming": true}));
}

#[test]
fn security_to_security_requirements() {
    let v03 = v03_base(json!({
        "securitySchemes": {
            "oauth": {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": "https://t.example", "scopes": {"read": "r"}}}},
            "key": {"type": "apiKey", "in": "header", "name": "X-Key"}
        },
        "security": [{"oauth": ["read", "write"], "key": []}, {"key": []}]
    }));
    let got = up(v03.clone());
    assert_eq!(
        got["securityRequirements"],
        json!([
            {"schemes": {"key": {"list": []}, "oauth": {"list": ["read", "write"]}}},
            {"schemes": {"key": {"list": []}}}
        ])
    );
    assert_eq!(
        got["securitySchemes"]["key"],
        json!({"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}})
    );
    assert_eq!(down(got), v03);

    // ProtoJSON omits empty lists: `{}` means no scopes.
    let got = down(v10_base(
        json!({"securityRequirements": [{"schemes": {"key": {}}}, {}]}),
    ));
    assert_eq!(got["security"], json!([{"key": []}, {}]));
}

#[test]
fn oneof_security_scheme_accepted_in_v03_card() {
    let card = v03_base(json!({"securitySchemes": {
        "key": {"apiKeySecurityScheme": {"location": "query", "name": "k", "description": "d"}},
        "oauth": {"oauth2SecurityScheme": {"flows": {"password": {"tokenUrl": "https://t.example", "scopes": {}}}}},
        "tls": {"mtlsSecurityScheme": {}}
    }}));
    let parsed = v03_from(card.clone());
    let rendered = json_of(&parsed);
    assert_eq!(
        rendered["securitySchemes"],
        json!({
            "key": {"type": "apiKey", "in": "query", "name": "k", "description": "d"},
            "oauth": {"type": "oauth2", "flows": {"password": {"tokenUrl": "https://t.example", "scopes": {}}}},
            "tls": {"type": "mutualTLS"}
        })
    );
    assert_eq!(
        up(card)["securitySchemes"]["key"],
        json!({"apiKeySecurityScheme": {"description": "d", "location": "query", "name": "k"}})
    );
}

#[test]
fn bad_security_schemes_are_errors_not_panics() {
    for scheme in [
        json!({}),
        json!({"type": 3}),
        json!({"type": "kerberos"}),
        json!({"type": "apiKey", "in": "body", "name": "k"}),
        json!({"apiKeySecurityScheme": {}, "mtlsSecurityScheme": {}}),
        json!({"oauth2SecurityScheme": {"flows": {"implicit": {}, "password": {}}}}),
        json!([]),
    ] {
        let card = v03_base(json!({"securitySchemes": {"s": scheme.clone()}}));
        assert!(
            serde_json::from_value::<v03::AgentCard>(card).is_err(),
            "{scheme}"
        );
    }
    let card = v10_base(
        json!({"securitySchemes": {"s": {"type": "apiKey", "in": "header", "name": "k"}}}),
    );
    assert!(serde_json::from_value::<v10::AgentCard>(card).is_err());
}

#[test]
fn signatures_dropped() {
    let sig = json!([{"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "c2ln", "header": {"kid": "k1"}}]);
    let got = up(v03_base(json!({"signatures": sig.clone()})));
    assert!(got.get("signatures").is_none());
    assert_eq!(got, v10_base(json!({})));
    let got = down(v10_base(json!({"signatures": sig})));
    assert!(got.get("signatures").is_none());
    assert_eq!(got, v03_base(json!({})));
}

#[test]
fn interfaces_v03_to_v10_default_transport_and_dedup() {
    let got = up(v03_base(json!({
        "protocolVersion": "0.2.9",
        "preferredTransport": null,
        "additionalInterfaces": [
            {"url": "https://agent.example/grpc", "transport": "GRPC"},
            {"url": "https://agent.example/a2a", "transport": "JSONRPC", "x-note": "primary"},
            {"url": "https://agent.example/grpc", "transport": "GRPC"}
        ]
    })));
    assert_eq!(
        got["supportedInterfaces"],
        json!([
            {"url": "https://agent.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3", "x-note": "primary"},
            {"url": "https://agent.example/grpc", "protocolBinding": "GRPC", "protocolVersion": "0.3"}
        ])
    );
    let back = down(got);
    assert_eq!(back["protocolVersion"], json!("0.3.0"));
    assert_eq!(back["preferredTransport"], json!("JSONRPC"));
    assert_eq!(
        back["additionalInterfaces"],
        json!([
            {"url": "https://agent.example/a2a", "transport": "JSONRPC", "x-note": "primary"},
            {"url": "https://agent.example/grpc", "transport": "GRPC"}
        ])
    );

    // No additionalInterfaces at all: the primary alone.
    let mut card = v03_base(json!({"preferredTransport": "HTTP+JSON"}));
    card.as_object_mut().unwrap().remove("additionalInterfaces");
    assert_eq!(
        up(card)["supportedInterfaces"],
        json!([{"url": "https://agent.example/a2a", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"}])
    );
}

#[test]
fn interfaces_v10_to_v03_first_is_primary() {
    let got = down(v10_base(json!({"supportedInterfaces": [
        {"url": "https://agent.example/v1", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        {"url": "agent.example:443", "protocolBinding": "GRPC", "protocolVersion": "0.3", "tenant": "t1"}
    ]})));
    assert_eq!(got["url"], json!("https://agent.example/v1"));
    assert_eq!(got["preferredTransport"], json!("HTTP+JSON"));
    assert_eq!(got["protocolVersion"], json!("0.3.0"));
    assert_eq!(
        got["additionalInterfaces"],
        json!([
            {"url": "https://agent.example/v1", "transport": "HTTP+JSON"},
            {"url": "agent.example:443", "transport": "GRPC"}
        ])
    );
}

#[test]
fn card_without_interfaces_is_rejected() {
    let mut card = v10_base(json!({}));
    card.as_object_mut().unwrap().remove("supportedInterfaces");
    let err = to_v03(v10_from(card)).unwrap_err();
    assert!(matches!(err, TranslateError::Invalid { .. }));
    assert_eq!(err.jsonrpc_code(), -32602);
    assert!(err.to_string().contains("supportedInterfaces"));
}

#[test]
fn api_key_location_normalised() {
    for (location, want) in [
        ("header", "header"),
        ("query", "query"),
        ("cookie", "cookie"),
        ("Query", "query"),
        ("path", "header"),
        ("", "header"),
    ] {
        let got = down(v10_base(
            json!({"securitySchemes": {"k": {"apiKeySecurityScheme": {"location": location, "name": "k"}}}}),
        ));
        assert_eq!(
            got["securitySchemes"]["k"],
            json!({"type": "apiKey", "in": want, "name": "k"}),
            "{location}"
        );
    }
}

#[test]
fn hybrid_members_are_replaced_not_copied() {
    // An a2a-python style hybrid v1.0 card.
    let hybrid = v10_base(json!({
        "protocolVersion": "0.3.0",
        "url": "https://stale.example",
        "preferredTransport": "GRPC",
        "additionalInterfaces": [],
        "supportsAuthenticatedExtendedCard": true,
        "security": [{"x": []}],
        "securitySchemes": {"k": {
            "apiKeySecurityScheme": {"location": "header", "name": "X-Key"},
            "type": "apiKey", "in": "header", "name": "X-Key",
            "x-keep": 1
        }},
        "capabilities": {"stateTransitionHistory": false},
        "x-keep": "yes"
    }));
    let got = down(hybrid);
    assert_eq!(
        got,
        v03_base(json!({
            "securitySchemes": {"k": {"type": "apiKey", "in": "header", "name": "X-Key", "x-keep": 1}},
            "x-keep": "yes"
        }))
    );
    // And a v0.3 card carrying v1.0 members.
    let hybrid = v03_base(json!({
        "supportedInterfaces": [{"url": "https://stale.example", "protocolBinding": "GRPC", "protocolVersion": "1.0"}],
        "securityRequirements": [],
        "capabilities": {"extendedAgentCard": true}
    }));
    assert_eq!(
        up(hybrid),
        v10_base(json!({"capabilities": {"extendedAgentCard": true}}))
    );
}

#[test]
fn unknown_members_beside_security_oneof_move_inside() {
    let got = down(v10_base(json!({
        "securitySchemes": {"m": {"mtlsSecurityScheme": {"x-in": 1}, "x-out": 2}},
        "securityRequirements": [{"schemes": {"m": {"list": ["a"], "x-l": 1}}, "x-r": 1}]
    })));
    assert_eq!(
        got["securitySchemes"]["m"],
        json!({"type": "mutualTLS", "x-out": 2, "x-in": 1})
    );
    assert_eq!(got["security"], json!([{"m": ["a"]}]));
    assert_eq!(
        up(got)["securitySchemes"]["m"],
        json!({"mtlsSecurityScheme": {"x-out": 2, "x-in": 1}})
    );
}

#[test]
fn protojson_defaults_read_as_empty() {
    // A v1.0 card where ProtoJSON omitted every empty REQUIRED field.
    let card = v10_from(json!({"supportedInterfaces": [{"url": "https://a.example"}]}));
    let got = json_of(&to_v03(card).unwrap());
    assert_eq!(
        got,
        json!({
            "protocolVersion": "0.3.0",
            "name": "",
            "description": "",
            "url": "https://a.example",
            "preferredTransport": "",
            "additionalInterfaces": [{"url": "https://a.example", "transport": ""}],
            "version": "",
            "capabilities": {},
            "defaultInputModes": [],
            "defaultOutputModes": [],
            "skills": []
        })
    );
}

#[test]
fn interfaces_differing_only_in_version_collapse_going_to_v03() {
    let got = down(v10_base(json!({"supportedInterfaces": [
        {"url": "https://agent.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "https://agent.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3", "x-second": 1},
        {"url": "https://agent.example/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"}
    ]})));
    assert_eq!(
        got["additionalInterfaces"],
        json!([
            {"url": "https://agent.example/a2a", "transport": "JSONRPC"},
            {"url": "https://agent.example/rest", "transport": "HTTP+JSON"}
        ])
    );
}

#[test]
fn protojson_security_accepted_in_v03_card() {
    let card = v03_base(json!({
        "security": [{"schemes": {"oauth": {"list": ["read"]}, "key": {}}}, {"key": []}],
        "skills": [{"id": "s", "name": "s", "description": "s", "tags": [],
                    "security": [{"schemes": {"oauth": {"list": ["write"]}}}]}]
    }));
    let parsed = json_of(&v03_from(card.clone()));
    assert_eq!(
        parsed["security"],
        json!([{"key": [], "oauth": ["read"]}, {"key": []}])
    );
    assert_eq!(
        parsed["skills"][0]["security"],
        json!([{"oauth": ["write"]}])
    );
    let got = up(card);
    assert_eq!(
        got["securityRequirements"],
        json!([{"schemes": {"key": {"list": []}, "oauth": {"list": ["read"]}}}, {"schemes": {"key": {"list": []}}}])
    );
    // A scheme literally named "schemes" in the JSON-schema form stays a scheme.
    let card = v03_base(json!({"security": [{"schemes": ["a"]}]}));
    assert_eq!(
        json_of(&v03_from(card))["security"],
        json!([{"schemes": ["a"]}])
    );
}

#[test]
fn protojson_proto_names_accepted_in_v10_card() {
    let card = v10_from(json!({
        "supported_interfaces": [{"url": "https://a.example", "protocol_binding": "GRPC", "protocol_version": "0.3"}],
        "security_schemes": {
            "k": {"api_key_security_scheme": {"location": "cookie", "name": "c"}},
            "o": {"oauth2_security_scheme": {"flows": {"client_credentials": {"token_url": "https://t.example"}}}}
        },
        "default_input_modes": ["text/plain"]
    }));
    let got = json_of(&to_v03(card).unwrap());
    assert_eq!(got["preferredTransport"], json!("GRPC"));
    assert_eq!(got["defaultInputModes"], json!(["text/plain"]));
    assert_eq!(
        got["securitySchemes"],
        json!({
            "k": {"type": "apiKey", "in": "cookie", "name": "c"},
            "o": {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": "https://t.example", "scopes": {}}}}
        })
    );
}

#[test]
fn proto_spelled_members_of_the_other_version_do_not_collide() {
    let card = v03_base(json!({
        "supported_interfaces": [],
        "capabilities": {"extended_agent_card": false},
        "securitySchemes": {"o": {"type": "oauth2", "flows": {"device_code": {}, "implicit": {
            "authorizationUrl": "https://a.example", "scopes": {}, "refresh_url": "x"
        }}}}
    }));
    let got = up(card);
    // The output is a valid v1.0 card (no member given twice under two spellings).
    let reparsed = json_of(&v10_from(got.clone()));
    assert_eq!(reparsed, got);
    assert!(got.get("supported_interfaces").is_none());
    assert_eq!(got["capabilities"], json!({}));
    assert_eq!(
        got["securitySchemes"]["o"],
        json!({"oauth2SecurityScheme": {"flows": {"implicit": {"authorizationUrl": "https://a.example", "scopes": {}}}}})
    );
}
