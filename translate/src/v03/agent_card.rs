//! The v0.3 agent card (`AgentCard` and its sub-objects of the v0.3 JSON
//! schema).
//!
//! Input is lenient where real v0.3 agents differ from the schema:
//! - `protocolVersion` may be missing;
//! - the pre-release flag spelling `supportsExtendedAgentCard` is kept beside
//!   `supportsAuthenticatedExtendedCard` (the translator ORs them);
//! - a security scheme may arrive in the oneof-wrapped ProtoJSON form
//!   (`{"apiKeySecurityScheme":{...}}`, as v0.3 REST servers and hybrid cards
//!   send it); it is read as the equivalent `type`-tagged scheme.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::json::{Extras, Metadata};

/// A v0.3 agent card (`/.well-known/agent-card.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// The A2A protocol version the agent speaks (schema default `"0.3.0"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// Human-readable name.
    pub name: String,
    /// Human-readable description.
    pub description: String,
    /// The URL of the preferred interface.
    pub url: String,
    /// The transport of `url` (schema default `"JSONRPC"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_transport: Option<String>,
    /// Further interfaces; the schema recommends repeating the primary one here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_interfaces: Option<Vec<AgentInterface>>,
    /// Icon URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon_url: Option<String>,
    /// The organisation behind the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// The agent's own version.
    pub version: String,
    /// Documentation URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
    /// Optional capabilities.
    pub capabilities: AgentCapabilities,
    /// Security schemes by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_schemes: Option<BTreeMap<String, SecurityScheme>>,
    /// Security requirements: OR of entries, each an AND of scheme -> scopes.
    /// The v0.3 ProtoJSON form `{"schemes":{name:{"list":[…]}}}` is accepted on input.
    #[serde(
        default,
        deserialize_with = "de_requirements",
        skip_serializing_if = "Option::is_none"
    )]
    pub security: Option<Vec<SecurityRequirement>>,
    /// Media types accepted by default.
    pub default_input_modes: Vec<String>,
    /// Media types produced by default.
    pub default_output_modes: Vec<String>,
    /// The agent's skills.
    pub skills: Vec<AgentSkill>,
    /// Whether an authenticated extended card is available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_authenticated_extended_card: Option<bool>,
    /// The pre-release spelling of the extended-card flag (accepted on input).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_extended_agent_card: Option<bool>,
    /// JWS signatures over the card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signatures: Option<Vec<AgentCardSignature>>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// A v0.3 security requirement: scheme name -> required scopes.
pub type SecurityRequirement = BTreeMap<String, Vec<String>>;

/// A `StringList` of the v0.3 ProtoJSON requirement form.
#[derive(Deserialize)]
struct ProtoStringList {
    #[serde(default)]
    list: Vec<String>,
}

/// Reads a `security` list whose entries are either `{name: [scopes]}` or the
/// v0.3 ProtoJSON `{"schemes": {name: {"list": [scopes]}}}` (recognised by
/// `schemes` being the only member and holding an object).
fn de_requirements<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Vec<SecurityRequirement>>, D::Error> {
    use serde::de::Error;
    let Some(raw) = Option::<Vec<Map<String, Value>>>::deserialize(d)? else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(raw.len());
    for mut entry in raw {
        let proto_form = entry.len() == 1 && entry.get("schemes").is_some_and(Value::is_object);
        let req = match (proto_form, entry.remove("schemes")) {
            (true, Some(Value::Object(schemes))) => schemes
                .into_iter()
                .map(|(name, v)| {
                    serde_json::from_value::<ProtoStringList>(v).map(|l| (name, l.list))
                })
                .collect::<Result<SecurityRequirement, _>>(),
            (_, schemes) => {
                if let Some(v) = schemes {
                    entry.insert("schemes".to_string(), v);
                }
                serde_json::from_value(Value::Object(entry))
            }
        };
        out.push(req.map_err(D::Error::custom)?);
    }
    Ok(Some(out))
}

/// Optional capabilities of the agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// Supports SSE streaming.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Supports push notifications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
    /// Exposes status-change history (removed in v1.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_transition_history: Option<bool>,
    /// Supported protocol extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<AgentExtension>>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// A protocol extension the agent supports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentExtension {
    /// The extension's URI.
    pub uri: String,
    /// What the extension is used for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether clients must understand it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// Extension-specific parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Metadata>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// A skill of the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    /// Unique id.
    pub id: String,
    /// Human-readable name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Keywords.
    pub tags: Vec<String>,
    /// Example prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples: Option<Vec<String>>,
    /// Accepted media types (override the card defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_modes: Option<Vec<String>>,
    /// Produced media types (override the card defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_modes: Option<Vec<String>>,
    /// Security requirements of this skill (either form, as on the card).
    #[serde(
        default,
        deserialize_with = "de_requirements",
        skip_serializing_if = "Option::is_none"
    )]
    pub security: Option<Vec<SecurityRequirement>>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// A URL and the transport spoken there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// Endpoint URL.
    pub url: String,
    /// `JSONRPC`, `GRPC`, `HTTP+JSON` or a custom transport.
    pub transport: String,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// The organisation behind the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentProvider {
    /// Organisation name.
    pub organization: String,
    /// Organisation URL.
    pub url: String,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// A JWS signature over the card (RFC 7515, JSON serialisation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCardSignature {
    /// Base64url protected header.
    pub protected: String,
    /// Base64url signature.
    pub signature: String,
    /// Unprotected header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<Metadata>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// A security scheme, tagged by `type` on the wire.
///
/// Deserialisation also accepts the oneof-wrapped form of the v0.3 proto /
/// v1.0 (`{"oauth2SecurityScheme":{...}}`), converted with
/// [`crate::agent_card::security_scheme_to_v03`].
// Cards are small and parsed rarely; boxing the OAuth variant buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum SecurityScheme {
    /// `type: apiKey`.
    #[serde(rename = "apiKey")]
    ApiKey(ApiKeySecurityScheme),
    /// `type: http`.
    #[serde(rename = "http")]
    Http(HttpAuthSecurityScheme),
    /// `type: oauth2`.
    #[serde(rename = "oauth2")]
    OAuth2(OAuth2SecurityScheme),
    /// `type: openIdConnect`.
    #[serde(rename = "openIdConnect")]
    OpenIdConnect(OpenIdConnectSecurityScheme),
    /// `type: mutualTLS`.
    #[serde(rename = "mutualTLS")]
    MutualTls(MutualTlsSecurityScheme),
}

/// The member names of the oneof-wrapped security-scheme form.
/// (JSON and proto spellings).
pub const ONEOF_SCHEME_KEYS: [&str; 10] = [
    "apiKeySecurityScheme",
    "httpAuthSecurityScheme",
    "oauth2SecurityScheme",
    "openIdConnectSecurityScheme",
    "mtlsSecurityScheme",
    "api_key_security_scheme",
    "http_auth_security_scheme",
    "oauth2_security_scheme",
    "open_id_connect_security_scheme",
    "mtls_security_scheme",
];

impl<'de> Deserialize<'de> for SecurityScheme {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut map = Map::<String, Value>::deserialize(d)?;
        if let Some(tag) = map.remove("type") {
            let rest = Value::Object(map);
            let tag = match tag {
                Value::String(s) => s,
                other => {
                    return Err(D::Error::custom(format!(
                        "security scheme `type` must be a string, got {other}"
                    )))
                }
            };
            let scheme = match tag.as_str() {
                "apiKey" => serde_json::from_value(rest).map(SecurityScheme::ApiKey),
                "http" => serde_json::from_value(rest).map(SecurityScheme::Http),
                "oauth2" => serde_json::from_value(rest).map(SecurityScheme::OAuth2),
                "openIdConnect" => serde_json::from_value(rest).map(SecurityScheme::OpenIdConnect),
                "mutualTLS" => serde_json::from_value(rest).map(SecurityScheme::MutualTls),
                unknown => {
                    return Err(D::Error::custom(format!(
                        "unknown security scheme type {unknown:?}"
                    )))
                }
            };
            return scheme.map_err(D::Error::custom);
        }
        if ONEOF_SCHEME_KEYS.iter().any(|k| map.contains_key(*k)) {
            let wrapped: crate::v10::agent_card::SecurityScheme =
                serde_json::from_value(Value::Object(map)).map_err(D::Error::custom)?;
            return crate::agent_card::security_scheme_to_v03(wrapped).map_err(D::Error::custom);
        }
        Err(D::Error::custom(
            "security scheme has neither `type` nor a oneof member such as `apiKeySecurityScheme`",
        ))
    }
}

/// Where an API key is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApiKeyLocation {
    /// A cookie.
    Cookie,
    /// A request header.
    Header,
    /// A query parameter.
    Query,
}

/// `type: apiKey`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeySecurityScheme {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Where the key is sent.
    #[serde(rename = "in")]
    pub location: ApiKeyLocation,
    /// Header, query parameter or cookie name.
    pub name: String,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `type: http` (RFC 7235 schemes such as Basic or Bearer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpAuthSecurityScheme {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The HTTP authorization scheme name.
    pub scheme: String,
    /// Hint about the bearer token format (e.g. `JWT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_format: Option<String>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `type: oauth2`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuth2SecurityScheme {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The supported flows (several may be present at once in v0.3).
    pub flows: OAuthFlows,
    /// RFC 8414 metadata URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth2_metadata_url: Option<String>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `type: openIdConnect`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenIdConnectSecurityScheme {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// OpenID Connect discovery URL.
    pub open_id_connect_url: String,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `type: mutualTLS`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MutualTlsSecurityScheme {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// The OAuth 2 flows of a scheme; any subset may be present.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthFlows {
    /// Authorization-code flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_code: Option<AuthorizationCodeOAuthFlow>,
    /// Client-credentials flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_credentials: Option<ClientCredentialsOAuthFlow>,
    /// Implicit flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implicit: Option<ImplicitOAuthFlow>,
    /// Resource-owner password flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<PasswordOAuthFlow>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// OAuth scopes: name -> description.
pub type Scopes = BTreeMap<String, String>;

/// The authorization-code flow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationCodeOAuthFlow {
    /// Authorization endpoint.
    pub authorization_url: String,
    /// Token endpoint.
    pub token_url: String,
    /// Refresh endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    /// Available scopes (required; read as empty when missing).
    #[serde(default)]
    pub scopes: Scopes,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// The client-credentials flow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCredentialsOAuthFlow {
    /// Token endpoint.
    pub token_url: String,
    /// Refresh endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    /// Available scopes (required; read as empty when missing).
    #[serde(default)]
    pub scopes: Scopes,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// The implicit flow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImplicitOAuthFlow {
    /// Authorization endpoint.
    pub authorization_url: String,
    /// Refresh endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    /// Available scopes (required; read as empty when missing).
    #[serde(default)]
    pub scopes: Scopes,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// The resource-owner password flow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PasswordOAuthFlow {
    /// Token endpoint.
    pub token_url: String,
    /// Refresh endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    /// Available scopes (required; read as empty when missing).
    #[serde(default)]
    pub scopes: Scopes,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}
