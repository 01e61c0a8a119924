//! Agent card: v0.3 JSON-schema card <-> v1.0 ProtoJSON card.
//!
//! Summary of the mapping (details and every loss in [`LOSSY`]):
//! - v0.3 `url` + `preferredTransport` (default `JSONRPC`) + `additionalInterfaces`
//!   <-> v1.0 `supportedInterfaces`, primary first, de-duplicated, each stamped
//!   `protocolVersion: "0.3"`. Going to v0.3 only the interfaces that speak 0.3
//!   are kept (all, when none does); the first of them is the
//!   primary and `additionalInterfaces` repeats every interface, primary
//!   included; the card-level `protocolVersion` is `"0.3.0"`.
//! - `supportsAuthenticatedExtendedCard` <-> `capabilities.extendedAgentCard`.
//! - `security` `{name: [scopes]}` <-> `securityRequirements` `{schemes: {name: {list}}}`.
//! - security schemes `type`-tagged <-> oneof-wrapped; OAuth flows several <-> one.
//! - `signatures` are dropped both ways (a translated card cannot carry a
//!   valid signature of its original).
//! - Unknown members cross unchanged, except members that name a field of
//!   either version's counterpart object (hybrid cards): those are replaced by
//!   the translated fields.

use crate::json::Extras;
use crate::lossy::{Direction, Lossy};
use crate::v03::agent_card as v03;
use crate::v10::agent_card as v10;
use crate::{TranslateError, Version};

/// The transport a v0.3 card means when `preferredTransport` is absent.
pub const DEFAULT_TRANSPORT: &str = "JSONRPC";

/// The card-level `protocolVersion` written on every v0.3 card.
pub const V03_PROTOCOL_VERSION: &str = "0.3.0";

/// Member names of either version's `AgentCard` (v1.0 also in its proto
/// spelling, which v1.0 parsers accept as an alias).
const CARD_KEYS: &[&str] = &[
    "protocolVersion",
    "name",
    "description",
    "url",
    "preferredTransport",
    "additionalInterfaces",
    "supportedInterfaces",
    "iconUrl",
    "provider",
    "version",
    "documentationUrl",
    "capabilities",
    "securitySchemes",
    "security",
    "securityRequirements",
    "input_modes",
    "output_modes",
    "security_requirements",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
    "supportsAuthenticatedExtendedCard",
    "supportsExtendedAgentCard",
    "signatures",
    "supported_interfaces",
    "documentation_url",
    "security_schemes",
    "security_requirements",
    "default_input_modes",
    "default_output_modes",
    "icon_url",
];

/// Member names of either version's `AgentCapabilities`.
const CAPABILITY_KEYS: &[&str] = &[
    "streaming",
    "pushNotifications",
    "stateTransitionHistory",
    "extensions",
    "extendedAgentCard",
    "push_notifications",
    "extended_agent_card",
];

/// Member names of either version's `AgentInterface`.
const INTERFACE_KEYS: &[&str] = &[
    "url",
    "transport",
    "protocolBinding",
    "tenant",
    "protocolVersion",
    "protocol_binding",
    "protocol_version",
];

/// Member names of either version's `AgentSkill`.
const SKILL_KEYS: &[&str] = &[
    "id",
    "name",
    "description",
    "tags",
    "examples",
    "inputModes",
    "outputModes",
    "security",
    "securityRequirements",
];

/// Member names of every security-scheme object of either version, the
/// v0.3 discriminator and the v1.0 oneof member names.
const SCHEME_KEYS: &[&str] = &[
    "type",
    "description",
    "in",
    "location",
    "name",
    "scheme",
    "bearerFormat",
    "flows",
    "oauth2MetadataUrl",
    "openIdConnectUrl",
    "apiKeySecurityScheme",
    "httpAuthSecurityScheme",
    "oauth2SecurityScheme",
    "openIdConnectSecurityScheme",
    "mtlsSecurityScheme",
    "bearer_format",
    "oauth2_metadata_url",
    "open_id_connect_url",
    "api_key_security_scheme",
    "http_auth_security_scheme",
    "oauth2_security_scheme",
    "open_id_connect_security_scheme",
    "mtls_security_scheme",
];

/// Member names of every OAuth flow object of either version.
const FLOW_KEYS: &[&str] = &[
    "authorizationUrl",
    "tokenUrl",
    "refreshUrl",
    "scopes",
    "pkceRequired",
    "deviceAuthorizationUrl",
    "authorization_url",
    "token_url",
    "refresh_url",
    "pkce_required",
    "device_authorization_url",
];

/// Member names of either version's `OAuthFlows` (both spellings).
const FLOWS_KEYS: &[&str] = &[
    "authorizationCode",
    "clientCredentials",
    "implicit",
    "password",
    "deviceCode",
    "authorization_code",
    "client_credentials",
    "device_code",
];

/// Unknown members that cross: everything except `reserved` names, which
/// belong to the other version's shape of the same object (hybrid cards) and
/// are replaced by the translated fields.
fn carry(mut extra: Extras, reserved: &[&str]) -> Extras {
    extra.retain(|k, _| !reserved.contains(&k.as_str()));
    extra
}

/// `Some(true)` if any flag is true, else `Some(false)` if any is false, else `None`.
fn any_flag(flags: &[Option<bool>]) -> Option<bool> {
    if flags.contains(&Some(true)) {
        Some(true)
    } else if flags.contains(&Some(false)) {
        Some(false)
    } else {
        None
    }
}

/// Translates a v0.3 card to v1.0.
pub fn to_v10(card: v03::AgentCard) -> Result<v10::AgentCard, TranslateError> {
    let v03::AgentCard {
        protocol_version: _,
        name,
        description,
        url,
        preferred_transport,
        additional_interfaces,
        icon_url,
        provider,
        version,
        documentation_url,
        capabilities,
        security_schemes,
        security,
        default_input_modes,
        default_output_modes,
        skills,
        supports_authenticated_extended_card,
        supports_extended_agent_card,
        signatures: _,
        extra,
    } = card;
    let hybrid_flag = capabilities
        .extra
        .get("extendedAgentCard")
        .and_then(serde_json::Value::as_bool);
    let extended = any_flag(&[
        supports_authenticated_extended_card,
        supports_extended_agent_card,
        hybrid_flag,
    ]);
    Ok(v10::AgentCard {
        name,
        description,
        supported_interfaces: interfaces_to_v10(url, preferred_transport, additional_interfaces),
        provider: provider.map(provider_to_v10),
        version,
        documentation_url,
        capabilities: capabilities_to_v10(capabilities, extended),
        security_schemes: security_schemes
            .map(|m| {
                m.into_iter()
                    .map(|(k, s)| Ok((k, security_scheme_to_v10(s)?)))
                    .collect::<Result<_, TranslateError>>()
            })
            .transpose()?,
        security_requirements: security.map(security_to_v10),
        default_input_modes,
        default_output_modes,
        skills: skills.into_iter().map(skill_to_v10).collect(),
        signatures: None,
        icon_url,
        extra: carry(extra, CARD_KEYS),
    })
}

/// Translates a v1.0 card to v0.3. Fails when the card has no interface
/// (a v0.3 card needs a `url`).
pub fn to_v03(card: v10::AgentCard) -> Result<v03::AgentCard, TranslateError> {
    let v10::AgentCard {
        name,
        description,
        supported_interfaces,
        provider,
        version,
        documentation_url,
        capabilities,
        security_schemes,
        security_requirements,
        default_input_modes,
        default_output_modes,
        skills,
        signatures: _,
        icon_url,
        extra,
    } = card;
    let (url, transport, additional) = interfaces_to_v03(supported_interfaces)?;
    let (capabilities, extended) = capabilities_to_v03(capabilities);
    Ok(v03::AgentCard {
        protocol_version: Some(V03_PROTOCOL_VERSION.to_string()),
        name,
        description,
        url,
        preferred_transport: Some(transport),
        additional_interfaces: Some(additional),
        icon_url,
        provider: provider.map(provider_to_v03),
        version,
        documentation_url,
        capabilities,
        security_schemes: security_schemes
            .map(|m| {
                m.into_iter()
                    .map(|(k, s)| Ok((k, security_scheme_to_v03(s)?)))
                    .collect::<Result<_, TranslateError>>()
            })
            .transpose()?,
        security: security_requirements.map(security_to_v03),
        default_input_modes,
        default_output_modes,
        skills: skills.into_iter().map(skill_to_v03).collect(),
        supports_authenticated_extended_card: extended,
        supports_extended_agent_card: None,
        signatures: None,
        extra: carry(extra, CARD_KEYS),
    })
}

/// Builds the v1.0 interface list of a v0.3 card: the primary
/// (`url`, `preferred_transport` or `JSONRPC`) first, then the additional
/// interfaces in order, each (url, transport) pair once. The primary takes
/// the unknown members of its first repetition in `additional`. Every
/// interface is stamped `protocolVersion: "0.3"`.
pub fn interfaces_to_v10(
    url: String,
    preferred_transport: Option<String>,
    additional: Option<Vec<v03::AgentInterface>>,
) -> Vec<v10::AgentInterface> {
    let transport = preferred_transport.unwrap_or_else(|| DEFAULT_TRANSPORT.to_string());
    let mut additional = additional.unwrap_or_default();
    let primary_extra = additional
        .iter()
        .position(|i| i.url == url && i.transport == transport)
        .map(|pos| additional.remove(pos).extra)
        .unwrap_or_default();
    let mut out = vec![v10::AgentInterface {
        url,
        protocol_binding: transport,
        tenant: None,
        protocol_version: Version::V03.as_str().to_string(),
        extra: carry(primary_extra, INTERFACE_KEYS),
    }];
    for i in additional {
        let seen = out
            .iter()
            .any(|o| o.url == i.url && o.protocol_binding == i.transport);
        if !seen {
            out.push(interface_to_v10(i));
        }
    }
    out
}

/// One v0.3 interface as a v1.0 interface (`protocolVersion: "0.3"`).
pub fn interface_to_v10(i: v03::AgentInterface) -> v10::AgentInterface {
    v10::AgentInterface {
        url: i.url,
        protocol_binding: i.transport,
        tenant: None,
        protocol_version: Version::V03.as_str().to_string(),
        extra: carry(i.extra, INTERFACE_KEYS),
    }
}

/// One v1.0 interface as a v0.3 interface (`tenant` and `protocolVersion` dropped).
pub fn interface_to_v03(i: v10::AgentInterface) -> v03::AgentInterface {
    v03::AgentInterface {
        url: i.url,
        transport: i.protocol_binding,
        extra: carry(i.extra, INTERFACE_KEYS),
    }
}

/// Splits a v1.0 interface list into the v0.3 primary `url`, its transport
/// and `additionalInterfaces` (every interface, primary first). Every
/// interface is kept whatever its `protocolVersion`; interfaces that differ
/// only in `tenant` / `protocolVersion` (e.g. one URL serving 1.0 and 0.3)
/// collapse into their first occurrence.
pub fn interfaces_to_v03(
    interfaces: Vec<v10::AgentInterface>,
) -> Result<(String, String, Vec<v03::AgentInterface>), TranslateError> {
    // A v0.3 client can only use interfaces that speak 0.3 (an empty version
    // is read as 0.3, as the SDKs do); the others are kept only when the card
    // has no 0.3 interface at all.
    let speaks_v03 = |i: &v10::AgentInterface| {
        let v = i.protocol_version.trim();
        v.is_empty() || Version::from_header(Some(v)) == Ok(Version::V03)
    };
    let interfaces: Vec<v10::AgentInterface> = if interfaces.iter().any(speaks_v03) {
        interfaces.into_iter().filter(speaks_v03).collect()
    } else {
        interfaces
    };
    let mut additional: Vec<v03::AgentInterface> = Vec::with_capacity(interfaces.len());
    for i in interfaces {
        let seen = additional
            .iter()
            .any(|a| a.url == i.url && a.transport == i.protocol_binding);
        if !seen {
            additional.push(interface_to_v03(i));
        }
    }
    let Some(primary) = additional.first() else {
        return Err(TranslateError::invalid(
            "AgentCard",
            "supportedInterfaces is empty; a v0.3 card needs a url",
        ));
    };
    Ok((primary.url.clone(), primary.transport.clone(), additional))
}

/// v0.3 capabilities plus the card-level extended-card flag -> v1.0
/// capabilities (`stateTransitionHistory` dropped).
pub fn capabilities_to_v10(
    c: v03::AgentCapabilities,
    extended_agent_card: Option<bool>,
) -> v10::AgentCapabilities {
    v10::AgentCapabilities {
        streaming: c.streaming,
        push_notifications: c.push_notifications,
        extensions: c
            .extensions
            .map(|v| v.into_iter().map(extension_to_v10).collect()),
        extended_agent_card,
        extra: carry(c.extra, CAPABILITY_KEYS),
    }
}

/// v1.0 capabilities -> v0.3 capabilities and the card-level
/// `supportsAuthenticatedExtendedCard`.
pub fn capabilities_to_v03(c: v10::AgentCapabilities) -> (v03::AgentCapabilities, Option<bool>) {
    (
        v03::AgentCapabilities {
            streaming: c.streaming,
            push_notifications: c.push_notifications,
            state_transition_history: None,
            extensions: c
                .extensions
                .map(|v| v.into_iter().map(extension_to_v03).collect()),
            extra: carry(c.extra, CAPABILITY_KEYS),
        },
        c.extended_agent_card,
    )
}

/// Extension declaration, v0.3 -> v1.0 (same members).
pub fn extension_to_v10(e: v03::AgentExtension) -> v10::AgentExtension {
    v10::AgentExtension {
        uri: e.uri,
        description: e.description,
        required: e.required,
        params: e.params,
        extra: e.extra,
    }
}

/// Extension declaration, v1.0 -> v0.3 (same members).
pub fn extension_to_v03(e: v10::AgentExtension) -> v03::AgentExtension {
    v03::AgentExtension {
        uri: e.uri,
        description: e.description,
        required: e.required,
        params: e.params,
        extra: e.extra,
    }
}

/// Provider, v0.3 -> v1.0 (same members).
pub fn provider_to_v10(p: v03::AgentProvider) -> v10::AgentProvider {
    v10::AgentProvider {
        url: p.url,
        organization: p.organization,
        extra: p.extra,
    }
}

/// Provider, v1.0 -> v0.3 (same members).
pub fn provider_to_v03(p: v10::AgentProvider) -> v03::AgentProvider {
    v03::AgentProvider {
        organization: p.organization,
        url: p.url,
        extra: p.extra,
    }
}

/// Skill, v0.3 -> v1.0 (`security` -> `securityRequirements`).
pub fn skill_to_v10(s: v03::AgentSkill) -> v10::AgentSkill {
    v10::AgentSkill {
        id: s.id,
        name: s.name,
        description: s.description,
        tags: s.tags,
        examples: s.examples,
        input_modes: s.input_modes,
        output_modes: s.output_modes,
        security_requirements: s.security.map(security_to_v10),
        extra: carry(s.extra, SKILL_KEYS),
    }
}

/// Skill, v1.0 -> v0.3 (`securityRequirements` -> `security`).
pub fn skill_to_v03(s: v10::AgentSkill) -> v03::AgentSkill {
    v03::AgentSkill {
        id: s.id,
        name: s.name,
        description: s.description,
        tags: s.tags,
        examples: s.examples,
        input_modes: s.input_modes,
        output_modes: s.output_modes,
        security: s.security_requirements.map(security_to_v03),
        extra: carry(s.extra, SKILL_KEYS),
    }
}

/// `security` list, v0.3 -> v1.0: `{name: [scopes]}` -> `{schemes: {name: {list: [scopes]}}}`.
pub fn security_to_v10(reqs: Vec<v03::SecurityRequirement>) -> Vec<v10::SecurityRequirement> {
    reqs.into_iter().map(security_requirement_to_v10).collect()
}

/// `securityRequirements` list, v1.0 -> v0.3.
pub fn security_to_v03(reqs: Vec<v10::SecurityRequirement>) -> Vec<v03::SecurityRequirement> {
    reqs.into_iter().map(security_requirement_to_v03).collect()
}

/// One requirement, v0.3 -> v1.0.
pub fn security_requirement_to_v10(r: v03::SecurityRequirement) -> v10::SecurityRequirement {
    v10::SecurityRequirement {
        schemes: r
            .into_iter()
            .map(|(name, list)| {
                (
                    name,
                    v10::StringList {
                        list,
                        extra: Extras::new(),
                    },
                )
            })
            .collect(),
        extra: Extras::new(),
    }
}

/// One requirement, v1.0 -> v0.3 (unknown members of the requirement and of
/// its `StringList`s have no v0.3 place and are dropped).
pub fn security_requirement_to_v03(r: v10::SecurityRequirement) -> v03::SecurityRequirement {
    r.schemes
        .into_iter()
        .map(|(name, l)| (name, l.list))
        .collect()
}

/// Security scheme, `type`-tagged v0.3 -> oneof-wrapped v1.0.
pub fn security_scheme_to_v10(
    s: v03::SecurityScheme,
) -> Result<v10::SecurityScheme, TranslateError> {
    let scheme = match s {
        v03::SecurityScheme::ApiKey(x) => v10::Scheme::ApiKey(v10::ApiKeySecurityScheme {
            description: x.description,
            location: api_key_location_to_v10(x.location).to_string(),
            name: x.name,
            extra: carry(x.extra, SCHEME_KEYS),
        }),
        v03::SecurityScheme::Http(x) => v10::Scheme::HttpAuth(v10::HttpAuthSecurityScheme {
            description: x.description,
            scheme: x.scheme,
            bearer_format: x.bearer_format,
            extra: carry(x.extra, SCHEME_KEYS),
        }),
        v03::SecurityScheme::OAuth2(x) => v10::Scheme::OAuth2(v10::OAuth2SecurityScheme {
            description: x.description,
            flows: oauth_flows_to_v10(x.flows),
            oauth2_metadata_url: x.oauth2_metadata_url,
            extra: carry(x.extra, SCHEME_KEYS),
        }),
        v03::SecurityScheme::OpenIdConnect(x) => {
            v10::Scheme::OpenIdConnect(v10::OpenIdConnectSecurityScheme {
                description: x.description,
                open_id_connect_url: x.open_id_connect_url,
                extra: carry(x.extra, SCHEME_KEYS),
            })
        }
        v03::SecurityScheme::MutualTls(x) => v10::Scheme::Mtls(v10::MutualTlsSecurityScheme {
            description: x.description,
            extra: carry(x.extra, SCHEME_KEYS),
        }),
    };
    Ok(v10::SecurityScheme::new(scheme))
}

/// Security scheme, oneof-wrapped v1.0 -> `type`-tagged v0.3. Unknown
/// members beside the oneof member move into the scheme object (members of
/// the inner object win on a name clash).
pub fn security_scheme_to_v03(
    s: v10::SecurityScheme,
) -> Result<v03::SecurityScheme, TranslateError> {
    let outer = carry(s.extra, SCHEME_KEYS);
    let merge = |inner: Extras| -> Extras {
        let mut merged = outer.clone();
        merged.extend(carry(inner, SCHEME_KEYS));
        merged
    };
    Ok(match s.scheme {
        v10::Scheme::ApiKey(x) => v03::SecurityScheme::ApiKey(v03::ApiKeySecurityScheme {
            description: x.description,
            location: api_key_location_to_v03(&x.location),
            name: x.name,
            extra: merge(x.extra),
        }),
        v10::Scheme::HttpAuth(x) => v03::SecurityScheme::Http(v03::HttpAuthSecurityScheme {
            description: x.description,
            scheme: x.scheme,
            bearer_format: x.bearer_format,
            extra: merge(x.extra),
        }),
        v10::Scheme::OAuth2(x) => v03::SecurityScheme::OAuth2(v03::OAuth2SecurityScheme {
            description: x.description,
            flows: oauth_flows_to_v03(x.flows),
            oauth2_metadata_url: x.oauth2_metadata_url,
            extra: merge(x.extra),
        }),
        v10::Scheme::OpenIdConnect(x) => {
            v03::SecurityScheme::OpenIdConnect(v03::OpenIdConnectSecurityScheme {
                description: x.description,
                open_id_connect_url: x.open_id_connect_url,
                extra: merge(x.extra),
            })
        }
        v10::Scheme::Mtls(x) => v03::SecurityScheme::MutualTls(v03::MutualTlsSecurityScheme {
            description: x.description,
            extra: merge(x.extra),
        }),
    })
}

/// The v1.0 `location` string of a v0.3 API-key location.
pub fn api_key_location_to_v10(l: v03::ApiKeyLocation) -> &'static str {
    match l {
        v03::ApiKeyLocation::Cookie => "cookie",
        v03::ApiKeyLocation::Header => "header",
        v03::ApiKeyLocation::Query => "query",
    }
}

/// The v0.3 API-key location of a v1.0 `location` string: `header`, `query`
/// or `cookie` in any letter case, anything else `header`.
pub fn api_key_location_to_v03(l: &str) -> v03::ApiKeyLocation {
    if l.eq_ignore_ascii_case("query") {
        v03::ApiKeyLocation::Query
    } else if l.eq_ignore_ascii_case("cookie") {
        v03::ApiKeyLocation::Cookie
    } else {
        v03::ApiKeyLocation::Header
    }
}

/// OAuth flows, v0.3 (any subset) -> v1.0 (one): the first present of
/// authorizationCode, clientCredentials, implicit, password; the others are
/// dropped.
pub fn oauth_flows_to_v10(f: v03::OAuthFlows) -> v10::OAuthFlows {
    let v03::OAuthFlows {
        authorization_code,
        client_credentials,
        implicit,
        password,
        extra,
    } = f;
    let flow = if let Some(x) = authorization_code {
        Some(v10::OAuthFlow::AuthorizationCode(
            v10::AuthorizationCodeOAuthFlow {
                authorization_url: x.authorization_url,
                token_url: x.token_url,
                refresh_url: x.refresh_url,
                scopes: x.scopes,
                pkce_required: None,
                extra: carry(x.extra, FLOW_KEYS),
            },
        ))
    } else if let Some(x) = client_credentials {
        Some(v10::OAuthFlow::ClientCredentials(
            v10::ClientCredentialsOAuthFlow {
                token_url: x.token_url,
                refresh_url: x.refresh_url,
                scopes: x.scopes,
                extra: carry(x.extra, FLOW_KEYS),
            },
        ))
    } else if let Some(x) = implicit {
        Some(v10::OAuthFlow::Implicit(v10::ImplicitOAuthFlow {
            authorization_url: x.authorization_url,
            refresh_url: x.refresh_url,
            scopes: x.scopes,
            extra: carry(x.extra, FLOW_KEYS),
        }))
    } else {
        password.map(|x| {
            v10::OAuthFlow::Password(v10::PasswordOAuthFlow {
                token_url: x.token_url,
                refresh_url: x.refresh_url,
                scopes: x.scopes,
                extra: carry(x.extra, FLOW_KEYS),
            })
        })
    };
    v10::OAuthFlows {
        flow,
        extra: carry(extra, FLOWS_KEYS),
    }
}

/// OAuth flows, v1.0 -> v0.3: the one flow under its name; `pkceRequired`
/// dropped; `deviceCode` has no v0.3 form and leaves `flows` empty.
pub fn oauth_flows_to_v03(f: v10::OAuthFlows) -> v03::OAuthFlows {
    let mut out = v03::OAuthFlows {
        extra: carry(f.extra, FLOWS_KEYS),
        ..v03::OAuthFlows::default()
    };
    match f.flow {
        None => {}
        Some(v10::OAuthFlow::AuthorizationCode(x)) => {
            out.authorization_code = Some(v03::AuthorizationCodeOAuthFlow {
                authorization_url: x.authorization_url,
                token_url: x.token_url,
                refresh_url: x.refresh_url,
                scopes: x.scopes,
                extra: carry(x.extra, FLOW_KEYS),
            })
        }
        Some(v10::OAuthFlow::ClientCredentials(x)) => {
            out.client_credentials = Some(v03::ClientCredentialsOAuthFlow {
                token_url: x.token_url,
                refresh_url: x.refresh_url,
                scopes: x.scopes,
                extra: carry(x.extra, FLOW_KEYS),
            })
        }
        Some(v10::OAuthFlow::Implicit(x)) => {
            out.implicit = Some(v03::ImplicitOAuthFlow {
                authorization_url: x.authorization_url,
                refresh_url: x.refresh_url,
                scopes: x.scopes,
                extra: carry(x.extra, FLOW_KEYS),
            })
        }
        Some(v10::OAuthFlow::Password(x)) => {
            out.password = Some(v03::PasswordOAuthFlow {
                token_url: x.token_url,
                refresh_url: x.refresh_url,
                scopes: x.scopes,
                extra: carry(x.extra, FLOW_KEYS),
            })
        }
        Some(v10::OAuthFlow::DeviceCode(_)) => {}
    }
    out
}

/// Lossy mappings of this module (see `crate::lossy`).
pub const LOSSY: &[Lossy] = &[
    Lossy {
        entity: "AgentCard.protocolVersion",
        direction: Direction::Both,
        what: "v0.3 card-level `protocolVersion` (any value, or absent) has no v1.0 field; v1.0 has one `protocolVersion` per interface",
        decision: "to v1.0: every interface gets `protocolVersion: \"0.3\"` whatever the card said; to v0.3: `protocolVersion` is always `\"0.3.0\"`",
        fixture: "card/protocol-version-other.v03.json, card/protocol-version-other.to-v03.json",
        at: &["protocolVersion"],
    },
    Lossy {
        entity: "AgentCard.supportedInterfaces",
        direction: Direction::ToV10,
        what: "v0.3 `url` + `preferredTransport` + `additionalInterfaces` may omit the transport, omit or misplace the primary, or repeat interfaces",
        decision: "primary = (`url`, `preferredTransport` or `JSONRPC`) first, then `additionalInterfaces` in order, each (url, transport) once; the primary takes the unknown members of its first repetition; back in v0.3 `preferredTransport` is explicit and `additionalInterfaces` lists every interface, primary first",
        fixture: "card/interfaces-dedup.v03.json, card/interfaces-dedup.to-v03.json",
        at: &["url", "preferredTransport", "additionalInterfaces", "supportedInterfaces"],
    },
    Lossy {
        entity: "AgentCard.supportedInterfaces",
        direction: Direction::ToV03,
        what: "v1.0 interface `tenant` and `protocolVersion` have no v0.3 form; interfaces of other A2A versions have no v0.3 marker",
        decision: "only interfaces whose `protocolVersion` is 0.3 (or empty) are kept, unless there is none, then all are (a2a-python filters the same way but fails when none is left); the first kept is the primary (`url`, `preferredTransport`); `additionalInterfaces` repeats every kept interface, primary included, each (url, binding) pair once (first occurrence wins); `tenant` and `protocolVersion` are dropped (back in v1.0 every interface says \"0.3\")",
        fixture: "card/interfaces-other-versions.v10.json, card/interfaces-other-versions.to-v10.json",
        at: &["supportedInterfaces", "additionalInterfaces", "url", "preferredTransport"],
    },
    Lossy {
        entity: "AgentCard.supportedInterfaces",
        direction: Direction::ToV03,
        what: "a v1.0 card without interfaces has no v0.3 `url`",
        decision: "rejected: Invalid (-32602)",
        fixture: "rejected/card/no-interfaces.v10.json",
        at: &["supportedInterfaces", "url", "preferredTransport", "additionalInterfaces"],
    },
    Lossy {
        entity: "AgentCard.supportsAuthenticatedExtendedCard",
        direction: Direction::ToV10,
        what: "the extended-card flag has three v0.3-side spellings: `supportsAuthenticatedExtendedCard`, the pre-release `supportsExtendedAgentCard`, and `capabilities.extendedAgentCard` in hybrid cards",
        decision: "`capabilities.extendedAgentCard` = true if any is true, else false if any is false, else absent; back in v0.3 only `supportsAuthenticatedExtendedCard` is written",
        fixture: "card/extended-card-alias.v03.json, card/extended-card-alias.to-v03.json",
        at: &["supportsAuthenticatedExtendedCard", "supportsExtendedAgentCard", "capabilities.extendedAgentCard"],
    },
    Lossy {
        entity: "AgentCapabilities.stateTransitionHistory",
        direction: Direction::ToV10,
        what: "removed in v1.0",
        decision: "dropped",
        fixture: "card/state-transition-history.v03.json, card/state-transition-history.to-v03.json",
        at: &["capabilities.stateTransitionHistory"],
    },
    Lossy {
        entity: "AgentCard.signatures",
        direction: Direction::Both,
        what: "a JWS over the JCS-canonical original card cannot verify over the translated card",
        decision: "dropped both ways (re-signing is the proxy's business, not the pure translator's)",
        fixture: "card/signed.v03.json, card/signed.v10.json, card/signed.to-v10.json, card/signed.to-v03.json",
        at: &["signatures"],
    },
    Lossy {
        entity: "OAuthFlows",
        direction: Direction::ToV10,
        what: "a v0.3 scheme may list several flows; the v1.0 `flow` oneof holds one",
        decision: "keep one by precedence authorizationCode > clientCredentials > implicit > password, drop the rest (no flow stays no flow)",
        fixture: "card/oauth-multi-flow.v03.json, card/oauth-multi-flow.to-v03.json",
        at: &["flows"],
    },
    Lossy {
        entity: "OAuthFlows.deviceCode",
        direction: Direction::ToV03,
        what: "no v0.3 device-code flow",
        decision: "dropped; when it was the only flow, v0.3 `flows` is `{}` (and v1.0 `flows` `{}` on the way back)",
        fixture: "card/oauth-device-code.v10.json, card/oauth-device-code.to-v10.json",
        at: &["flows"],
    },
    Lossy {
        entity: "AuthorizationCodeOAuthFlow.pkceRequired",
        direction: Direction::ToV03,
        what: "no v0.3 field",
        decision: "dropped",
        fixture: "card/oauth-pkce.v10.json, card/oauth-pkce.to-v10.json",
        at: &["pkceRequired"],
    },
    Lossy {
        entity: "APIKeySecurityScheme.location",
        direction: Direction::ToV03,
        what: "v1.0 `location` is a free string; v0.3 `in` is one of header, query, cookie",
        decision: "`query` / `cookie` / `header` in any letter case map to that value, anything else to `header`",
        fixture: "card/apikey-location-other.v10.json, card/apikey-location-other.to-v10.json",
        at: &["apiKeySecurityScheme.location", "in"],
    },
    Lossy {
        entity: "SecurityScheme",
        direction: Direction::ToV10,
        what: "v0.3 cards from REST servers or hybrid cards carry schemes in the oneof-wrapped form (`{\"apiKeySecurityScheme\":{…}}`)",
        decision: "accepted on v0.3 input as the equivalent `type`-tagged scheme (`location` read as `in`, one OAuth flow); written back `type`-tagged",
        fixture: "card/security-scheme-oneof-in-v03.v03.json, card/security-scheme-oneof-in-v03.to-v03.json",
        at: &["securitySchemes"],
    },
    Lossy {
        entity: "AgentCard.security",
        direction: Direction::ToV10,
        what: "v0.3 REST servers send `security` (card and skills) in the v0.3 ProtoJSON form `{\"schemes\":{name:{\"list\":[…]}}}`",
        decision: "accepted on v0.3 input (an entry whose only member `schemes` holds an object); written back in the JSON-schema form `{name:[…]}`",
        fixture: "card/security-protojson-in-v03.v03.json, card/security-protojson-in-v03.to-v03.json",
        at: &["security"],
    },
    Lossy {
        entity: "v0.3 REST (HTTP+JSON) `/v1/card`",
        direction: Direction::ToV03,
        what: "the two v0.3 REST clients read different shapes: a2a-python 0.3 (`RestTransport.get_card`) the JSON-schema card with pydantic, refusing `security` as `{schemes: ...}`; a2a-js 0.3 (`RestTransport.getExtendedAgentCard`) ProtoJSON, throwing on a scheme without its oneof member and reading a JSON-schema `security` entry as `{}`; no one `security` value is both",
        decision: "the JSON-schema card (as a2a-python 0.3's REST server answers), each security scheme also carrying its ProtoJSON oneof member; `security` (card and skills) in the JSON-schema form, so a2a-js 0.3 parses the card but sees each requirement as `{}`. A v0.3 agent's own `/v1/card` passed through keeps its shape, with the missing form of each scheme added. Done by the proxy's REST codec (`proxy/src/rest.rs`, `proxy/src/card.rs`), not by this module",
        fixture: "rest-v03/response/GetExtendedAgentCard.security.from-v10.json, rest-v03/response/GetExtendedAgentCard.security.to-v03.json",
        at: &[],
    },
    Lossy {
        entity: "AgentCard (hybrid)",
        direction: Direction::Both,
        what: "hybrid cards (a2a-python) carry the other version's members (`url`, `protocolVersion`, `supportedInterfaces`, `type` beside `apiKeySecurityScheme`, …) as unknown members",
        decision: "unknown members named like a field of either version's counterpart object are not copied; the translated fields take their place; all other unknown members cross unchanged",
        fixture: "card/hybrid.v10.json, card/hybrid.to-v10.json",
        at: &[],
    },
    Lossy {
        entity: "SecurityRequirement, SecurityScheme (unknown members)",
        direction: Direction::ToV03,
        what: "v0.3 requirements are bare maps, and a v0.3 scheme is a single object",
        decision: "unknown members of `SecurityRequirement` and `StringList` are dropped; unknown members beside the oneof member of a `SecurityScheme` move into the scheme object (and stay there on the way back)",
        fixture: "card/security-extras.v10.json, card/security-extras.to-v10.json",
        at: &["security", "securitySchemes"],
    },
];
