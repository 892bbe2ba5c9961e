//! The TLS of the store's connections: rustls with the `ring` provider (chosen here: nothing
//! process-wide to install), the server's certificate checked against root certificates and
//! the host name of the connection string.

use std::path::PathBuf;
use std::sync::Arc;

use hookchain_core::interrupt::CheckpointError;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls::{ClientConfig, RootCertStore};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::store_error;

/// The connector of TLS connections trusting the certificates of the PEM file `root_file`
/// (`sslrootcert`), or, without one, Mozilla's root certificates (`webpki-roots`).
pub(super) async fn connector(
    root_file: Option<String>,
) -> Result<MakeRustlsConnect, CheckpointError> {
    let roots = match root_file {
        None => RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        },
        Some(path) => read_roots(path.into()).await?,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(store_error("set up TLS"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// The certificates of the PEM file at `path` (on tokio's blocking threads: a file read blocks).
async fn read_roots(path: PathBuf) -> Result<RootCertStore, CheckpointError> {
    let error = |message: String| CheckpointError::Store {
        what: "read the root certificates (sslrootcert)",
        source: message.into(),
    };
    let shown = path.display().to_string();
    if shown == "system" {
        return Err(error(
            "`sslrootcert=system` (the system's certificate store) is not supported: without \
             `sslrootcert` the store trusts Mozilla's root certificates (webpki-roots); name a \
             PEM file to trust its certificates instead"
                .to_owned(),
        ));
    }
    let pem = tokio::task::spawn_blocking(move || std::fs::read(&path))
        .await
        .map_err(|join| error(format!("{shown}: {join}")))?
        .map_err(|io| error(format!("{shown}: {io}")))?;
    let mut roots = RootCertStore::empty();
    for certificate in CertificateDer::pem_slice_iter(&pem) {
        let certificate = certificate.map_err(|pem| error(format!("{shown}: {pem}")))?;
        roots
            .add(certificate)
            .map_err(|refused| error(format!("{shown}: {refused}")))?;
    }
    if roots.is_empty() {
        return Err(error(format!("{shown} holds no PEM certificate")));
    }
    Ok(roots)
}
