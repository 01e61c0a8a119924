//! Fuzzes the JSON-RPC envelope translator: any bytes, either direction, any
//! method hint. It must return Ok or Err and never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use translate::document::{translate, Kind};
use translate::Version;

const METHODS: [Option<&str>; 4] = [None, Some("message/send"), Some("SendMessage"), Some("tasks/get")];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let to = if selector & 1 == 0 { Version::V10 } else { Version::V03 };
    let kind = match (selector >> 1) % 3 {
        0 => Kind::Request,
        1 => Kind::Response,
        _ => Kind::Event,
    };
    let method = METHODS[usize::from(selector >> 3) % METHODS.len()];
    let _ = translate(kind, to, method, body);
});
