//! The A2A wire versions: `translate::Version` (same variants, same
//! `from_header` rule the proxy's own stand-in had).

pub use translate::version::{ProtocolVersion, UnsupportedVersion, Version};
