//! v1.0 `Message` and `Role` (ProtoJSON).

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::json::{Extras, Metadata};
use crate::v10::part::{null_as_default, Part};

/// A ProtoJSON enum value as read: its name or its number.
pub(crate) enum NameOrNumber {
    /// An enum value name.
    Name(String),
    /// An enum value number.
    Number(i64),
}

impl<'de> Deserialize<'de> for NameOrNumber {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = NameOrNumber;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an enum name or integer")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<NameOrNumber, E> {
                Ok(NameOrNumber::Name(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<NameOrNumber, E> {
                Ok(NameOrNumber::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<NameOrNumber, E> {
                i64::try_from(v)
                    .map(NameOrNumber::Number)
                    .map_err(|_| E::custom(format!("enum number {v} out of range")))
            }
        }
        d.deserialize_any(V)
    }
}

/// Who sent a message (`ROLE_*`; integers accepted on input; unknown names
/// and numbers read as `ROLE_UNSPECIFIED`, which maps to v0.3 agent, as
/// a2a-js does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Role {
    /// `ROLE_UNSPECIFIED` (0), also the ProtoJSON default when absent.
    #[default]
    Unspecified,
    /// `ROLE_USER` (1).
    User,
    /// `ROLE_AGENT` (2).
    Agent,
}

impl Role {
    /// The ProtoJSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Unspecified => "ROLE_UNSPECIFIED",
            Role::User => "ROLE_USER",
            Role::Agent => "ROLE_AGENT",
        }
    }
}

impl Serialize for Role {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match NameOrNumber::deserialize(d)? {
            NameOrNumber::Name(n) => match n.as_str() {
                "ROLE_UNSPECIFIED" => Ok(Role::Unspecified),
                "ROLE_USER" => Ok(Role::User),
                "ROLE_AGENT" => Ok(Role::Agent),
                _ => Ok(Role::Unspecified),
            },
            NameOrNumber::Number(1) => Ok(Role::User),
            NameOrNumber::Number(2) => Ok(Role::Agent),
            NameOrNumber::Number(_) => Ok(Role::Unspecified),
        }
    }
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Message id.
    #[serde(alias = "message_id")]
    pub message_id: String,
    /// Context id.
    #[serde(default, alias = "context_id", skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// Task id.
    #[serde(default, alias = "task_id", skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Sender (absent = `ROLE_UNSPECIFIED`).
    #[serde(default, deserialize_with = "null_as_default")]
    pub role: Role,
    /// Content parts (absent = empty).
    #[serde(default, deserialize_with = "null_as_default")]
    pub parts: Vec<Part>,
    /// Message metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Extension URIs in use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<String>>,
    /// Ids of tasks this message refers to.
    #[serde(
        default,
        alias = "reference_task_ids",
        skip_serializing_if = "Option::is_none"
    )]
    pub reference_task_ids: Option<Vec<String>>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}
