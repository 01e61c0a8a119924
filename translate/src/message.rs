//! (to be written)

/// Lossy mappings of this module (see `crate::lossy`).
pub const LOSSY: &[crate::lossy::Lossy] = &[];
