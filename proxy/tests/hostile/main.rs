//! Hostile clients, agents and webhooks (issue #20): each module covers numbered findings.
mod metadata;
#[path = "../support/mod.rs"]
mod support;
