//! TLS for the gateway (feature `serve-auth`), with rustls on ring: the
//! server side of `serve --listen` (a certificate chain and its key from
//! PEM files) and the client side that fetches an OAuth issuer's keys
//! (the system's root certificates).

use std::path::Path;
use std::sync::{Arc, OnceLock};

use rustls::crypto::CryptoProvider;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::error::{Error, ErrorKind, Result};

/// ring, chosen per config rather than installed process-wide, so that
/// nothing else in the process (reqwest, a host application) is changed.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The acceptor for `--tls-cert CERT --tls-key KEY` (PEM: the chain, leaf
/// first; a PKCS#8, PKCS#1 or SEC1 private key). HTTP/1.1 only, as served.
pub(super) fn acceptor(cert: &Path, key: &Path) -> Result<tokio_rustls::TlsAcceptor> {
    let invalid = |what: String| Error::new(ErrorKind::InvalidConfig, what);
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<std::result::Result<_, _>>())
        .map_err(|e| {
            invalid(format!(
                "cannot read the tls certificate {}: {e}",
                cert.display()
            ))
        })?;
    if chain.is_empty() {
        return Err(invalid(format!(
            "the tls certificate file {} holds no certificate",
            cert.display()
        )));
    }
    let private = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| invalid(format!("cannot read the tls key {}: {e}", key.display())))?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| invalid(format!("tls: {e}")))?
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .map_err(|e| {
            invalid(format!(
                "the tls certificate {} and key {} are not a pair: {e}",
                cert.display(),
                key.display()
            ))
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

/// The client config for an issuer's metadata and keys: the system's root
/// certificates, read once.
pub(super) fn client() -> Result<Arc<rustls::ClientConfig>> {
    static CONFIG: OnceLock<std::result::Result<Arc<rustls::ClientConfig>, String>> =
        OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let mut roots = rustls::RootCertStore::empty();
            let found = rustls_native_certs::load_native_certs();
            for error in &found.errors {
                tracing::debug!(%error, "a system root certificate was not read");
            }
            let (added, _ignored) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err("no system root certificate could be read".to_string());
            }
            let config = rustls::ClientConfig::builder_with_provider(provider())
                .with_safe_default_protocol_versions()
                .map_err(|e| format!("tls: {e}"))?
                .with_root_certificates(roots)
                .with_no_client_auth();
            Ok(Arc::new(config))
        })
        .clone()
        .map_err(|e| Error::new(ErrorKind::Connect, e))
}
