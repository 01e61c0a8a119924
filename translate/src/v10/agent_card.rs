//! The v1.0 agent card: ProtoJSON of `lf.a2a.v1.AgentCard` and its
//! sub-messages.
//!
//! ProtoJSON omits fields at their default value, so REQUIRED strings, lists
//! and maps are read as empty when missing (`#[serde(default)]`) and always
//! written. Oneofs (`SecurityScheme.scheme`, `OAuthFlows.flow`) are objects
//! whose single member name is the discriminator; members beside it are kept
//! as unknown members.

use std::collections::BTreeMap;

use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::json::{Extras, Metadata};

/// A v1.0 agent card.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// Human-readable name.
    #[serde(default)]
    pub name: String,
    /// Human-readable description.
    #[serde(default)]
    pub description: String,
    /// The interfaces, preferred first.
    #[serde(alias = "supported_interfaces", default)]
    pub supported_interfaces: Vec<AgentInterface>,
    /// The organisation behind the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// The agent's own version.
    #[serde(default)]
    pub version: String,
    /// Documentation URL.
    #[serde(
        alias = "documentation_url",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub documentation_url: Option<String>,
    /// Optional capabilities.
    #[serde(default)]
    pub capabilities: AgentCapabilities,
    /// Security schemes by name.
    #[serde(
        alias = "security_schemes",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub security_schemes: Option<BTreeMap<String, SecurityScheme>>,
    /// Security requirements (OR of entries).
    #[serde(
        alias = "security_requirements",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub security_requirements: Option<Vec<SecurityRequirement>>,
    /// Media types accepted by default.
    #[serde(alias = "default_input_modes", default)]
    pub default_input_modes: Vec<String>,
    /// Media types produced by default.
    #[serde(alias = "default_output_modes", default)]
    pub default_output_modes: Vec<String>,
    /// The agent's skills.
    #[serde(default)]
    pub skills: Vec<AgentSkill>,
    /// JWS signatures over the card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signatures: Option<Vec<AgentCardSignature>>,
    /// Icon URL.
    #[serde(alias = "icon_url", default, skip_serializing_if = "Option::is_none")]
    pub icon_url: Option<String>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// One interface: URL, protocol binding and A2A version.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// Endpoint URL (`host:port` for gRPC in v1.0.1+).
    #[serde(default)]
    pub url: String,
    /// `JSONRPC`, `GRPC`, `HTTP+JSON` or a URI for a custom binding.
    #[serde(alias = "protocol_binding", default)]
    pub protocol_binding: String,
    /// Tenant to send in requests to this interface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The A2A version spoken there, `Major.Minor`.
    #[serde(alias = "protocol_version", default)]
    pub protocol_version: String,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// The organisation behind the agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentProvider {
    /// Organisation URL.
    #[serde(default)]
    pub url: String,
    /// Organisation name.
    #[serde(default)]
    pub organization: String,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// Optional capabilities of the agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// Supports streaming.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Supports push notifications.
    #[serde(
        alias = "push_notifications",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub push_notifications: Option<bool>,
    /// Supported protocol extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<AgentExtension>>,
    /// Whether an extended card is available (`GetExtendedAgentCard`).
    #[serde(
        alias = "extended_agent_card",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub extended_agent_card: Option<bool>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// A protocol extension the agent supports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentExtension {
    /// The extension's URI.
    #[serde(default)]
    pub uri: String,
    /// What the extension is used for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether clients must understand it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// Extension-specific parameters (`google.protobuf.Struct`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Metadata>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// A skill of the agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    /// Unique id.
    #[serde(default)]
    pub id: String,
    /// Human-readable name.
    #[serde(default)]
    pub name: String,
    /// Description.
    #[serde(default)]
    pub description: String,
    /// Keywords.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Example prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples: Option<Vec<String>>,
    /// Accepted media types.
    #[serde(
        alias = "input_modes",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub input_modes: Option<Vec<String>>,
    /// Produced media types.
    #[serde(
        alias = "output_modes",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub output_modes: Option<Vec<String>>,
    /// Security requirements of this skill.
    #[serde(
        alias = "security_requirements",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub security_requirements: Option<Vec<SecurityRequirement>>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// A JWS signature over the card.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCardSignature {
    /// Base64url protected header.
    #[serde(default)]
    pub protected: String,
    /// Base64url signature.
    #[serde(default)]
    pub signature: String,
    /// Unprotected header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<Metadata>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// A security requirement: scheme name -> scopes (AND of its entries).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecurityRequirement {
    /// Scheme name -> required scopes.
    #[serde(default)]
    pub schemes: BTreeMap<String, StringList>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `lf.a2a.v1.StringList`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringList {
    /// The strings.
    #[serde(default)]
    pub list: Vec<String>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// A security scheme: the `scheme` oneof plus unknown members beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct SecurityScheme {
    /// The oneof member.
    pub scheme: Scheme,
    /// Unknown members beside the oneof member (e.g. the v0.3 `type`, `in`,
    /// ... of an a2a-python hybrid card).
    pub extra: Extras,
}

/// The `SecurityScheme.scheme` oneof.
// Cards are small and parsed rarely; boxing the OAuth variant buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Scheme {
    /// `apiKeySecurityScheme`.
    ApiKey(ApiKeySecurityScheme),
    /// `httpAuthSecurityScheme`.
    HttpAuth(HttpAuthSecurityScheme),
    /// `oauth2SecurityScheme`.
    OAuth2(OAuth2SecurityScheme),
    /// `openIdConnectSecurityScheme`.
    OpenIdConnect(OpenIdConnectSecurityScheme),
    /// `mtlsSecurityScheme`.
    Mtls(MutualTlsSecurityScheme),
}

impl Scheme {
    /// The ProtoJSON member name of this alternative.
    pub fn member_name(&self) -> &'static str {
        match self {
            Scheme::ApiKey(_) => "apiKeySecurityScheme",
            Scheme::HttpAuth(_) => "httpAuthSecurityScheme",
            Scheme::OAuth2(_) => "oauth2SecurityScheme",
            Scheme::OpenIdConnect(_) => "openIdConnectSecurityScheme",
            Scheme::Mtls(_) => "mtlsSecurityScheme",
        }
    }
}

impl SecurityScheme {
    /// A scheme without unknown members.
    pub fn new(scheme: Scheme) -> Self {
        SecurityScheme {
            scheme,
            extra: Extras::new(),
        }
    }
}

/// Writes a oneof object: the member first, then the unknown members.
fn serialize_oneof<S: Serializer, T: Serialize>(
    s: S,
    member: &str,
    value: &T,
    extra: &Extras,
) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(Some(1 + extra.len()))?;
    m.serialize_entry(member, value)?;
    for (k, v) in extra {
        m.serialize_entry(k, v)?;
    }
    m.end()
}

/// A oneof object split into its member (name, value), if any, and the rest.
type OneofSplit = (Option<(&'static str, Value)>, Extras);

/// Splits a oneof object into its single member (if any) and the rest.
/// `members` pairs each JSON name with its proto (snake_case) name, which
/// ProtoJSON parsers also accept. Returns an error naming `what` when several
/// members are set.
fn split_oneof(
    mut map: Map<String, Value>,
    members: &[(&'static str, &'static str)],
    what: &str,
) -> Result<OneofSplit, String> {
    let mut found: Option<(&'static str, Value)> = None;
    for (name, proto_name) in members {
        for key in [*name, *proto_name] {
            if let Some(v) = map.remove(key) {
                if let Some((first, _)) = &found {
                    return Err(format!("{what} sets both `{first}` and `{key}`"));
                }
                found = Some((name, v));
            }
        }
    }
    Ok((found, map))
}

/// JSON and proto names of the `SecurityScheme.scheme` members.
const SCHEME_MEMBERS: [(&str, &str); 5] = [
    ("apiKeySecurityScheme", "api_key_security_scheme"),
    ("httpAuthSecurityScheme", "http_auth_security_scheme"),
    ("oauth2SecurityScheme", "oauth2_security_scheme"),
    (
        "openIdConnectSecurityScheme",
        "open_id_connect_security_scheme",
    ),
    ("mtlsSecurityScheme", "mtls_security_scheme"),
];

/// JSON and proto names of the `OAuthFlows.flow` members.
const FLOW_MEMBERS: [(&str, &str); 5] = [
    ("authorizationCode", "authorization_code"),
    ("clientCredentials", "client_credentials"),
    ("implicit", "implicit"),
    ("password", "password"),
    ("deviceCode", "device_code"),
];

impl Serialize for SecurityScheme {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let name = self.scheme.member_name();
        match &self.scheme {
            Scheme::ApiKey(x) => serialize_oneof(s, name, x, &self.extra),
            Scheme::HttpAuth(x) => serialize_oneof(s, name, x, &self.extra),
            Scheme::OAuth2(x) => serialize_oneof(s, name, x, &self.extra),
            Scheme::OpenIdConnect(x) => serialize_oneof(s, name, x, &self.extra),
            Scheme::Mtls(x) => serialize_oneof(s, name, x, &self.extra),
        }
    }
}

impl<'de> Deserialize<'de> for SecurityScheme {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let map = Map::<String, Value>::deserialize(d)?;
        let (found, extra) =
            split_oneof(map, &SCHEME_MEMBERS, "security scheme").map_err(D::Error::custom)?;
        let Some((name, v)) = found else {
            return Err(D::Error::custom(
                "security scheme sets none of apiKeySecurityScheme, httpAuthSecurityScheme, \
                 oauth2SecurityScheme, openIdConnectSecurityScheme, mtlsSecurityScheme",
            ));
        };
        let scheme = match name {
            "apiKeySecurityScheme" => serde_json::from_value(v).map(Scheme::ApiKey),
            "httpAuthSecurityScheme" => serde_json::from_value(v).map(Scheme::HttpAuth),
            "oauth2SecurityScheme" => serde_json::from_value(v).map(Scheme::OAuth2),
            "openIdConnectSecurityScheme" => serde_json::from_value(v).map(Scheme::OpenIdConnect),
            "mtlsSecurityScheme" => serde_json::from_value(v).map(Scheme::Mtls),
            other => return Err(D::Error::custom(format!("unknown oneof member {other:?}"))),
        }
        .map_err(D::Error::custom)?;
        Ok(SecurityScheme { scheme, extra })
    }
}

/// `apiKeySecurityScheme`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeySecurityScheme {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Where the key is sent (documented: `query`, `header`, `cookie`).
    #[serde(default)]
    pub location: String,
    /// Header, query parameter or cookie name.
    #[serde(default)]
    pub name: String,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `httpAuthSecurityScheme`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpAuthSecurityScheme {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The HTTP authorization scheme name.
    #[serde(default)]
    pub scheme: String,
    /// Bearer token format hint.
    #[serde(
        alias = "bearer_format",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub bearer_format: Option<String>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `oauth2SecurityScheme`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuth2SecurityScheme {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The flow (a oneof: at most one).
    #[serde(default)]
    pub flows: OAuthFlows,
    /// RFC 8414 metadata URL.
    #[serde(
        alias = "oauth2_metadata_url",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub oauth2_metadata_url: Option<String>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `openIdConnectSecurityScheme`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenIdConnectSecurityScheme {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// OpenID Connect discovery URL.
    #[serde(alias = "open_id_connect_url", default)]
    pub open_id_connect_url: String,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `mtlsSecurityScheme`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MutualTlsSecurityScheme {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `OAuthFlows`: the `flow` oneof (absent when no member is set) plus
/// unknown members.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OAuthFlows {
    /// The single flow, if any.
    pub flow: Option<OAuthFlow>,
    /// Unknown members.
    pub extra: Extras,
}

/// The `OAuthFlows.flow` oneof.
#[derive(Debug, Clone, PartialEq)]
pub enum OAuthFlow {
    /// `authorizationCode`.
    AuthorizationCode(AuthorizationCodeOAuthFlow),
    /// `clientCredentials`.
    ClientCredentials(ClientCredentialsOAuthFlow),
    /// `implicit` (deprecated).
    Implicit(ImplicitOAuthFlow),
    /// `password` (deprecated).
    Password(PasswordOAuthFlow),
    /// `deviceCode` (RFC 8628; v1.0 only).
    DeviceCode(DeviceCodeOAuthFlow),
}

/// The member names of the `OAuthFlows.flow` oneof.
pub const OAUTH_FLOW_KEYS: [&str; 5] = [
    "authorizationCode",
    "clientCredentials",
    "implicit",
    "password",
    "deviceCode",
];

impl OAuthFlow {
    /// The ProtoJSON member name of this alternative.
    pub fn member_name(&self) -> &'static str {
        match self {
            OAuthFlow::AuthorizationCode(_) => "authorizationCode",
            OAuthFlow::ClientCredentials(_) => "clientCredentials",
            OAuthFlow::Implicit(_) => "implicit",
            OAuthFlow::Password(_) => "password",
            OAuthFlow::DeviceCode(_) => "deviceCode",
        }
    }
}

impl Serialize for OAuthFlows {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Some(flow) = &self.flow else {
            return self.extra.serialize(s);
        };
        let name = flow.member_name();
        match flow {
            OAuthFlow::AuthorizationCode(x) => serialize_oneof(s, name, x, &self.extra),
            OAuthFlow::ClientCredentials(x) => serialize_oneof(s, name, x, &self.extra),
            OAuthFlow::Implicit(x) => serialize_oneof(s, name, x, &self.extra),
            OAuthFlow::Password(x) => serialize_oneof(s, name, x, &self.extra),
            OAuthFlow::DeviceCode(x) => serialize_oneof(s, name, x, &self.extra),
        }
    }
}

impl<'de> Deserialize<'de> for OAuthFlows {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let map = Map::<String, Value>::deserialize(d)?;
        let (found, extra) =
            split_oneof(map, &FLOW_MEMBERS, "OAuthFlows").map_err(D::Error::custom)?;
        let flow = match found {
            None => None,
            Some((name, v)) => Some(
                match name {
                    "authorizationCode" => {
                        serde_json::from_value(v).map(OAuthFlow::AuthorizationCode)
                    }
                    "clientCredentials" => {
                        serde_json::from_value(v).map(OAuthFlow::ClientCredentials)
                    }
                    "implicit" => serde_json::from_value(v).map(OAuthFlow::Implicit),
                    "password" => serde_json::from_value(v).map(OAuthFlow::Password),
                    "deviceCode" => serde_json::from_value(v).map(OAuthFlow::DeviceCode),
                    other => {
                        return Err(D::Error::custom(format!("unknown oneof member {other:?}")))
                    }
                }
                .map_err(D::Error::custom)?,
            ),
        };
        Ok(OAuthFlows { flow, extra })
    }
}

/// OAuth scopes: name -> description.
pub type Scopes = BTreeMap<String, String>;

/// `authorizationCode`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationCodeOAuthFlow {
    /// Authorization endpoint.
    #[serde(alias = "authorization_url", default)]
    pub authorization_url: String,
    /// Token endpoint.
    #[serde(alias = "token_url", default)]
    pub token_url: String,
    /// Refresh endpoint.
    #[serde(
        alias = "refresh_url",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub refresh_url: Option<String>,
    /// Available scopes.
    #[serde(default)]
    pub scopes: Scopes,
    /// Whether PKCE (RFC 7636) is required (v1.0 only).
    #[serde(
        alias = "pkce_required",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub pkce_required: Option<bool>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `clientCredentials`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCredentialsOAuthFlow {
    /// Token endpoint.
    #[serde(alias = "token_url", default)]
    pub token_url: String,
    /// Refresh endpoint.
    #[serde(
        alias = "refresh_url",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub refresh_url: Option<String>,
    /// Available scopes.
    #[serde(default)]
    pub scopes: Scopes,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `implicit` (deprecated).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImplicitOAuthFlow {
    /// Authorization endpoint.
    #[serde(alias = "authorization_url", default)]
    pub authorization_url: String,
    /// Refresh endpoint.
    #[serde(
        alias = "refresh_url",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub refresh_url: Option<String>,
    /// Available scopes.
    #[serde(default)]
    pub scopes: Scopes,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `password` (deprecated).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PasswordOAuthFlow {
    /// Token endpoint.
    #[serde(alias = "token_url", default)]
    pub token_url: String,
    /// Refresh endpoint.
    #[serde(
        alias = "refresh_url",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub refresh_url: Option<String>,
    /// Available scopes.
    #[serde(default)]
    pub scopes: Scopes,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `deviceCode` (v1.0 only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceCodeOAuthFlow {
    /// Device authorization endpoint.
    #[serde(alias = "device_authorization_url", default)]
    pub device_authorization_url: String,
    /// Token endpoint.
    #[serde(alias = "token_url", default)]
    pub token_url: String,
    /// Refresh endpoint.
    #[serde(
        alias = "refresh_url",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub refresh_url: Option<String>,
    /// Available scopes.
    #[serde(default)]
    pub scopes: Scopes,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}
