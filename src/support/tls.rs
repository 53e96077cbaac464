//! The TLS client config (rustls on ring) for the gateway's OAuth issuer
//! and the shared state's `rediss://`: the system's root certificates
//! (or those of the file `SSL_CERT_FILE` names), read once.

use std::sync::{Arc, OnceLock};

use rustls::crypto::CryptoProvider;

/// ring, chosen per config rather than installed process-wide, so that
/// nothing else in the process (reqwest, a host application) is changed.
pub(crate) fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The client config, or why there is none (no root certificate read).
pub(crate) fn client() -> Result<Arc<rustls::ClientConfig>, String> {
    static CONFIG: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
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
}
