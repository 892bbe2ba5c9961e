//! A streamable-HTTP server's transport: rmcp's, on a reqwest client whose TLS is set here.

use std::collections::HashMap;
use std::sync::Arc;

use http::{HeaderName, HeaderValue};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::AuthClient;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use crate::error::Error;
use crate::oauth::DpopClient;
use crate::server::HttpEndpoint;

/// The transport to `endpoint` of the server `server`.
pub(crate) fn transport(
    server: &str,
    endpoint: &HttpEndpoint,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, Error> {
    let mut config = config(server, endpoint)?;
    if let Some(token) = &endpoint.bearer_token {
        config = config.auth_header(token.clone());
    }
    Ok(StreamableHttpClientTransport::with_client(
        client(server)?,
        config,
    ))
}

/// The transport to `endpoint` through `client`, which adds the OAuth token itself (a
/// configured [`bearer_token`](crate::McpServer::bearer_token) is not sent).
pub(crate) fn authorized_transport(
    server: &str,
    endpoint: &HttpEndpoint,
    client: AuthClient<DpopClient>,
) -> Result<StreamableHttpClientTransport<AuthClient<DpopClient>>, Error> {
    Ok(StreamableHttpClientTransport::with_client(
        client,
        config(server, endpoint)?,
    ))
}

/// The URL and the headers of `endpoint`.
fn config(
    server: &str,
    endpoint: &HttpEndpoint,
) -> Result<StreamableHttpClientTransportConfig, Error> {
    let mut headers = HashMap::with_capacity(endpoint.headers.len());
    for (name, value) in &endpoint.headers {
        let invalid = || Error::InvalidHeader {
            server: server.to_owned(),
            header: name.clone(),
        };
        let name = HeaderName::try_from(name.as_str()).map_err(|_| invalid())?;
        let mut value = HeaderValue::try_from(value.as_str()).map_err(|_| invalid())?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    Ok(
        StreamableHttpClientTransportConfig::with_uri(endpoint.url.as_str())
            .custom_headers(headers),
    )
}

/// A reqwest client with rustls on ring and the platform's certificate verifier. Built with
/// its TLS configuration given, because reqwest without its own crypto provider would
/// otherwise panic (or use a process-wide provider this library has no business setting).
pub(crate) fn client(server: &str) -> Result<reqwest::Client, Error> {
    client_builder(server)?
        .build()
        .map_err(|error| client_error(server, error.into()))
}

/// A reqwest client builder with the TLS of [`client`], for clients that need more settings
/// (the OAuth flow's: a timeout, a redirect policy).
pub(crate) fn client_builder(server: &str) -> Result<reqwest::ClientBuilder, Error> {
    let failed = |source| client_error(server, source);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = rustls_platform_verifier::Verifier::new(provider.clone())
        .map_err(|error| failed(error.into()))?;
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| failed(error.into()))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    // What reqwest would offer itself without `http2`: HTTP/1.1 only.
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(reqwest::Client::builder().tls_backend_preconfigured(tls))
}

fn client_error(server: &str, source: Box<dyn std::error::Error + Send + Sync>) -> Error {
    Error::HttpClient {
        server: server.to_owned(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(headers: &[(&str, &str)]) -> HttpEndpoint {
        HttpEndpoint {
            url: "https://mcp.example.com/mcp".to_owned(),
            headers: headers
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect(),
            bearer_token: Some("token".to_owned()),
            oauth: None,
        }
    }

    #[tokio::test]
    async fn a_tls_client_is_built_without_a_process_wide_crypto_provider() {
        assert!(rustls::crypto::CryptoProvider::get_default().is_none());
        transport("docs", &endpoint(&[("x-team", "search")])).expect("a transport");
    }

    #[tokio::test]
    async fn a_header_http_does_not_allow_is_an_error_naming_it() {
        let Err(error) = transport("docs", &endpoint(&[("bad header", "x")])) else {
            panic!("a header with a space was accepted");
        };
        assert_eq!(
            error.to_string(),
            "MCP server `docs`: invalid HTTP header `bad header`"
        );
        let Err(error) = transport("docs", &endpoint(&[("x-ok", "line\nbreak")])) else {
            panic!("a value with a line break was accepted");
        };
        assert!(matches!(error, Error::InvalidHeader { header, .. } if header == "x-ok"));
    }
}
