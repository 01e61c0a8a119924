//! Conversions between the prost v0.3 messages ([`crate::v03`], the gRPC /
//! ProtoJSON shape) and the `translate::v03` models (the JSON-RPC shape).
//!
//! What the v0.3 proto cannot carry is dropped on the way to prost: unknown
//! JSON members (`extra`), `Message.referenceTaskIds`, and the difference
//! between an absent and an empty string / list / `false` flag (proto3 has no
//! presence for them; on the way back `""`, `[]` and `false` read as absent).
//! v0.3 `"unknown"` task state is `TASK_STATE_UNSPECIFIED`.
//! Nothing here panics; invalid input yields a [`TranslateError`].

use translate::json::Extras;
use translate::v03 as m;
use translate::v03::part::Kind;
use translate::v10::part::{decode_base64, encode_base64};
use translate::TranslateError;

use crate::v03 as pb;
use crate::wkt::{
    metadata_from_pb, metadata_to_pb, non_empty, non_empty_vec, struct_from_pb, struct_to_pb,
    timestamp_from_pb, timestamp_to_pb,
};

fn missing(what: &'static str, field: &str) -> TranslateError {
    TranslateError::invalid(what, format!("{field} is missing"))
}

// ---- Part ------------------------------------------------------------------

/// The v0.3 proto `file_with_bytes` as the v0.3 SDKs fill it: a2a-python
/// 0.3 (and its 1.x compat layer) and a2a-go put the UTF-8 bytes of the
/// base64 *text* there (`bytes.encode('utf-8')`, `[]byte(fc.Bytes)`), not
/// the decoded bytes; their peers decode it as text. So the proxy writes the
/// canonical base64 text of the content (invalid base64 is refused).
pub fn v03_file_bytes_to_pb(b64: &str) -> Result<Vec<u8>, TranslateError> {
    let raw = decode_base64(b64).map_err(|e| TranslateError::invalid("file part", e))?;
    Ok(encode_base64(&raw).into_bytes())
}

/// Reads a v0.3 proto `file_with_bytes` back to base64: base64 text (the
/// SDK convention, see [`v03_file_bytes_to_pb`]) is taken as such; anything
/// else (not UTF-8, or not base64: a peer that put the content itself) is
/// the content. Lossy: content that happens to be valid base64 text is read
/// as the SDK convention.
pub fn v03_file_bytes_from_pb(b: &[u8]) -> String {
    std::str::from_utf8(b)
        .ok()
        .and_then(|text| decode_base64(text).ok())
        .map(|raw| encode_base64(&raw))
        .unwrap_or_else(|| encode_base64(b))
}

/// Model part -> prost part.
pub fn part_to_pb(p: m::part::Part) -> Result<pb::Part, TranslateError> {
    Ok(match p {
        m::part::Part::Text(t) => pb::Part {
            part: Some(pb::part::Part::Text(t.text)),
            metadata: metadata_to_pb(t.metadata),
        },
        m::part::Part::File(f) => {
            let file = match (f.file.bytes, f.file.uri) {
                (Some(b), None) => pb::file_part::File::FileWithBytes(v03_file_bytes_to_pb(&b)?),
                (None, Some(u)) => pb::file_part::File::FileWithUri(u),
                (Some(_), Some(_)) => {
                    return Err(TranslateError::invalid(
                        "file part",
                        "file sets both bytes and uri",
                    ))
                }
                (None, None) => {
                    return Err(TranslateError::invalid(
                        "file part",
                        "file sets neither bytes nor uri",
                    ))
                }
            };
            pb::Part {
                part: Some(pb::part::Part::File(pb::FilePart {
                    file: Some(file),
                    mime_type: f.file.mime_type.unwrap_or_default(),
                    name: f.file.name.unwrap_or_default(),
                })),
                metadata: metadata_to_pb(f.metadata),
            }
        }
        m::part::Part::Data(d) => pb::Part {
            part: Some(pb::part::Part::Data(pb::DataPart {
                data: Some(struct_to_pb(d.data)),
            })),
            metadata: metadata_to_pb(d.metadata),
        },
    })
}

/// Prost part -> model part.
pub fn part_from_pb(p: pb::Part) -> Result<m::part::Part, TranslateError> {
    let metadata = metadata_from_pb(p.metadata)?;
    Ok(match p.part {
        Some(pb::part::Part::Text(text)) => m::part::Part::Text(m::part::TextPart {
            kind: Kind::new(),
            text,
            metadata,
            extra: Extras::new(),
        }),
        Some(pb::part::Part::File(f)) => {
            let (bytes, uri) = match f.file {
                Some(pb::file_part::File::FileWithBytes(b)) => {
                    (Some(v03_file_bytes_from_pb(&b)), None)
                }
                Some(pb::file_part::File::FileWithUri(u)) => (None, Some(u)),
                None => return Err(missing("file part", "file_with_bytes / file_with_uri")),
            };
            m::part::Part::File(m::part::FilePart {
                kind: Kind::new(),
                file: m::part::FileContent {
                    bytes,
                    uri,
                    name: non_empty(f.name),
                    mime_type: non_empty(f.mime_type),
                    extra: Extras::new(),
                },
                metadata,
                extra: Extras::new(),
            })
        }
        Some(pb::part::Part::Data(d)) => m::part::Part::Data(m::part::DataPart {
            kind: Kind::new(),
            data: d.data.map(struct_from_pb).transpose()?.unwrap_or_default(),
            metadata,
            extra: Extras::new(),
        }),
        None => return Err(missing("part", "text / file / data")),
    })
}

// ---- Message ---------------------------------------------------------------

/// Model role -> prost role number.
pub fn role_to_pb(r: m::message::Role) -> pb::Role {
    match r {
        m::message::Role::User => pb::Role::User,
        m::message::Role::Agent => pb::Role::Agent,
    }
}

/// Prost role number -> model role (`ROLE_UNSPECIFIED` and unknown numbers
/// have no v0.3 JSON counterpart).
pub fn role_from_pb(r: i32) -> Result<m::message::Role, TranslateError> {
    match pb::Role::try_from(r) {
        Ok(pb::Role::User) => Ok(m::message::Role::User),
        Ok(pb::Role::Agent) => Ok(m::message::Role::Agent),
        Ok(pb::Role::Unspecified) | Err(_) => Err(TranslateError::invalid(
            "message",
            format!("role {r} is not user or agent"),
        )),
    }
}

/// Model message -> prost message (`referenceTaskIds` and extras dropped).
pub fn message_to_pb(x: m::message::Message) -> Result<pb::Message, TranslateError> {
    Ok(pb::Message {
        message_id: x.message_id,
        context_id: x.context_id.unwrap_or_default(),
        task_id: x.task_id.unwrap_or_default(),
        role: role_to_pb(x.role) as i32,
        content: x
            .parts
            .into_iter()
            .map(part_to_pb)
            .collect::<Result<_, _>>()?,
        metadata: metadata_to_pb(x.metadata),
        extensions: x.extensions.unwrap_or_default(),
    })
}

/// Prost message -> model message.
pub fn message_from_pb(x: pb::Message) -> Result<m::message::Message, TranslateError> {
    Ok(m::message::Message {
        kind: Kind::new(),
        message_id: x.message_id,
        context_id: non_empty(x.context_id),
        task_id: non_empty(x.task_id),
        role: role_from_pb(x.role)?,
        parts: x
            .content
            .into_iter()
            .map(part_from_pb)
            .collect::<Result<_, _>>()?,
        metadata: metadata_from_pb(x.metadata)?,
        extensions: non_empty_vec(x.extensions),
        reference_task_ids: None,
        extra: Extras::new(),
    })
}

// ---- Task ------------------------------------------------------------------

/// Model task state -> prost task state (`unknown` -> `UNSPECIFIED`).
pub fn state_to_pb(s: m::task::TaskState) -> pb::TaskState {
    use m::task::TaskState as S;
    match s {
        S::Submitted => pb::TaskState::Submitted,
        S::Working => pb::TaskState::Working,
        S::InputRequired => pb::TaskState::InputRequired,
        S::Completed => pb::TaskState::Completed,
        S::Canceled => pb::TaskState::Cancelled,
        S::Failed => pb::TaskState::Failed,
        S::Rejected => pb::TaskState::Rejected,
        S::AuthRequired => pb::TaskState::AuthRequired,
        S::Unknown => pb::TaskState::Unspecified,
    }
}

/// Prost task state number -> model task state (`UNSPECIFIED` and unknown
/// numbers -> `unknown`).
pub fn state_from_pb(s: i32) -> m::task::TaskState {
    use m::task::TaskState as S;
    match pb::TaskState::try_from(s) {
        Ok(pb::TaskState::Submitted) => S::Submitted,
        Ok(pb::TaskState::Working) => S::Working,
        Ok(pb::TaskState::Completed) => S::Completed,
        Ok(pb::TaskState::Failed) => S::Failed,
        Ok(pb::TaskState::Cancelled) => S::Canceled,
        Ok(pb::TaskState::InputRequired) => S::InputRequired,
        Ok(pb::TaskState::Rejected) => S::Rejected,
        Ok(pb::TaskState::AuthRequired) => S::AuthRequired,
        Ok(pb::TaskState::Unspecified) | Err(_) => S::Unknown,
    }
}

/// Model status -> prost status (timestamp parsed; naive = UTC).
pub fn status_to_pb(s: m::task::TaskStatus) -> Result<pb::TaskStatus, TranslateError> {
    Ok(pb::TaskStatus {
        state: state_to_pb(s.state) as i32,
        update: s.message.map(message_to_pb).transpose()?,
        timestamp: s.timestamp.as_deref().map(timestamp_to_pb).transpose()?,
    })
}

/// Prost status -> model status (timestamp rendered in UTC with `Z`).
pub fn status_from_pb(s: pb::TaskStatus) -> Result<m::task::TaskStatus, TranslateError> {
    Ok(m::task::TaskStatus {
        state: state_from_pb(s.state),
        message: s.update.map(message_from_pb).transpose()?,
        timestamp: s.timestamp.as_ref().map(timestamp_from_pb).transpose()?,
        extra: Extras::new(),
    })
}

/// Model artifact -> prost artifact.
pub fn artifact_to_pb(a: m::artifact::Artifact) -> Result<pb::Artifact, TranslateError> {
    Ok(pb::Artifact {
        artifact_id: a.artifact_id,
        name: a.name.unwrap_or_default(),
        description: a.description.unwrap_or_default(),
        parts: a
            .parts
            .into_iter()
            .map(part_to_pb)
            .collect::<Result<_, _>>()?,
        metadata: metadata_to_pb(a.metadata),
        extensions: a.extensions.unwrap_or_default(),
    })
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
        context_id: t.context_id,
        status: Some(status_to_pb(t.status)?),
        artifacts: t
            .artifacts
            .unwrap_or_default()
            .into_iter()
            .map(artifact_to_pb)
            .collect::<Result<_, _>>()?,
        history: t
            .history
            .unwrap_or_default()
            .into_iter()
            .map(message_to_pb)
            .collect::<Result<_, _>>()?,
        metadata: metadata_to_pb(t.metadata),
    })
}

/// Prost task -> model task (`status` is required).
pub fn task_from_pb(t: pb::Task) -> Result<m::task::Task, TranslateError> {
    Ok(m::task::Task {
        kind: Kind::new(),
        id: t.id,
        context_id: t.context_id,
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
        r#final: e.is_final,
        metadata: metadata_to_pb(e.metadata),
    })
}

/// Prost status-update event -> model (`status` is required).
pub fn status_update_from_pb(
    e: pb::TaskStatusUpdateEvent,
) -> Result<m::event::TaskStatusUpdateEvent, TranslateError> {
    Ok(m::event::TaskStatusUpdateEvent {
        kind: Kind::new(),
        task_id: e.task_id,
        context_id: e.context_id,
        status: status_from_pb(e.status.ok_or_else(|| missing("status update", "status"))?)?,
        is_final: e.r#final,
        metadata: metadata_from_pb(e.metadata)?,
        extra: Extras::new(),
    })
}

/// Model artifact-update event -> prost.
pub fn artifact_update_to_pb(
    e: m::event::TaskArtifactUpdateEvent,
) -> Result<pb::TaskArtifactUpdateEvent, TranslateError> {
    Ok(pb::TaskArtifactUpdateEvent {
        task_id: e.task_id,
        context_id: e.context_id,
        artifact: Some(artifact_to_pb(e.artifact)?),
        append: e.append.unwrap_or(false),
        last_chunk: e.last_chunk.unwrap_or(false),
        metadata: metadata_to_pb(e.metadata),
    })
}

/// Prost artifact-update event -> model (`artifact` is required; `false`
/// flags read as absent).
pub fn artifact_update_from_pb(
    e: pb::TaskArtifactUpdateEvent,
) -> Result<m::event::TaskArtifactUpdateEvent, TranslateError> {
    Ok(m::event::TaskArtifactUpdateEvent {
        kind: Kind::new(),
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

/// Model stream event -> prost `StreamResponse`.
pub fn stream_to_pb(e: m::event::StreamEvent) -> Result<pb::StreamResponse, TranslateError> {
    use pb::stream_response::Payload;
    let payload = match e {
        m::event::StreamEvent::Task(t) => Payload::Task(task_to_pb(t)?),
        m::event::StreamEvent::Message(x) => Payload::Msg(message_to_pb(x)?),
        m::event::StreamEvent::StatusUpdate(s) => Payload::StatusUpdate(status_update_to_pb(s)?),
        m::event::StreamEvent::ArtifactUpdate(a) => {
            Payload::ArtifactUpdate(artifact_update_to_pb(a)?)
        }
    };
    Ok(pb::StreamResponse {
        payload: Some(payload),
    })
}

/// Prost `StreamResponse` -> model stream event (empty payload rejected).
pub fn stream_from_pb(s: pb::StreamResponse) -> Result<m::event::StreamEvent, TranslateError> {
    use pb::stream_response::Payload;
    Ok(
        match s
            .payload
            .ok_or_else(|| missing("stream response", "payload"))?
        {
            Payload::Task(t) => m::event::StreamEvent::Task(task_from_pb(t)?),
            Payload::Msg(x) => m::event::StreamEvent::Message(message_from_pb(x)?),
            Payload::StatusUpdate(e) => {
                m::event::StreamEvent::StatusUpdate(status_update_from_pb(e)?)
            }
            Payload::ArtifactUpdate(e) => {
                m::event::StreamEvent::ArtifactUpdate(artifact_update_from_pb(e)?)
            }
        },
    )
}

/// Model `message/send` result (a task or a message) -> prost
/// `SendMessageResponse`; status and artifact updates are not valid here.
pub fn send_response_to_pb(
    e: m::event::StreamEvent,
) -> Result<pb::SendMessageResponse, TranslateError> {
    use pb::send_message_response::Payload;
    let payload = match e {
        m::event::StreamEvent::Task(t) => Payload::Task(task_to_pb(t)?),
        m::event::StreamEvent::Message(x) => Payload::Msg(message_to_pb(x)?),
        m::event::StreamEvent::StatusUpdate(_) | m::event::StreamEvent::ArtifactUpdate(_) => {
            return Err(TranslateError::invalid(
                "send message response",
                "only a task or a message can be a SendMessage result",
            ))
        }
    };
    Ok(pb::SendMessageResponse {
        payload: Some(payload),
    })
}

/// Prost `SendMessageResponse` -> model result (a task or a message).
pub fn send_response_from_pb(
    s: pb::SendMessageResponse,
) -> Result<m::event::StreamEvent, TranslateError> {
    use pb::send_message_response::Payload;
    Ok(
        match s
            .payload
            .ok_or_else(|| missing("send message response", "payload"))?
        {
            Payload::Task(t) => m::event::StreamEvent::Task(task_from_pb(t)?),
            Payload::Msg(x) => m::event::StreamEvent::Message(message_from_pb(x)?),
        },
    )
}

// ---- Agent card ------------------------------------------------------------
//
// Card-specific losses on the way to prost: `capabilities.stateTransitionHistory`
// (JSON only), the pre-release `supportsExtendedAgentCard` spelling (ORed
// into field 13), and all but the first OAuth flow when a v0.3 JSON card
// declares several (the proto `OAuthFlows` is a oneof; the first of
// authorizationCode, clientCredentials, implicit, password wins).

use std::collections::{BTreeMap, HashMap};

use translate::v03::agent_card as card;

fn requirements_to_pb(reqs: Option<Vec<card::SecurityRequirement>>) -> Vec<pb::Security> {
    reqs.unwrap_or_default()
        .into_iter()
        .map(|r| pb::Security {
            schemes: r
                .into_iter()
                .map(|(k, list)| (k, pb::StringList { list }))
                .collect(),
        })
        .collect()
}

fn requirements_from_pb(reqs: Vec<pb::Security>) -> Option<Vec<card::SecurityRequirement>> {
    non_empty_vec(
        reqs.into_iter()
            .map(|s| s.schemes.into_iter().map(|(k, l)| (k, l.list)).collect())
            .collect(),
    )
}

fn scopes_to_pb(s: card::Scopes) -> HashMap<String, String> {
    s.into_iter().collect()
}

fn scopes_from_pb(s: HashMap<String, String>) -> card::Scopes {
    s.into_iter().collect()
}

fn api_key_location_from_pb(s: &str) -> Result<card::ApiKeyLocation, TranslateError> {
    match s {
        "cookie" => Ok(card::ApiKeyLocation::Cookie),
        "header" => Ok(card::ApiKeyLocation::Header),
        "query" => Ok(card::ApiKeyLocation::Query),
        other => Err(TranslateError::invalid(
            "API key security scheme",
            format!("location {other:?} is not cookie, header or query"),
        )),
    }
}

fn api_key_location_to_pb(l: card::ApiKeyLocation) -> String {
    match l {
        card::ApiKeyLocation::Cookie => "cookie",
        card::ApiKeyLocation::Header => "header",
        card::ApiKeyLocation::Query => "query",
    }
    .to_owned()
}

fn flows_to_pb(f: card::OAuthFlows) -> pb::OAuthFlows {
    use pb::o_auth_flows::Flow;
    let flow = if let Some(a) = f.authorization_code {
        Some(Flow::AuthorizationCode(pb::AuthorizationCodeOAuthFlow {
            authorization_url: a.authorization_url,
            token_url: a.token_url,
            refresh_url: a.refresh_url.unwrap_or_default(),
            scopes: scopes_to_pb(a.scopes),
        }))
    } else if let Some(c) = f.client_credentials {
        Some(Flow::ClientCredentials(pb::ClientCredentialsOAuthFlow {
            token_url: c.token_url,
            refresh_url: c.refresh_url.unwrap_or_default(),
            scopes: scopes_to_pb(c.scopes),
        }))
    } else if let Some(i) = f.implicit {
        Some(Flow::Implicit(pb::ImplicitOAuthFlow {
            authorization_url: i.authorization_url,
            refresh_url: i.refresh_url.unwrap_or_default(),
            scopes: scopes_to_pb(i.scopes),
        }))
    } else {
        f.password.map(|p| {
            Flow::Password(pb::PasswordOAuthFlow {
                token_url: p.token_url,
                refresh_url: p.refresh_url.unwrap_or_default(),
                scopes: scopes_to_pb(p.scopes),
            })
        })
    };
    pb::OAuthFlows { flow }
}

fn flows_from_pb(f: Option<pb::OAuthFlows>) -> card::OAuthFlows {
    use pb::o_auth_flows::Flow;
    let mut out = card::OAuthFlows::default();
    match f.and_then(|f| f.flow) {
        Some(Flow::AuthorizationCode(a)) => {
            out.authorization_code = Some(card::AuthorizationCodeOAuthFlow {
                authorization_url: a.authorization_url,
                token_url: a.token_url,
                refresh_url: non_empty(a.refresh_url),
                scopes: scopes_from_pb(a.scopes),
                extra: Extras::new(),
            })
        }
        Some(Flow::ClientCredentials(c)) => {
            out.client_credentials = Some(card::ClientCredentialsOAuthFlow {
                token_url: c.token_url,
                refresh_url: non_empty(c.refresh_url),
                scopes: scopes_from_pb(c.scopes),
                extra: Extras::new(),
            })
        }
        Some(Flow::Implicit(i)) => {
            out.implicit = Some(card::ImplicitOAuthFlow {
                authorization_url: i.authorization_url,
                refresh_url: non_empty(i.refresh_url),
                scopes: scopes_from_pb(i.scopes),
                extra: Extras::new(),
            })
        }
        Some(Flow::Password(p)) => {
            out.password = Some(card::PasswordOAuthFlow {
                token_url: p.token_url,
                refresh_url: non_empty(p.refresh_url),
                scopes: scopes_from_pb(p.scopes),
                extra: Extras::new(),
            })
        }
        None => {}
    }
    out
}

/// Model security scheme -> prost.
pub fn security_scheme_to_pb(s: card::SecurityScheme) -> pb::SecurityScheme {
    use pb::security_scheme::Scheme;
    let scheme = match s {
        card::SecurityScheme::ApiKey(a) => Scheme::ApiKeySecurityScheme(pb::ApiKeySecurityScheme {
            description: a.description.unwrap_or_default(),
            location: api_key_location_to_pb(a.location),
            name: a.name,
        }),
        card::SecurityScheme::Http(h) => {
            Scheme::HttpAuthSecurityScheme(pb::HttpAuthSecurityScheme {
                description: h.description.unwrap_or_default(),
                scheme: h.scheme,
                bearer_format: h.bearer_format.unwrap_or_default(),
            })
        }
        card::SecurityScheme::OAuth2(o) => Scheme::Oauth2SecurityScheme(pb::OAuth2SecurityScheme {
            description: o.description.unwrap_or_default(),
            flows: Some(flows_to_pb(o.flows)),
            oauth2_metadata_url: o.oauth2_metadata_url.unwrap_or_default(),
        }),
        card::SecurityScheme::OpenIdConnect(o) => {
            Scheme::OpenIdConnectSecurityScheme(pb::OpenIdConnectSecurityScheme {
                description: o.description.unwrap_or_default(),
                open_id_connect_url: o.open_id_connect_url,
            })
        }
        card::SecurityScheme::MutualTls(m) => {
            Scheme::MtlsSecurityScheme(pb::MutualTlsSecurityScheme {
                description: m.description.unwrap_or_default(),
            })
        }
    };
    pb::SecurityScheme {
        scheme: Some(scheme),
    }
}

/// Prost security scheme -> model (an empty oneof or an API key location
/// other than cookie/header/query is rejected).
pub fn security_scheme_from_pb(
    s: pb::SecurityScheme,
) -> Result<card::SecurityScheme, TranslateError> {
    use pb::security_scheme::Scheme;
    Ok(
        match s
            .scheme
            .ok_or_else(|| missing("security scheme", "scheme"))?
        {
            Scheme::ApiKeySecurityScheme(a) => {
                card::SecurityScheme::ApiKey(card::ApiKeySecurityScheme {
                    description: non_empty(a.description),
                    location: api_key_location_from_pb(&a.location)?,
                    name: a.name,
                    extra: Extras::new(),
                })
            }
            Scheme::HttpAuthSecurityScheme(h) => {
                card::SecurityScheme::Http(card::HttpAuthSecurityScheme {
                    description: non_empty(h.description),
                    scheme: h.scheme,
                    bearer_format: non_empty(h.bearer_format),
                    extra: Extras::new(),
                })
            }
            Scheme::Oauth2SecurityScheme(o) => {
                card::SecurityScheme::OAuth2(card::OAuth2SecurityScheme {
                    description: non_empty(o.description),
                    flows: flows_from_pb(o.flows),
                    oauth2_metadata_url: non_empty(o.oauth2_metadata_url),
                    extra: Extras::new(),
                })
            }
            Scheme::OpenIdConnectSecurityScheme(o) => {
                card::SecurityScheme::OpenIdConnect(card::OpenIdConnectSecurityScheme {
                    description: non_empty(o.description),
                    open_id_connect_url: o.open_id_connect_url,
                    extra: Extras::new(),
                })
            }
            Scheme::MtlsSecurityScheme(m) => {
                card::SecurityScheme::MutualTls(card::MutualTlsSecurityScheme {
                    description: non_empty(m.description),
                    extra: Extras::new(),
                })
            }
        },
    )
}

fn skill_to_pb(s: card::AgentSkill) -> pb::AgentSkill {
    pb::AgentSkill {
        id: s.id,
        name: s.name,
        description: s.description,
        tags: s.tags,
        examples: s.examples.unwrap_or_default(),
        input_modes: s.input_modes.unwrap_or_default(),
        output_modes: s.output_modes.unwrap_or_default(),
        security: requirements_to_pb(s.security),
    }
}

fn skill_from_pb(s: pb::AgentSkill) -> card::AgentSkill {
    card::AgentSkill {
        id: s.id,
        name: s.name,
        description: s.description,
        tags: s.tags,
        examples: non_empty_vec(s.examples),
        input_modes: non_empty_vec(s.input_modes),
        output_modes: non_empty_vec(s.output_modes),
        security: requirements_from_pb(s.security),
        extra: Extras::new(),
    }
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

/// Model agent card -> prost (see the section comment for what is lost).
pub fn agent_card_to_pb(c: card::AgentCard) -> pb::AgentCard {
    let caps = c.capabilities;
    let extended = c.supports_authenticated_extended_card.unwrap_or(false)
        || c.supports_extended_agent_card.unwrap_or(false);
    pb::AgentCard {
        protocol_version: c.protocol_version.unwrap_or_default(),
        name: c.name,
        description: c.description,
        url: c.url,
        preferred_transport: c.preferred_transport.unwrap_or_default(),
        additional_interfaces: c
            .additional_interfaces
            .unwrap_or_default()
            .into_iter()
            .map(|i| pb::AgentInterface {
                url: i.url,
                transport: i.transport,
            })
            .collect(),
        provider: c.provider.map(|p| pb::AgentProvider {
            url: p.url,
            organization: p.organization,
        }),
        version: c.version,
        documentation_url: c.documentation_url.unwrap_or_default(),
        capabilities: Some(pb::AgentCapabilities {
            streaming: caps.streaming.unwrap_or(false),
            push_notifications: caps.push_notifications.unwrap_or(false),
            extensions: caps
                .extensions
                .unwrap_or_default()
                .into_iter()
                .map(extension_to_pb)
                .collect(),
        }),
        security_schemes: c
            .security_schemes
            .unwrap_or_default()
            .into_iter()
            .map(|(k, s)| (k, security_scheme_to_pb(s)))
            .collect(),
        security: requirements_to_pb(c.security),
        default_input_modes: c.default_input_modes,
        default_output_modes: c.default_output_modes,
        skills: c.skills.into_iter().map(skill_to_pb).collect(),
        supports_authenticated_extended_card: extended,
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
        icon_url: c.icon_url.unwrap_or_default(),
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
        protocol_version: non_empty(c.protocol_version),
        name: c.name,
        description: c.description,
        url: c.url,
        preferred_transport: non_empty(c.preferred_transport),
        additional_interfaces: non_empty_vec(
            c.additional_interfaces
                .into_iter()
                .map(|i| card::AgentInterface {
                    url: i.url,
                    transport: i.transport,
                    extra: Extras::new(),
                })
                .collect(),
        ),
        icon_url: non_empty(c.icon_url),
        provider: c.provider.map(|p| card::AgentProvider {
            organization: p.organization,
            url: p.url,
            extra: Extras::new(),
        }),
        version: c.version,
        documentation_url: non_empty(c.documentation_url),
        capabilities: card::AgentCapabilities {
            streaming: caps.streaming.then_some(true),
            push_notifications: caps.push_notifications.then_some(true),
            state_transition_history: None,
            extensions: non_empty_vec(
                caps.extensions
                    .into_iter()
                    .map(extension_from_pb)
                    .collect::<Result<_, _>>()?,
            ),
            extra: Extras::new(),
        },
        security_schemes: if schemes.is_empty() {
            None
        } else {
            Some(schemes)
        },
        security: requirements_from_pb(c.security),
        default_input_modes: c.default_input_modes,
        default_output_modes: c.default_output_modes,
        skills: c.skills.into_iter().map(skill_from_pb).collect(),
        supports_authenticated_extended_card: c
            .supports_authenticated_extended_card
            .then_some(true),
        supports_extended_agent_card: None,
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
        extra: Extras::new(),
    })
}
