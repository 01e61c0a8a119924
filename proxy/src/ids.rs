//! Small shared names: the random ids the proxy mints and the path of its
//! push callback endpoint. A file of its own so that `config`, `agents`,
//! `push` and `upstream` reach them without reaching each other.

/// Path prefix of the proxy's callback endpoint.
pub const CALLBACK_PREFIX: &str = "/a2a-proxy/push/";

/// 128 random bits as 32 hex digits (callback ids, secrets).
pub fn random_id() -> String {
    use rand::RngCore;
    let mut b = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}
