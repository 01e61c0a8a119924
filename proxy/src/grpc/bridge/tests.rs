//! Unit tests of `crate::grpc::bridge`.

use super::*;

#[test]
fn timeouts() {
    assert_eq!(parse_grpc_timeout("100m"), Some(Duration::from_millis(100)));
    assert_eq!(parse_grpc_timeout("2S"), Some(Duration::from_secs(2)));
    assert_eq!(parse_grpc_timeout("1H"), Some(Duration::from_secs(3600)));
    assert_eq!(parse_grpc_timeout("x"), None);
    assert_eq!(parse_grpc_timeout("10x"), None);
    assert_eq!(parse_grpc_timeout("1234567890S"), None);
}

/// Extensions in both spellings, repeated, kept in the call's metadata
/// so the one rule (`codec::extensions_for`) merges them toward the
/// agent, each URI once, in the agent's spelling.
#[test]
fn extensions_merge_as_on_http() {
    let mut md = MetadataMap::new();
    md.append("a2a-extensions", "urn:a, urn:b".parse().unwrap());
    md.append("x-a2a-extensions", "urn:a".parse().unwrap());
    md.append("a2a-extensions", "urn:c,urn:b".parse().unwrap());
    let meta = call_meta(Version::V10, &md).unwrap();
    let (key, merged) = crate::codec::extensions_for(Version::V10, &meta.presented.0).unwrap();
    assert!(key.eq_ignore_ascii_case("a2a-extensions"));
    assert_eq!(merged, "urn:a,urn:b,urn:c");
    let (key, _) = crate::codec::extensions_for(Version::V03, &meta.presented.0).unwrap();
    assert!(key.eq_ignore_ascii_case("x-a2a-extensions"));
    let none = call_meta(Version::V03, &MetadataMap::new()).unwrap();
    assert!(crate::codec::extensions_for(Version::V03, &none.presented.0).is_none());
}
