//! a2a-compat-proxy: the library behind the binary.

pub mod cli;
pub mod translate_cmd;
