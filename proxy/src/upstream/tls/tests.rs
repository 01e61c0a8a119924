//! Unit tests of the upstream TLS settings and addresses.

use super::*;

#[test]
fn kinds_of_rustls_errors() {
    use rustls::{AlertDescription as A, CertificateError as C, Error as E};
    let k = |e: E| kind_of(&e);
    assert_eq!(
        k(E::InvalidCertificate(C::UnknownIssuer)),
        TlsFailureKind::UnknownAuthority
    );
    assert_eq!(
        k(E::InvalidCertificate(C::NotValidForName)),
        TlsFailureKind::WrongName
    );
    assert_eq!(
        k(E::InvalidCertificate(C::Expired)),
        TlsFailureKind::Expired
    );
    assert_eq!(
        k(E::AlertReceived(A::CertificateRequired)),
        TlsFailureKind::ClientCertRefused
    );
    assert_eq!(k(E::HandshakeNotComplete), TlsFailureKind::Other);
    // What a client is told names no address.
    let to = AgentAddr::new(
        "10.1.2.3:8443".parse().unwrap(),
        "https",
        "agent.internal",
        "billing",
        &Arc::new(UpstreamTls::load(None, None, None).unwrap()),
    )
    .unwrap();
    let f = io_failure(
        &to,
        &std::io::Error::other(E::InvalidCertificate(C::UnknownIssuer)),
    )
    .unwrap();
    let Failure::UpstreamTls {
        agent,
        kind,
        detail,
    } = &f
    else {
        panic!("{f:?}")
    };
    assert_eq!(
        (agent.as_str(), *kind),
        ("billing", TlsFailureKind::UnknownAuthority)
    );
    assert!(detail.contains("agent.internal") && detail.contains("10.1.2.3"));
}

#[test]
fn plaintext_and_tls_addresses_do_not_share_connections() {
    let tls = Arc::new(UpstreamTls::load(None, None, None).unwrap());
    let a: SocketAddr = "127.0.0.1:1".parse().unwrap();
    let plain = AgentAddr::new(a, "http", "x", "d", &tls).unwrap();
    let one = AgentAddr::new(a, "https", "one.example", "d", &tls).unwrap();
    let two = AgentAddr::new(a, "https", "two.example", "d", &tls).unwrap();
    assert!(plain.tls.is_none() && plain.same(&AgentAddr::from(a)));
    assert!(!plain.same(&one) && !one.same(&two) && one.same(&one.clone()));
    // A plaintext address costs what a socket address and a pointer do.
    assert!(std::mem::size_of::<AgentAddr>() <= std::mem::size_of::<SocketAddr>() + 8);
    assert!(std::mem::size_of::<Conn>() <= std::mem::size_of::<TcpStream>() + 8);
}

#[test]
fn a_client_identity_given_half_names_the_missing_key() {
    let half = |cert: Option<&str>, key: Option<&str>| {
        UpstreamTls::load(None, cert, key)
            .err()
            .map(|e| (e.key, e.message))
    };
    let (key, message) = half(Some("/nonexistent/cert.pem"), None).expect("refused");
    assert_eq!(key, "upstream.client_key_file");
    assert!(message.starts_with("is missing"), "{message}");
    let (key, _) = half(None, Some("/nonexistent/key.pem")).expect("refused");
    assert_eq!(key, "upstream.client_cert_file");
    assert!(half(None, None).is_none());
    let (key, _) = half(Some("  "), None).expect("refused");
    assert_eq!(key, "upstream.client_cert_file");
}
