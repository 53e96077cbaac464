//! TLS for the gateway (feature `serve-auth`), with rustls on ring: the
//! server side of `serve --listen` (a certificate chain and its key from
//! PEM files) and the client side that fetches an OAuth issuer's keys
//! (the system's root certificates).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::error::{Error, ErrorKind, Result};

use crate::support::tls::provider;

/// The acceptor for `--tls-cert CERT --tls-key KEY` (PEM: the chain, leaf
/// first; a PKCS#8, PKCS#1 or SEC1 private key). HTTP/1.1 only, as served.
/// The pair is read again at the first handshake after either file
/// changed, so a renewed certificate needs no restart; a pair that does
/// not read (one file written, the other not yet) leaves the last good one
/// served, and is read again when the files change again.
pub(in crate::serve) fn acceptor(cert: &Path, key: &Path) -> Result<tokio_rustls::TlsAcceptor> {
    let provider = provider();
    let first = load(cert, key, &provider)?;
    let resolver = Reloading {
        cert: cert.to_path_buf(),
        key: key.to_path_buf(),
        current: Mutex::new(Current {
            stamp: stamp(cert, key),
            served: first,
            refused: None,
        }),
        provider: provider.clone(),
    };
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| invalid(format!("tls: {e}")))?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(resolver));
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

fn invalid(what: String) -> Error {
    Error::new(ErrorKind::InvalidConfig, what)
}

/// The chain of `cert` and the key of `key`, checked to be a pair.
fn load(cert: &Path, key: &Path, provider: &CryptoProvider) -> Result<Arc<CertifiedKey>> {
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
    let pair = CertifiedKey::from_der(chain, private, provider).map_err(|e| {
        invalid(format!(
            "the tls certificate {} and key {} are not a pair: {e}",
            cert.display(),
            key.display()
        ))
    })?;
    Ok(Arc::new(pair))
}

/// When and how long each file of the pair was last written: a change of
/// either is a new pair to read.
type Stamp = [Option<(SystemTime, u64)>; 2];

fn stamp(cert: &Path, key: &Path) -> Stamp {
    let of = |p: &Path| {
        let m = std::fs::metadata(p).ok()?;
        Some((m.modified().ok()?, m.len()))
    };
    [of(cert), of(key)]
}

/// The server certificate, read again when its files change.
struct Reloading {
    cert: PathBuf,
    key: PathBuf,
    current: Mutex<Current>,
    provider: Arc<CryptoProvider>,
}

struct Current {
    /// The files as they were when `served` was read from them.
    stamp: Stamp,
    served: Arc<CertifiedKey>,
    /// The files as they were when they last did not read (told once).
    refused: Option<Stamp>,
}

impl std::fmt::Debug for Reloading {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reloading")
            .field("cert", &self.cert)
            .field("key", &self.key)
            .finish()
    }
}

impl ResolvesServerCert for Reloading {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        // Two stats a handshake: a renewal is served from the next one on.
        let now = stamp(&self.cert, &self.key);
        let mut current = crate::support::lock(&self.current);
        if now != current.stamp && current.refused != Some(now) {
            match load(&self.cert, &self.key, &self.provider) {
                Ok(pair) => {
                    tracing::info!(
                        "tls: the certificate {} was read again",
                        self.cert.display()
                    );
                    current.served = pair;
                    current.stamp = now;
                    current.refused = None;
                }
                Err(e) => {
                    tracing::warn!("tls: {e}; the certificate read before is still served");
                    current.refused = Some(now);
                }
            }
        }
        Some(current.served.clone())
    }
}

/// The client config for an issuer's metadata and keys: the system's root
/// certificates, read once.
pub(in crate::serve) fn client() -> Result<Arc<rustls::ClientConfig>> {
    crate::support::tls::client().map_err(|e| Error::new(ErrorKind::Connect, e))
}
