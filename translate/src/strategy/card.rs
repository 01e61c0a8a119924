//! Proptest strategies for agent cards of both versions.
//!
//! [`v03_card`] and [`v10_card`] generate the *lossless* domain, on which
//! `to_v03(to_v10(x)) == x` and `to_v10(to_v03(y)) == y` hold exactly:
//! - v0.3: `protocolVersion` is `"0.3.0"`, `preferredTransport` is explicit,
//!   `additionalInterfaces` starts with the primary and has no repeated
//!   (url, transport) pair, OAuth schemes have at most one flow, no
//!   `stateTransitionHistory`, no `supportsExtendedAgentCard`, no signatures;
//! - v1.0: at least one interface, all with `protocolVersion: "0.3"` and no
//!   tenant, distinct (url, binding) pairs, API-key locations header / query
//!   / cookie, no `deviceCode` / `pkceRequired`, no unknown members on
//!   security requirements, string lists or beside a oneof member, no
//!   signatures.
//!
//! [`v03_card_any`] and [`v10_card_any`] add the lossy inputs (for
//! normal-form properties).
//!
//! Unknown members are named `x-…` so they never collide with a field of
//! either version.

use std::collections::BTreeMap;

use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use serde_json::{Map, Value};

use crate::json::Extras;
use crate::v03::agent_card as v03;
use crate::v10::agent_card as v10;

/// A short free text.
fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 ._-]{0,10}"
}

/// A URL-ish string.
fn url() -> impl Strategy<Value = String> {
    "https://[a-z]{1,6}\\.example/[a-z0-9]{0,4}"
}

/// A small JSON scalar.
fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| Value::from(i64::from(n))),
        text().prop_map(Value::String),
    ]
}

/// A small JSON value (scalars, one level of arrays / objects).
fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => scalar(),
        1 => vec(scalar(), 0..3).prop_map(Value::Array),
        1 => btree_map("[a-z]{1,4}", scalar(), 0..3)
            .prop_map(|m| Value::Object(m.into_iter().collect())),
    ]
}

/// Unknown members (`x-…` names).
pub fn extras() -> impl Strategy<Value = Extras> {
    prop_oneof![
        2 => Just(Extras::new()),
        1 => btree_map("x-[a-z]{1,5}", value(), 1..3).prop_map(|m| m.into_iter().collect()),
    ]
}

/// A `Struct`-like object (extension params, signature headers).
fn object() -> impl Strategy<Value = Map<String, Value>> {
    btree_map("[a-z]{1,5}", value(), 0..3).prop_map(|m| m.into_iter().collect())
}

/// A transport / protocol binding.
fn transport() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("JSONRPC".to_string()),
        Just("GRPC".to_string()),
        Just("HTTP+JSON".to_string()),
        "https://bindings\\.example/[a-z]{1,4}",
    ]
}

/// Scopes: name -> description.
fn scopes() -> impl Strategy<Value = BTreeMap<String, String>> {
    btree_map("[a-z:]{1,8}", text(), 0..3)
}

/// A list of media types.
fn modes() -> impl Strategy<Value = Vec<String>> {
    vec(
        prop_oneof![
            Just("text/plain".to_string()),
            Just("application/json".to_string()),
            "[a-z]{1,5}/[a-z]{1,5}",
        ],
        0..3,
    )
}

/// Keeps the first interface of each (url, transport) pair.
fn dedup<T>(items: Vec<T>, key: impl Fn(&T) -> (String, String)) -> Vec<T> {
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut out = Vec::new();
    for i in items {
        let k = key(&i);
        if !seen.contains(&k) {
            seen.push(k);
            out.push(i);
        }
    }
    out
}

// ---------------------------------------------------------------- v0.3

/// A v0.3 security requirement.
fn v03_requirement() -> impl Strategy<Value = v03::SecurityRequirement> {
    btree_map("[a-z]{1,6}", vec("[a-z:]{1,6}", 0..3), 0..3)
}

fn v03_extension() -> impl Strategy<Value = v03::AgentExtension> {
    (
        url(),
        option::of(text()),
        option::of(any::<bool>()),
        option::of(object()),
        extras(),
    )
        .prop_map(
            |(uri, description, required, params, extra)| v03::AgentExtension {
                uri,
                description,
                required,
                params,
                extra,
            },
        )
}

fn v03_skill() -> impl Strategy<Value = v03::AgentSkill> {
    (
        (text(), text(), text(), vec(text(), 0..3)),
        (
            option::of(vec(text(), 0..2)),
            option::of(modes()),
            option::of(modes()),
            option::of(vec(v03_requirement(), 0..2)),
        ),
        extras(),
    )
        .prop_map(
            |(
                (id, name, description, tags),
                (examples, input_modes, output_modes, security),
                extra,
            )| {
                v03::AgentSkill {
                    id,
                    name,
                    description,
                    tags,
                    examples,
                    input_modes,
                    output_modes,
                    security,
                    extra,
                }
            },
        )
}

fn v03_provider() -> impl Strategy<Value = v03::AgentProvider> {
    (text(), url(), extras()).prop_map(|(organization, url, extra)| v03::AgentProvider {
        organization,
        url,
        extra,
    })
}

fn v03_location() -> impl Strategy<Value = v03::ApiKeyLocation> {
    prop_oneof![
        Just(v03::ApiKeyLocation::Header),
        Just(v03::ApiKeyLocation::Query),
        Just(v03::ApiKeyLocation::Cookie),
    ]
}

fn v03_auth_code() -> impl Strategy<Value = v03::AuthorizationCodeOAuthFlow> {
    (url(), url(), option::of(url()), scopes(), extras()).prop_map(
        |(authorization_url, token_url, refresh_url, scopes, extra)| {
            v03::AuthorizationCodeOAuthFlow {
                authorization_url,
                token_url,
                refresh_url,
                scopes,
                extra,
            }
        },
    )
}

fn v03_client_credentials() -> impl Strategy<Value = v03::ClientCredentialsOAuthFlow> {
    (url(), option::of(url()), scopes(), extras()).prop_map(
        |(token_url, refresh_url, scopes, extra)| v03::ClientCredentialsOAuthFlow {
            token_url,
            refresh_url,
            scopes,
            extra,
        },
    )
}

fn v03_implicit() -> impl Strategy<Value = v03::ImplicitOAuthFlow> {
    (url(), option::of(url()), scopes(), extras()).prop_map(
        |(authorization_url, refresh_url, scopes, extra)| v03::ImplicitOAuthFlow {
            authorization_url,
            refresh_url,
            scopes,
            extra,
        },
    )
}

fn v03_password() -> impl Strategy<Value = v03::PasswordOAuthFlow> {
    (url(), option::of(url()), scopes(), extras()).prop_map(
        |(token_url, refresh_url, scopes, extra)| v03::PasswordOAuthFlow {
            token_url,
            refresh_url,
            scopes,
            extra,
        },
    )
}

/// OAuth flows with at most one flow (lossless).
fn v03_flows_one() -> impl Strategy<Value = v03::OAuthFlows> {
    let base = |extra: Extras| v03::OAuthFlows {
        extra,
        ..v03::OAuthFlows::default()
    };
    prop_oneof![
        extras().prop_map(base),
        (v03_auth_code(), extras()).prop_map(move |(f, e)| v03::OAuthFlows {
            authorization_code: Some(f),
            ..base(e)
        }),
        (v03_client_credentials(), extras()).prop_map(move |(f, e)| v03::OAuthFlows {
            client_credentials: Some(f),
            ..base(e)
        }),
        (v03_implicit(), extras()).prop_map(move |(f, e)| v03::OAuthFlows {
            implicit: Some(f),
            ..base(e)
        }),
        (v03_password(), extras()).prop_map(move |(f, e)| v03::OAuthFlows {
            password: Some(f),
            ..base(e)
        }),
    ]
}

/// OAuth flows with any subset of flows (lossy when more than one).
fn v03_flows_any() -> impl Strategy<Value = v03::OAuthFlows> {
    (
        option::of(v03_auth_code()),
        option::of(v03_client_credentials()),
        option::of(v03_implicit()),
        option::of(v03_password()),
        extras(),
    )
        .prop_map(
            |(authorization_code, client_credentials, implicit, password, extra)| v03::OAuthFlows {
                authorization_code,
                client_credentials,
                implicit,
                password,
                extra,
            },
        )
}

fn v03_scheme_with(
    flows: BoxedStrategy<v03::OAuthFlows>,
) -> impl Strategy<Value = v03::SecurityScheme> {
    prop_oneof![
        (option::of(text()), v03_location(), text(), extras()).prop_map(
            |(description, location, name, extra)| {
                v03::SecurityScheme::ApiKey(v03::ApiKeySecurityScheme {
                    description,
                    location,
                    name,
                    extra,
                })
            }
        ),
        (option::of(text()), text(), option::of(text()), extras()).prop_map(
            |(description, scheme, bearer_format, extra)| {
                v03::SecurityScheme::Http(v03::HttpAuthSecurityScheme {
                    description,
                    scheme,
                    bearer_format,
                    extra,
                })
            }
        ),
        (option::of(text()), flows, option::of(url()), extras()).prop_map(
            |(description, flows, oauth2_metadata_url, extra)| {
                v03::SecurityScheme::OAuth2(v03::OAuth2SecurityScheme {
                    description,
                    flows,
                    oauth2_metadata_url,
                    extra,
                })
            }
        ),
        (option::of(text()), url(), extras()).prop_map(
            |(description, open_id_connect_url, extra)| {
                v03::SecurityScheme::OpenIdConnect(v03::OpenIdConnectSecurityScheme {
                    description,
                    open_id_connect_url,
                    extra,
                })
            }
        ),
        (option::of(text()), extras()).prop_map(|(description, extra)| {
            v03::SecurityScheme::MutualTls(v03::MutualTlsSecurityScheme { description, extra })
        }),
    ]
}

/// A v0.3 security scheme on the lossless domain (at most one OAuth flow).
pub fn v03_security_scheme() -> impl Strategy<Value = v03::SecurityScheme> {
    v03_scheme_with(v03_flows_one().boxed())
}

fn v03_interface() -> impl Strategy<Value = v03::AgentInterface> {
    (url(), transport(), extras()).prop_map(|(url, transport, extra)| v03::AgentInterface {
        url,
        transport,
        extra,
    })
}

fn v03_signature() -> impl Strategy<Value = v03::AgentCardSignature> {
    (
        "[A-Za-z0-9_-]{1,12}",
        "[A-Za-z0-9_-]{1,12}",
        option::of(object()),
        extras(),
    )
        .prop_map(
            |(protected, signature, header, extra)| v03::AgentCardSignature {
                protected,
                signature,
                header,
                extra,
            },
        )
}

/// The parts of a v0.3 card that do not depend on the domain.
#[derive(Debug, Clone)]
struct V03Common {
    name: String,
    description: String,
    version: String,
    icon_url: Option<String>,
    provider: Option<v03::AgentProvider>,
    documentation_url: Option<String>,
    security: Option<Vec<v03::SecurityRequirement>>,
    default_input_modes: Vec<String>,
    default_output_modes: Vec<String>,
    skills: Vec<v03::AgentSkill>,
    extended: Option<bool>,
    extra: Extras,
}

fn v03_common() -> impl Strategy<Value = V03Common> {
    (
        (
            text(),
            text(),
            text(),
            option::of(url()),
            option::of(v03_provider()),
        ),
        (option::of(url()), option::of(vec(v03_requirement(), 0..3))),
        (modes(), modes(), vec(v03_skill(), 0..3)),
        (option::of(any::<bool>()), extras()),
    )
        .prop_map(
            |(
                (name, description, version, icon_url, provider),
                (documentation_url, security),
                (default_input_modes, default_output_modes, skills),
                (extended, extra),
            )| V03Common {
                name,
                description,
                version,
                icon_url,
                provider,
                documentation_url,
                security,
                default_input_modes,
                default_output_modes,
                skills,
                extended,
                extra,
            },
        )
}

fn v03_capabilities(
    state_transition_history: BoxedStrategy<Option<bool>>,
) -> impl Strategy<Value = v03::AgentCapabilities> {
    (
        option::of(any::<bool>()),
        option::of(any::<bool>()),
        state_transition_history,
        option::of(vec(v03_extension(), 0..3)),
        extras(),
    )
        .prop_map(
            |(streaming, push_notifications, state_transition_history, extensions, extra)| {
                v03::AgentCapabilities {
                    streaming,
                    push_notifications,
                    state_transition_history,
                    extensions,
                    extra,
                }
            },
        )
}

/// A v0.3 card on the lossless domain.
pub fn v03_card() -> impl Strategy<Value = v03::AgentCard> {
    (
        v03_common(),
        (url(), transport(), extras()),
        vec(v03_interface(), 0..3),
        v03_capabilities(Just(None).boxed()),
        option::of(btree_map("[a-z]{1,6}", v03_security_scheme(), 0..3)),
    )
        .prop_map(
            |(c, (url, transport, primary_extra), others, capabilities, schemes)| {
                let primary = v03::AgentInterface {
                    url: url.clone(),
                    transport: transport.clone(),
                    extra: primary_extra,
                };
                let mut all = vec![primary];
                all.extend(others);
                let additional = dedup(all, |i| (i.url.clone(), i.transport.clone()));
                v03::AgentCard {
                    protocol_version: Some("0.3.0".to_string()),
                    name: c.name,
                    description: c.description,
                    url,
                    preferred_transport: Some(transport),
                    additional_interfaces: Some(additional),
                    icon_url: c.icon_url,
                    provider: c.provider,
                    version: c.version,
                    documentation_url: c.documentation_url,
                    capabilities,
                    security_schemes: schemes,
                    security: c.security,
                    default_input_modes: c.default_input_modes,
                    default_output_modes: c.default_output_modes,
                    skills: c.skills,
                    supports_authenticated_extended_card: c.extended,
                    supports_extended_agent_card: None,
                    signatures: None,
                    extra: c.extra,
                }
            },
        )
}

/// Any v0.3 card this crate reads, lossy inputs included (other
/// `protocolVersion`, implicit transport, unordered or repeated interfaces,
/// several OAuth flows, `stateTransitionHistory`, the alias flag, signatures).
pub fn v03_card_any() -> impl Strategy<Value = v03::AgentCard> {
    (
        v03_common(),
        (
            option::of(prop_oneof![Just("0.3.0".to_string()), text()]),
            url(),
            option::of(transport()),
            option::of(vec(v03_interface(), 0..4)),
            any::<bool>(),
        ),
        v03_capabilities(option::of(any::<bool>()).boxed()),
        option::of(btree_map(
            "[a-z]{1,6}",
            v03_scheme_with(v03_flows_any().boxed()),
            0..3,
        )),
        (
            option::of(any::<bool>()),
            option::of(vec(v03_signature(), 0..2)),
        ),
    )
        .prop_map(
            |(
                c,
                (protocol_version, url, preferred_transport, additional, repeat_primary),
                capabilities,
                schemes,
                (alias, signatures),
            )| {
                let additional = additional.map(|mut list| {
                    if repeat_primary {
                        // Put a copy of the primary somewhere in the list.
                        let at = list.len() / 2;
                        list.insert(
                            at,
                            v03::AgentInterface {
                                url: url.clone(),
                                transport: preferred_transport
                                    .clone()
                                    .unwrap_or_else(|| "JSONRPC".to_string()),
                                extra: Extras::new(),
                            },
                        );
                    }
                    list
                });
                v03::AgentCard {
                    protocol_version,
                    name: c.name,
                    description: c.description,
                    url,
                    preferred_transport,
                    additional_interfaces: additional,
                    icon_url: c.icon_url,
                    provider: c.provider,
                    version: c.version,
                    documentation_url: c.documentation_url,
                    capabilities,
                    security_schemes: schemes,
                    security: c.security,
                    default_input_modes: c.default_input_modes,
                    default_output_modes: c.default_output_modes,
                    skills: c.skills,
                    supports_authenticated_extended_card: c.extended,
                    supports_extended_agent_card: alias,
                    signatures,
                    extra: c.extra,
                }
            },
        )
}

// ---------------------------------------------------------------- v1.0

/// A v1.0 security requirement; `lossy` adds unknown members.
fn v10_requirement(lossy: bool) -> BoxedStrategy<v10::SecurityRequirement> {
    let ex = move || {
        if lossy {
            extras().boxed()
        } else {
            Just(Extras::new()).boxed()
        }
    };
    let list =
        (vec("[a-z:]{1,6}", 0..3), ex()).prop_map(|(list, extra)| v10::StringList { list, extra });
    (btree_map("[a-z]{1,6}", list, 0..3), ex())
        .prop_map(|(schemes, extra)| v10::SecurityRequirement { schemes, extra })
        .boxed()
}

fn v10_extension() -> impl Strategy<Value = v10::AgentExtension> {
    (
        url(),
        option::of(text()),
        option::of(any::<bool>()),
        option::of(object()),
        extras(),
    )
        .prop_map(
            |(uri, description, required, params, extra)| v10::AgentExtension {
                uri,
                description,
                required,
                params,
                extra,
            },
        )
}

fn v10_skill(lossy: bool) -> impl Strategy<Value = v10::AgentSkill> {
    (
        (text(), text(), text(), vec(text(), 0..3)),
        (
            option::of(vec(text(), 0..2)),
            option::of(modes()),
            option::of(modes()),
            option::of(vec(v10_requirement(lossy), 0..2)),
        ),
        extras(),
    )
        .prop_map(
            |(
                (id, name, description, tags),
                (examples, input_modes, output_modes, security_requirements),
                extra,
            )| v10::AgentSkill {
                id,
                name,
                description,
                tags,
                examples,
                input_modes,
                output_modes,
                security_requirements,
                extra,
            },
        )
}

fn v10_provider() -> impl Strategy<Value = v10::AgentProvider> {
    (url(), text(), extras()).prop_map(|(url, organization, extra)| v10::AgentProvider {
        url,
        organization,
        extra,
    })
}

/// A v1.0 OAuth flows object; `lossy` adds `deviceCode` and `pkceRequired`.
fn v10_flows(lossy: bool) -> BoxedStrategy<v10::OAuthFlows> {
    let pkce = if lossy {
        option::of(any::<bool>()).boxed()
    } else {
        Just(None).boxed()
    };
    let auth_code = (url(), url(), option::of(url()), scopes(), pkce, extras()).prop_map(
        |(authorization_url, token_url, refresh_url, scopes, pkce_required, extra)| {
            v10::OAuthFlow::AuthorizationCode(v10::AuthorizationCodeOAuthFlow {
                authorization_url,
                token_url,
                refresh_url,
                scopes,
                pkce_required,
                extra,
            })
        },
    );
    let client = (url(), option::of(url()), scopes(), extras()).prop_map(
        |(token_url, refresh_url, scopes, extra)| {
            v10::OAuthFlow::ClientCredentials(v10::ClientCredentialsOAuthFlow {
                token_url,
                refresh_url,
                scopes,
                extra,
            })
        },
    );
    let implicit = (url(), option::of(url()), scopes(), extras()).prop_map(
        |(authorization_url, refresh_url, scopes, extra)| {
            v10::OAuthFlow::Implicit(v10::ImplicitOAuthFlow {
                authorization_url,
                refresh_url,
                scopes,
                extra,
            })
        },
    );
    let password = (url(), option::of(url()), scopes(), extras()).prop_map(
        |(token_url, refresh_url, scopes, extra)| {
            v10::OAuthFlow::Password(v10::PasswordOAuthFlow {
                token_url,
                refresh_url,
                scopes,
                extra,
            })
        },
    );
    let device = (url(), url(), option::of(url()), scopes(), extras()).prop_map(
        |(device_authorization_url, token_url, refresh_url, scopes, extra)| {
            v10::OAuthFlow::DeviceCode(v10::DeviceCodeOAuthFlow {
                device_authorization_url,
                token_url,
                refresh_url,
                scopes,
                extra,
            })
        },
    );
    let flow = if lossy {
        option::of(prop_oneof![auth_code, client, implicit, password, device]).boxed()
    } else {
        option::of(prop_oneof![auth_code, client, implicit, password]).boxed()
    };
    (flow, extras())
        .prop_map(|(flow, extra)| v10::OAuthFlows { flow, extra })
        .boxed()
}

/// A v1.0 security scheme; `lossy` adds free-form API-key locations and
/// unknown members beside the oneof member.
fn v10_scheme(lossy: bool) -> impl Strategy<Value = v10::SecurityScheme> {
    let location = if lossy {
        prop_oneof![
            Just("header".to_string()),
            Just("query".to_string()),
            Just("cookie".to_string()),
            "[a-zA-Z]{0,7}",
        ]
        .boxed()
    } else {
        prop_oneof![
            Just("header".to_string()),
            Just("query".to_string()),
            Just("cookie".to_string()),
        ]
        .boxed()
    };
    let outer = if lossy {
        extras().boxed()
    } else {
        Just(Extras::new()).boxed()
    };
    let scheme = prop_oneof![
        (option::of(text()), location, text(), extras()).prop_map(
            |(description, location, name, extra)| {
                v10::Scheme::ApiKey(v10::ApiKeySecurityScheme {
                    description,
                    location,
                    name,
                    extra,
                })
            }
        ),
        (option::of(text()), text(), option::of(text()), extras()).prop_map(
            |(description, scheme, bearer_format, extra)| {
                v10::Scheme::HttpAuth(v10::HttpAuthSecurityScheme {
                    description,
                    scheme,
                    bearer_format,
                    extra,
                })
            }
        ),
        (
            option::of(text()),
            v10_flows(lossy),
            option::of(url()),
            extras()
        )
            .prop_map(|(description, flows, oauth2_metadata_url, extra)| {
                v10::Scheme::OAuth2(v10::OAuth2SecurityScheme {
                    description,
                    flows,
                    oauth2_metadata_url,
                    extra,
                })
            }),
        (option::of(text()), url(), extras()).prop_map(
            |(description, open_id_connect_url, extra)| {
                v10::Scheme::OpenIdConnect(v10::OpenIdConnectSecurityScheme {
                    description,
                    open_id_connect_url,
                    extra,
                })
            }
        ),
        (option::of(text()), extras()).prop_map(|(description, extra)| {
            v10::Scheme::Mtls(v10::MutualTlsSecurityScheme { description, extra })
        }),
    ];
    (scheme, outer).prop_map(|(scheme, extra)| v10::SecurityScheme { scheme, extra })
}

/// A v1.0 security scheme on the lossless domain.
pub fn v10_security_scheme() -> impl Strategy<Value = v10::SecurityScheme> {
    v10_scheme(false)
}

/// A v1.0 interface; `lossy` adds tenants, other versions and repeats.
fn v10_interfaces(lossy: bool) -> BoxedStrategy<Vec<v10::AgentInterface>> {
    let version = if lossy {
        prop_oneof![
            Just("0.3".to_string()),
            Just("1.0".to_string()),
            Just(String::new())
        ]
        .boxed()
    } else {
        Just("0.3".to_string()).boxed()
    };
    let tenant = if lossy {
        option::of("[a-z]{0,5}").boxed()
    } else {
        Just(None).boxed()
    };
    let one = (url(), transport(), tenant, version, extras()).prop_map(
        |(url, protocol_binding, tenant, protocol_version, extra)| v10::AgentInterface {
            url,
            protocol_binding,
            tenant,
            protocol_version,
            extra,
        },
    );
    let list = vec(one, 1..4);
    if lossy {
        // Sometimes repeat the first interface under another version / tenant.
        (list, any::<bool>())
            .prop_map(|(mut l, repeat)| {
                if let (true, Some(first)) = (repeat, l.first().cloned()) {
                    l.push(v10::AgentInterface {
                        protocol_version: "1.0".to_string(),
                        tenant: Some("t".to_string()),
                        ..first
                    });
                }
                l
            })
            .boxed()
    } else {
        list.prop_map(|l| dedup(l, |i| (i.url.clone(), i.protocol_binding.clone())))
            .boxed()
    }
}

fn v10_card_with(lossy: bool) -> impl Strategy<Value = v10::AgentCard> {
    let signatures = if lossy {
        option::of(vec(v10_signature(), 0..2)).boxed()
    } else {
        Just(None).boxed()
    };
    (
        (
            text(),
            text(),
            text(),
            option::of(url()),
            option::of(v10_provider()),
        ),
        (
            v10_interfaces(lossy),
            option::of(url()),
            option::of(vec(v10_requirement(lossy), 0..3)),
            option::of(btree_map("[a-z]{1,6}", v10_scheme(lossy), 0..3)),
        ),
        (modes(), modes(), vec(v10_skill(lossy), 0..3)),
        (
            option::of(any::<bool>()),
            option::of(any::<bool>()),
            option::of(vec(v10_extension(), 0..3)),
            option::of(any::<bool>()),
            extras(),
        ),
        (signatures, extras()),
    )
        .prop_map(
            |(
                (name, description, version, icon_url, provider),
                (supported_interfaces, documentation_url, security_requirements, security_schemes),
                (default_input_modes, default_output_modes, skills),
                (streaming, push_notifications, extensions, extended_agent_card, cap_extra),
                (signatures, extra),
            )| v10::AgentCard {
                name,
                description,
                supported_interfaces,
                provider,
                version,
                documentation_url,
                capabilities: v10::AgentCapabilities {
                    streaming,
                    push_notifications,
                    extensions,
                    extended_agent_card,
                    extra: cap_extra,
                },
                security_schemes,
                security_requirements,
                default_input_modes,
                default_output_modes,
                skills,
                signatures,
                icon_url,
                extra,
            },
        )
}

fn v10_signature() -> impl Strategy<Value = v10::AgentCardSignature> {
    (
        "[A-Za-z0-9_-]{1,12}",
        "[A-Za-z0-9_-]{1,12}",
        option::of(object()),
        extras(),
    )
        .prop_map(
            |(protected, signature, header, extra)| v10::AgentCardSignature {
                protected,
                signature,
                header,
                extra,
            },
        )
}

/// A v1.0 card on the lossless domain.
pub fn v10_card() -> impl Strategy<Value = v10::AgentCard> {
    v10_card_with(false)
}

/// Any v1.0 card with at least one interface, lossy inputs included
/// (tenants, other interface versions, repeated interfaces, `deviceCode`,
/// `pkceRequired`, free-form API-key locations, unknown members on
/// requirements and beside oneof members, signatures).
pub fn v10_card_any() -> impl Strategy<Value = v10::AgentCard> {
    v10_card_with(true)
}
