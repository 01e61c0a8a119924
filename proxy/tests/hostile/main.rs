//! Hostile clients, agents and webhooks (issue #20): each module covers numbered findings.
mod agents;
mod bodies;
mod cards;
mod connections;
mod listtasks;
mod metadata;
mod paths;
mod push;
mod push_callback;
mod push_outbox;
mod rest_inputs;
mod spellings;
mod sse;
#[path = "../support/mod.rs"]
mod support;
