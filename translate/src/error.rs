//! The one error type of the crate. Every variant knows its JSON-RPC code so
//! callers can answer in the client's wire version without guessing.

use crate::version::Version;

/// Why a value could not be translated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TranslateError {
    /// The input is not JSON at all (JSON-RPC -32700).
    #[error("invalid JSON: {0}")]
    Json(String),
    /// The input is JSON but not a valid value of the expected wire type
    /// (JSON-RPC -32602 for params, -32600 for envelopes).
    #[error("invalid {what}: {reason}")]
    Invalid { what: &'static str, reason: String },
    /// The envelope itself is malformed (JSON-RPC -32600).
    #[error("invalid JSON-RPC request: {0}")]
    InvalidRequest(String),
    /// The method name is not an A2A method of the source version (-32601).
    #[error("method not found: {0}")]
    MethodNotFound(String),
    /// The value is valid but has no counterpart in the target version
    /// (UnsupportedOperationError, -32004).
    #[error("{what} has no A2A {target} counterpart")]
    Unsupported { what: String, target: Version },
}

impl TranslateError {
    /// Shorthand for [`TranslateError::Invalid`].
    pub fn invalid(what: &'static str, reason: impl Into<String>) -> Self {
        TranslateError::Invalid {
            what,
            reason: reason.into(),
        }
    }

    /// Shorthand for [`TranslateError::Unsupported`].
    pub fn unsupported(what: impl Into<String>, target: Version) -> Self {
        TranslateError::Unsupported {
            what: what.into(),
            target,
        }
    }

    /// The JSON-RPC error code this failure is reported with (same in both versions).
    pub fn jsonrpc_code(&self) -> i32 {
        match self {
            TranslateError::Json(_) => -32700,
            TranslateError::InvalidRequest(_) => -32600,
            TranslateError::MethodNotFound(_) => -32601,
            TranslateError::Invalid { .. } => -32602,
            TranslateError::Unsupported { .. } => -32004,
        }
    }
}

impl From<serde_json::Error> for TranslateError {
    fn from(e: serde_json::Error) -> Self {
        if e.is_syntax() || e.is_eof() {
            TranslateError::Json(e.to_string())
        } else {
            TranslateError::invalid("value", e.to_string())
        }
    }
}
