//! A2A v0.3 wire types, shaped by the official v0.3 JSON schema
//! (`kind` discriminators, lower-case / kebab-case enums).

pub mod agent_card;
pub mod artifact;
pub mod event;
pub mod jsonrpc;
pub mod message;
pub mod params;
pub mod part;
pub mod push_config;
pub mod task;
