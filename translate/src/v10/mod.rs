//! A2A v1.0 wire types: ProtoJSON of the v1.0 proto
//! (oneof member names as discriminators, `TASK_STATE_*` enum names).

pub mod agent_card;
pub mod artifact;
pub mod event;
pub mod jsonrpc;
pub mod message;
pub mod params;
pub mod part;
pub mod push_config;
pub mod task;
