//! Conversions between the prost v1.0 messages ([`crate::v10`]) and the
//! `translate::v10` models (ProtoJSON of the same proto).
//!
//! Dropped on the way to prost: unknown JSON members (`extra`) and, for
//! fields without proto3 presence, the difference between absent and
//! `""` / `[]` / `false` (read back as absent). `optional` fields keep it.
//! Unrecognized task states survive when they are numbers. Nothing here
//! panics; invalid input yields a [`TranslateError`].

use translate::json::Extras;
use translate::v10 as m;
use translate::TranslateError;

use crate::v10 as pb;
use crate::wkt::{
    metadata_from_pb, metadata_to_pb, non_empty, non_empty_vec, timestamp_from_pb, timestamp_to_pb,
    value_from_pb, value_to_pb,
};

fn missing(what: &'static str, field: &str) -> TranslateError {
    TranslateError::invalid(what, format!("{field} is missing"))
}

// ---- Part ------------------------------------------------------------------

/// Model part -> prost part.
pub fn part_to_pb(p: m::part::Part) -> pb::Part {
    use m::part::PartContent as C;
    use pb::part::Content;
    let content = match p.content {
        C::Text(t) => Content::Text(t),
        C::Raw(r) => Content::Raw(r),
        C::Url(u) => Content::Url(u),
        C::Data(v) => Content::Data(value_to_pb(v)),
    };
    pb::Part {
        content: Some(content),
        metadata: metadata_to_pb(p.metadata),
        filename: p.filename.unwrap_or_default(),
        media_type: p.media_type.unwrap_or_default(),
    }
}

/// Prost part -> model part (a part without content is rejected).
pub fn part_from_pb(p: pb::Part) -> Result<m::part::Part, TranslateError> {
    use m::part::PartContent as C;
    use pb::part::Content;
    let content = match p
        .content
        .ok_or_else(|| missing("part", "text / raw / url / data"))?
    {
        Content::Text(t) => C::Text(t),
        Content::Raw(r) => C::Raw(r),
        Content::Url(u) => C::Url(u),
        Content::Data(v) => C::Data(value_from_pb(v)?),
    };
    Ok(m::part::Part {
        content,
        metadata: metadata_from_pb(p.metadata)?,
        filename: non_empty(p.filename),
        media_type: non_empty(p.media_type),
        extra: Extras::new(),
    })
}

// ---- Message ---------------------------------------------------------------

/// Model role -> prost role.
pub fn role_to_pb(r: m::message::Role) -> pb::Role {
    match r {
        m::message::Role::Unspecified => pb::Role::Unspecified,
        m::message::Role::User => pb::Role::User,
        m::message::Role::Agent => pb::Role::Agent,
    }
}

/// Prost role number -> model role (unknown numbers rejected, as the model's
/// ProtoJSON parser does).
pub fn role_from_pb(r: i32) -> Result<m::message::Role, TranslateError> {
    match pb::Role::try_from(r) {
        Ok(pb::Role::Unspecified) => Ok(m::message::Role::Unspecified),
        Ok(pb::Role::User) => Ok(m::message::Role::User),
        Ok(pb::Role::Agent) => Ok(m::message::Role::Agent),
        Err(_) => Err(TranslateError::invalid(
            "message",
            format!("unknown role number {r}"),
        )),
    }
}

/// Model message -> prost message.
pub fn message_to_pb(x: m::message::Message) -> pb::Message {
    pb::Message {
        message_id: x.message_id,
        context_id: x.context_id.unwrap_or_default(),
        task_id: x.task_id.unwrap_or_default(),
        role: role_to_pb(x.role) as i32,
        parts: x.parts.into_iter().map(part_to_pb).collect(),
        metadata: metadata_to_pb(x.metadata),
        extensions: x.extensions.unwrap_or_default(),
        reference_task_ids: x.reference_task_ids.unwrap_or_default(),
    }
}

/// Prost message -> model message.
pub fn message_from_pb(x: pb::Message) -> Result<m::message::Message, TranslateError> {
    Ok(m::message::Message {
        message_id: x.message_id,
        context_id: non_empty(x.context_id),
        task_id: non_empty(x.task_id),
        role: role_from_pb(x.role)?,
        parts: x
            .parts
            .into_iter()
            .map(part_from_pb)
            .collect::<Result<_, _>>()?,
        metadata: metadata_from_pb(x.metadata)?,
        extensions: non_empty_vec(x.extensions),
        reference_task_ids: non_empty_vec(x.reference_task_ids),
        extra: Extras::new(),
    })
}

// ---- Task ------------------------------------------------------------------

/// Model task state -> prost enum number. An unrecognized state survives if
/// it is a number; an unrecognized name has no number and is rejected.
pub fn state_to_pb(s: &m::task::TaskState) -> Result<i32, TranslateError> {
    use m::task::TaskState as S;
    Ok(match s {
        S::Unspecified => pb::TaskState::Unspecified as i32,
        S::Submitted => pb::TaskState::Submitted as i32,
        S::Working => pb::TaskState::Working as i32,
        S::Completed => pb::TaskState::Completed as i32,
        S::Failed => pb::TaskState::Failed as i32,
        S::Canceled => pb::TaskState::Canceled as i32,
        S::InputRequired => pb::TaskState::InputRequired as i32,
        S::Rejected => pb::TaskState::Rejected as i32,
        S::AuthRequired => pb::TaskState::AuthRequired as i32,
        S::Unrecognized(raw) => raw.parse::<i32>().map_err(|_| {
            TranslateError::invalid("task state", format!("{raw:?} has no protobuf number"))
        })?,
    })
}

/// Prost enum number -> model task state (unknown numbers kept as
/// `Unrecognized("<n>")`).
pub fn state_from_pb(s: i32) -> m::task::TaskState {
    use m::task::TaskState as S;
    match pb::TaskState::try_from(s) {
        Ok(pb::TaskState::Unspecified) => S::Unspecified,
        Ok(pb::TaskState::Submitted) => S::Submitted,
        Ok(pb::TaskState::Working) => S::Working,
        Ok(pb::TaskState::Completed) => S::Completed,
        Ok(pb::TaskState::Failed) => S::Failed,
        Ok(pb::TaskState::Canceled) => S::Canceled,
        Ok(pb::TaskState::InputRequired) => S::InputRequired,
        Ok(pb::TaskState::Rejected) => S::Rejected,
        Ok(pb::TaskState::AuthRequired) => S::AuthRequired,
        Err(_) => S::Unrecognized(s.to_string()),
    }
}

/// Model status -> prost status.
pub fn status_to_pb(s: m::task::TaskStatus) -> Result<pb::TaskStatus, TranslateError> {
    Ok(pb::TaskStatus {
        state: state_to_pb(&s.state)?,
        message: s.message.map(message_to_pb),
        timestamp: s.timestamp.as_deref().map(timestamp_to_pb).transpose()?,
    })
}

/// Prost status -> model status.
pub fn status_from_pb(s: pb::TaskStatus) -> Result<m::task::TaskStatus, TranslateError> {
    Ok(m::task::TaskStatus {
        state: state_from_pb(s.state),
        message: s.message.map(message_from_pb).transpose()?,
        timestamp: s.timestamp.as_ref().map(timestamp_from_pb).transpose()?,
        extra: Extras::new(),
    })
}

/// Model artifact -> prost artifact.
pub fn artifact_to_pb(a: m::artifact::Artifact) -> pb::Artifact {
    pb::Artifact {
        artifact_id: a.artifact_id,
        name: a.name.unwrap_or_default(),
        description: a.description.unwrap_or_default(),
        parts: a.parts.into_iter().map(part_to_pb).collect(),
        metadata: metadata_to_pb(a.metadata),
        extensions: a.extensions.unwrap_or_default(),
    }
}

/// Prost artifact -> model artifact.
pub fn artifact_from_pb(a: pb::Artifact) -> Result<m::artifact::Artifact, TranslateError> {
    Ok(m::artifact::Artifact {
        artifact_id: a.artifact_id,
        name: non_empty(a.name),
        description: non_empty(a.description),
        parts: a
            .parts
            .into_iter()
            .map(part_from_pb)
            .collect::<Result<_, _>>()?,
        metadata: metadata_from_pb(a.metadata)?,
        extensions: non_empty_vec(a.extensions),
        extra: Extras::new(),
    })
}

/// Model task -> prost task.
pub fn task_to_pb(t: m::task::Task) -> Result<pb::Task, TranslateError> {
    Ok(pb::Task {
        id: t.id,
        context_id: t.context_id.unwrap_or_default(),
        status: Some(status_to_pb(t.status)?),
        artifacts: t
            .artifacts
            .unwrap_or_default()
            .into_iter()
            .map(artifact_to_pb)
            .collect(),
        history: t
            .history
            .unwrap_or_default()
            .into_iter()
            .map(message_to_pb)
            .collect(),
        metadata: metadata_to_pb(t.metadata),
    })
}

/// Prost task -> model task (`status` is required).
pub fn task_from_pb(t: pb::Task) -> Result<m::task::Task, TranslateError> {
    Ok(m::task::Task {
        id: t.id,
        context_id: non_empty(t.context_id),
        status: status_from_pb(t.status.ok_or_else(|| missing("task", "status"))?)?,
        artifacts: non_empty_vec(
            t.artifacts
                .into_iter()
                .map(artifact_from_pb)
                .collect::<Result<_, _>>()?,
        ),
        history: non_empty_vec(
            t.history
                .into_iter()
                .map(message_from_pb)
                .collect::<Result<_, _>>()?,
        ),
        metadata: metadata_from_pb(t.metadata)?,
        extra: Extras::new(),
    })
}

// ---- Events ----------------------------------------------------------------

/// Model status-update event -> prost.
pub fn status_update_to_pb(
    e: m::event::TaskStatusUpdateEvent,
) -> Result<pb::TaskStatusUpdateEvent, TranslateError> {
    Ok(pb::TaskStatusUpdateEvent {
        task_id: e.task_id,
        context_id: e.context_id,
        status: Some(status_to_pb(e.status)?),
        metadata: metadata_to_pb(e.metadata),
    })
}

/// Prost status-update event -> model (`status` is required).
pub fn status_update_from_pb(
    e: pb::TaskStatusUpdateEvent,
) -> Result<m::event::TaskStatusUpdateEvent, TranslateError> {
    Ok(m::event::TaskStatusUpdateEvent {
        task_id: e.task_id,
        context_id: e.context_id,
        status: status_from_pb(e.status.ok_or_else(|| missing("status update", "status"))?)?,
        metadata: metadata_from_pb(e.metadata)?,
        extra: Extras::new(),
    })
}

/// Model artifact-update event -> prost.
pub fn artifact_update_to_pb(e: m::event::TaskArtifactUpdateEvent) -> pb::TaskArtifactUpdateEvent {
    pb::TaskArtifactUpdateEvent {
        task_id: e.task_id,
        context_id: e.context_id,
        artifact: Some(artifact_to_pb(e.artifact)),
        append: e.append.unwrap_or(false),
        last_chunk: e.last_chunk.unwrap_or(false),
        metadata: metadata_to_pb(e.metadata),
    }
}

/// Prost artifact-update event -> model (`artifact` is required; `false`
/// flags read as absent).
pub fn artifact_update_from_pb(
    e: pb::TaskArtifactUpdateEvent,
) -> Result<m::event::TaskArtifactUpdateEvent, TranslateError> {
    Ok(m::event::TaskArtifactUpdateEvent {
        task_id: e.task_id,
        context_id: e.context_id,
        artifact: artifact_from_pb(
            e.artifact
                .ok_or_else(|| missing("artifact update", "artifact"))?,
        )?,
        append: e.append.then_some(true),
        last_chunk: e.last_chunk.then_some(true),
        metadata: metadata_from_pb(e.metadata)?,
        extra: Extras::new(),
    })
}

/// Model stream response -> prost.
pub fn stream_to_pb(s: m::event::StreamResponse) -> Result<pb::StreamResponse, TranslateError> {
    use pb::stream_response::Payload;
    let payload = match s {
        m::event::StreamResponse::Task(t) => Payload::Task(task_to_pb(t)?),
        m::event::StreamResponse::Message(x) => Payload::Message(message_to_pb(x)),
        m::event::StreamResponse::StatusUpdate(e) => Payload::StatusUpdate(status_update_to_pb(e)?),
        m::event::StreamResponse::ArtifactUpdate(e) => {
            Payload::ArtifactUpdate(artifact_update_to_pb(e))
        }
    };
    Ok(pb::StreamResponse {
        payload: Some(payload),
    })
}

/// Prost stream response -> model (empty payload rejected).
pub fn stream_from_pb(s: pb::StreamResponse) -> Result<m::event::StreamResponse, TranslateError> {
    use pb::stream_response::Payload;
    Ok(
        match s
            .payload
            .ok_or_else(|| missing("stream response", "payload"))?
        {
            Payload::Task(t) => m::event::StreamResponse::Task(task_from_pb(t)?),
            Payload::Message(x) => m::event::StreamResponse::Message(message_from_pb(x)?),
            Payload::StatusUpdate(e) => {
                m::event::StreamResponse::StatusUpdate(status_update_from_pb(e)?)
            }
            Payload::ArtifactUpdate(e) => {
                m::event::StreamResponse::ArtifactUpdate(artifact_update_from_pb(e)?)
            }
        },
    )
}

// ---- Agent card ------------------------------------------------------------

use std::collections::{BTreeMap, HashMap};

use translate::v10::agent_card as card;

fn requirement_to_pb(r: card::SecurityRequirement) -> pb::SecurityRequirement {
    pb::SecurityRequirement {
        schemes: r
            .schemes
            .into_iter()
            .map(|(k, l)| (k, pb::StringList { list: l.list }))
            .collect(),
    }
}

fn requirement_from_pb(r: pb::SecurityRequirement) -> card::SecurityRequirement {
    card::SecurityRequirement {
        schemes: r
            .schemes
            .into_iter()
            .map(|(k, l)| {
                (
                    k,
                    card::StringList {
                        list: l.list,
                        extra: Extras::new(),
                    },
                )
            })
            .collect(),
        extra: Extras::new(),
    }
}

fn requirements_to_pb(r: Option<Vec<card::SecurityRequirement>>) -> Vec<pb::SecurityRequirement> {
    r.unwrap_or_default()
        .into_iter()
        .map(requirement_to_pb)
        .collect()
}

fn requirements_from_pb(r: Vec<pb::SecurityRequirement>) -> Option<Vec<card::SecurityRequirement>> {
    non_empty_vec(r.into_iter().map(requirement_from_pb).collect())
}

fn scopes_to_pb(s: card::Scopes) -> HashMap<String, String> {
    s.into_iter().collect()
}

fn scopes_from_pb(s: HashMap<String, String>) -> card::Scopes {
    s.into_iter().collect()
}

// Implicit and password flows are deprecated in v1.0 but still on the wire.
#[allow(deprecated)]
fn flows_to_pb(f: card::OAuthFlows) -> pb::OAuthFlows {
    use card::OAuthFlow as F;
    use pb::o_auth_flows::Flow;
    let flow = f.flow.map(|flow| match flow {
        F::AuthorizationCode(a) => Flow::AuthorizationCode(pb::AuthorizationCodeOAuthFlow {
            authorization_url: a.authorization_url,
            token_url: a.token_url,
            refresh_url: a.refresh_url.unwrap_or_default(),
            scopes: scopes_to_pb(a.scopes),
            pkce_required: a.pkce_required.unwrap_or(false),
        }),
        F::ClientCredentials(c) => Flow::ClientCredentials(pb::ClientCredentialsOAuthFlow {
            token_url: c.token_url,
            refresh_url: c.refresh_url.unwrap_or_default(),
            scopes: scopes_to_pb(c.scopes),
        }),
        F::Implicit(i) => Flow::Implicit(pb::ImplicitOAuthFlow {
            authorization_url: i.authorization_url,
            refresh_url: i.refresh_url.unwrap_or_default(),
            scopes: scopes_to_pb(i.scopes),
        }),
        F::Password(p) => Flow::Password(pb::PasswordOAuthFlow {
            token_url: p.token_url,
            refresh_url: p.refresh_url.unwrap_or_default(),
            scopes: scopes_to_pb(p.scopes),
        }),
        F::DeviceCode(d) => Flow::DeviceCode(pb::DeviceCodeOAuthFlow {
            device_authorization_url: d.device_authorization_url,
            token_url: d.token_url,
            refresh_url: d.refresh_url.unwrap_or_default(),
            scopes: scopes_to_pb(d.scopes),
        }),
    });
    pb::OAuthFlows { flow }
}

#[allow(deprecated)]
fn flows_from_pb(f: Option<pb::OAuthFlows>) -> card::OAuthFlows {
    use card::OAuthFlow as F;
    use pb::o_auth_flows::Flow;
    let flow = f.and_then(|f| f.flow).map(|flow| match flow {
        Flow::AuthorizationCode(a) => F::AuthorizationCode(card::AuthorizationCodeOAuthFlow {
            authorization_url: a.authorization_url,
            token_url: a.token_url,
            refresh_url: non_empty(a.refresh_url),
            scopes: scopes_from_pb(a.scopes),
            pkce_required: a.pkce_required.then_some(true),
            extra: Extras::new(),
        }),
        Flow::ClientCredentials(c) => F::ClientCredentials(card::ClientCredentialsOAuthFlow {
            token_url: c.token_url,
            refresh_url: non_empty(c.refresh_url),
            scopes: scopes_from_pb(c.scopes),
            extra: Extras::new(),
        }),
        Flow::Implicit(i) => F::Implicit(card::ImplicitOAuthFlow {
            authorization_url: i.authorization_url,
            refresh_url: non_empty(i.refresh_url),
            scopes: scopes_from_pb(i.scopes),
            extra: Extras::new(),
        }),
        Flow::Password(p) => F::Password(card::PasswordOAuthFlow {
            token_url: p.token_url,
            refresh_url: non_empty(p.refresh_url),
            scopes: scopes_from_pb(p.scopes),
            extra: Extras::new(),
        }),
        Flow::DeviceCode(d) => F::DeviceCode(card::DeviceCodeOAuthFlow {
            device_authorization_url: d.device_authorization_url,
            token_url: d.token_url,
            refresh_url: non_empty(d.refresh_url),
            scopes: scopes_from_pb(d.scopes),
            extra: Extras::new(),
        }),
    });
    card::OAuthFlows {
        flow,
        extra: Extras::new(),
    }
}

/// Model security scheme -> prost.
pub fn security_scheme_to_pb(s: card::SecurityScheme) -> pb::SecurityScheme {
    use card::Scheme as S;
    use pb::security_scheme::Scheme;
    let scheme = match s.scheme {
        S::ApiKey(a) => Scheme::ApiKeySecurityScheme(pb::ApiKeySecurityScheme {
            description: a.description.unwrap_or_default(),
            location: a.location,
            name: a.name,
        }),
        S::HttpAuth(h) => Scheme::HttpAuthSecurityScheme(pb::HttpAuthSecurityScheme {
            description: h.description.unwrap_or_default(),
            scheme: h.scheme,
            bearer_format: h.bearer_format.unwrap_or_default(),
        }),
        S::OAuth2(o) => Scheme::Oauth2SecurityScheme(pb::OAuth2SecurityScheme {
            description: o.description.unwrap_or_default(),
            flows: Some(flows_to_pb(o.flows)),
            oauth2_metadata_url: o.oauth2_metadata_url.unwrap_or_default(),
        }),
        S::OpenIdConnect(o) => {
            Scheme::OpenIdConnectSecurityScheme(pb::OpenIdConnectSecurityScheme {
                description: o.description.unwrap_or_default(),
                open_id_connect_url: o.open_id_connect_url,
            })
        }
        S::Mtls(m) => Scheme::MtlsSecurityScheme(pb::MutualTlsSecurityScheme {
            description: m.description.unwrap_or_default(),
        }),
    };
    pb::SecurityScheme {
        scheme: Some(scheme),
    }
}

/// Prost security scheme -> model (an empty oneof is rejected).
pub fn security_scheme_from_pb(
    s: pb::SecurityScheme,
) -> Result<card::SecurityScheme, TranslateError> {
    use card::Scheme as S;
    use pb::security_scheme::Scheme;
    let scheme = match s
        .scheme
        .ok_or_else(|| missing("security scheme", "scheme"))?
    {
        Scheme::ApiKeySecurityScheme(a) => S::ApiKey(card::ApiKeySecurityScheme {
            description: non_empty(a.description),
            location: a.location,
            name: a.name,
            extra: Extras::new(),
        }),
        Scheme::HttpAuthSecurityScheme(h) => S::HttpAuth(card::HttpAuthSecurityScheme {
            description: non_empty(h.description),
            scheme: h.scheme,
            bearer_format: non_empty(h.bearer_format),
            extra: Extras::new(),
        }),
        Scheme::Oauth2SecurityScheme(o) => S::OAuth2(card::OAuth2SecurityScheme {
            description: non_empty(o.description),
            flows: flows_from_pb(o.flows),
            oauth2_metadata_url: non_empty(o.oauth2_metadata_url),
            extra: Extras::new(),
        }),
        Scheme::OpenIdConnectSecurityScheme(o) => {
            S::OpenIdConnect(card::OpenIdConnectSecurityScheme {
                description: non_empty(o.description),
                open_id_connect_url: o.open_id_connect_url,
                extra: Extras::new(),
            })
        }
        Scheme::MtlsSecurityScheme(m) => S::Mtls(card::MutualTlsSecurityScheme {
            description: non_empty(m.description),
            extra: Extras::new(),
        }),
    };
    Ok(card::SecurityScheme::new(scheme))
}

fn extension_to_pb(e: card::AgentExtension) -> pb::AgentExtension {
    pb::AgentExtension {
        uri: e.uri,
        description: e.description.unwrap_or_default(),
        required: e.required.unwrap_or(false),
        params: metadata_to_pb(e.params),
    }
}

fn extension_from_pb(e: pb::AgentExtension) -> Result<card::AgentExtension, TranslateError> {
    Ok(card::AgentExtension {
        uri: e.uri,
        description: non_empty(e.description),
        required: e.required.then_some(true),
        params: metadata_from_pb(e.params)?,
        extra: Extras::new(),
    })
}

/// Model agent card -> prost.
pub fn agent_card_to_pb(c: card::AgentCard) -> pb::AgentCard {
    let caps = c.capabilities;
    pb::AgentCard {
        name: c.name,
        description: c.description,
        supported_interfaces: c
            .supported_interfaces
            .into_iter()
            .map(|i| pb::AgentInterface {
                url: i.url,
                protocol_binding: i.protocol_binding,
                tenant: i.tenant.unwrap_or_default(),
                protocol_version: i.protocol_version,
            })
            .collect(),
        provider: c.provider.map(|p| pb::AgentProvider {
            url: p.url,
            organization: p.organization,
        }),
        version: c.version,
        documentation_url: c.documentation_url,
        capabilities: Some(pb::AgentCapabilities {
            streaming: caps.streaming,
            push_notifications: caps.push_notifications,
            extensions: caps
                .extensions
                .unwrap_or_default()
                .into_iter()
                .map(extension_to_pb)
                .collect(),
            extended_agent_card: caps.extended_agent_card,
        }),
        security_schemes: c
            .security_schemes
            .unwrap_or_default()
            .into_iter()
            .map(|(k, s)| (k, security_scheme_to_pb(s)))
            .collect(),
        security_requirements: requirements_to_pb(c.security_requirements),
        default_input_modes: c.default_input_modes,
        default_output_modes: c.default_output_modes,
        skills: c
            .skills
            .into_iter()
            .map(|s| pb::AgentSkill {
                id: s.id,
                name: s.name,
                description: s.description,
                tags: s.tags,
                examples: s.examples.unwrap_or_default(),
                input_modes: s.input_modes.unwrap_or_default(),
                output_modes: s.output_modes.unwrap_or_default(),
                security_requirements: requirements_to_pb(s.security_requirements),
            })
            .collect(),
        signatures: c
            .signatures
            .unwrap_or_default()
            .into_iter()
            .map(|s| pb::AgentCardSignature {
                protected: s.protected,
                signature: s.signature,
                header: metadata_to_pb(s.header),
            })
            .collect(),
        icon_url: c.icon_url,
    }
}

/// Prost agent card -> model.
pub fn agent_card_from_pb(c: pb::AgentCard) -> Result<card::AgentCard, TranslateError> {
    let caps = c.capabilities.unwrap_or_default();
    let schemes = c
        .security_schemes
        .into_iter()
        .map(|(k, s)| security_scheme_from_pb(s).map(|s| (k, s)))
        .collect::<Result<BTreeMap<_, _>, _>>()?;
    Ok(card::AgentCard {
        name: c.name,
        description: c.description,
        supported_interfaces: c
            .supported_interfaces
            .into_iter()
            .map(|i| card::AgentInterface {
                url: i.url,
                protocol_binding: i.protocol_binding,
                tenant: non_empty(i.tenant),
                protocol_version: i.protocol_version,
                extra: Extras::new(),
            })
            .collect(),
        provider: c.provider.map(|p| card::AgentProvider {
            url: p.url,
            organization: p.organization,
            extra: Extras::new(),
        }),
        version: c.version,
        documentation_url: c.documentation_url,
        capabilities: card::AgentCapabilities {
            streaming: caps.streaming,
            push_notifications: caps.push_notifications,
            extensions: non_empty_vec(
                caps.extensions
                    .into_iter()
                    .map(extension_from_pb)
                    .collect::<Result<_, _>>()?,
            ),
            extended_agent_card: caps.extended_agent_card,
            extra: Extras::new(),
        },
        security_schemes: if schemes.is_empty() {
            None
        } else {
            Some(schemes)
        },
        security_requirements: requirements_from_pb(c.security_requirements),
        default_input_modes: c.default_input_modes,
        default_output_modes: c.default_output_modes,
        skills: c
            .skills
            .into_iter()
            .map(|s| card::AgentSkill {
                id: s.id,
                name: s.name,
                description: s.description,
                tags: s.tags,
                examples: non_empty_vec(s.examples),
                input_modes: non_empty_vec(s.input_modes),
                output_modes: non_empty_vec(s.output_modes),
                security_requirements: requirements_from_pb(s.security_requirements),
                extra: Extras::new(),
            })
            .collect(),
        signatures: non_empty_vec(
            c.signatures
                .into_iter()
                .map(|s| {
                    metadata_from_pb(s.header).map(|header| card::AgentCardSignature {
                        protected: s.protected,
                        signature: s.signature,
                        header,
                        extra: Extras::new(),
                    })
                })
                .collect::<Result<_, _>>()?,
        ),
        icon_url: c.icon_url,
        extra: Extras::new(),
    })
}
