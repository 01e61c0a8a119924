//! End-to-end test support (to be written).
