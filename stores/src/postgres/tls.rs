//! The TLS of the store's connections: rustls with the `ring` provider (chosen here: nothing
//! process-wide to install), the server's certificate checked against root certificates and
//! the host name of the connection string.

use std::error::Error;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use hookchain_core::BoxError;
use hookchain_core::interrupt::CheckpointError;
use rustls::CertificateError;
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

/// `error`, the failure of a store's first connection, with what to do next when it is one of
/// TLS's refusals a setting fixes: a server without TLS, a certificate of a CA not trusted, a
/// certificate for another host. Other errors are returned as they are.
pub(super) fn explained(error: CheckpointError) -> CheckpointError {
    match error {
        CheckpointError::Store { what, source } => {
            let source = match hint(&*source) {
                Some(hint) => Box::new(Explained { hint, source }),
                None => source,
            };
            CheckpointError::Store { what, source }
        }
        error => error,
    }
}

/// What to do about the TLS refusal among `error` and its sources, if it is one.
fn hint(error: &(dyn Error + 'static)) -> Option<&'static str> {
    let mut next = Some(error);
    while let Some(error) = next {
        // tokio-postgres's error when the server answers `N` to the request for TLS.
        if error.to_string() == "server does not support TLS" {
            return Some(
                "the server offers no TLS, and the connection requires it (no fall back to \
                 plain text): turn on `ssl` in the server, or, for a server on this machine, \
                 use `PostgresCheckpointer::connect_insecure`",
            );
        }
        // rustls's error, in the `io::Error` of the handshake (whose `source` skips it).
        let refused = error.downcast_ref::<rustls::Error>().or_else(|| {
            error
                .downcast_ref::<std::io::Error>()
                .and_then(std::io::Error::get_ref)
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        });
        match refused {
            Some(rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer)) => {
                return Some(
                    "the server's certificate is signed by no root certificate trusted (Mozilla's \
                     roots, or, with `sslrootcert=…` in the connection string, only the \
                     certificates of that PEM file): for a server with a certificate of a CA of \
                     your own, name the CA's PEM file with `sslrootcert`",
                );
            }
            Some(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => {
                return Some(
                    "the server's certificate is not for the host the connection string names \
                     (the host name, or the address, must be one of the certificate's)",
                );
            }
            _ => {}
        }
        next = error.source();
    }
    None
}

/// An error with what to do about it: shown first, the error as its source.
#[derive(Debug)]
struct Explained {
    hint: &'static str,
    source: BoxError,
}

impl fmt::Display for Explained {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.hint)
    }
}

impl Error for Explained {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&*self.source)
    }
}
