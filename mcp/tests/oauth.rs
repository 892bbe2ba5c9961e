//! OAuth against a loopback MCP server that refuses without a token and is its own
//! authorization server (metadata, registration, token endpoint), without the conformance
//! suite: a refusal leads to the handler and a token, no handler to the URL to open, a kept
//! token to no second authorization; with the client-credentials grant, to a token for the
//! client's secret, sent as the authorization server says, and no person asked.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use hookchain_mcp::oauth::{AuthorizationCallback, AuthorizationPrompt, McpOAuth};
use hookchain_mcp::{Error, McpServer, McpToolset};
use serde_json::{Value, json};
use support::{call_once, guard};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The only access token the server takes, and the code it is exchanged for.
const TOKEN: &str = "the-access-token";
const CODE: &str = "the-code";

/// The server: MCP at `/mcp` (JSON answers, no session) behind a bearer token, and the
/// authorization server at the root. Keeps the token requests: their heads and form bodies.
struct Protected {
    base: String,
    token_requests: Arc<Mutex<Vec<TokenRequest>>>,
    task: tokio::task::JoinHandle<()>,
}

/// A request of the token endpoint.
#[derive(Clone)]
struct TokenRequest {
    head: String,
    body: String,
}

impl TokenRequest {
    /// The value of `key` in the form body.
    fn form(&self, key: &str) -> Option<String> {
        url::form_urlencoded::parse(self.body.as_bytes())
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.into_owned())
    }

    /// The value of the `Authorization` header.
    fn authorization(&self) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("authorization")
                .then_some(value.trim())
        })
    }
}

impl Protected {
    /// A server whose authorization server takes a client that authenticates with nothing
    /// (a public client, as dynamic registration makes one).
    async fn start() -> Self {
        Self::start_with(&["none"]).await
    }

    /// A server whose authorization server authenticates clients at its token endpoint as
    /// `auth_methods` say (`token_endpoint_auth_methods_supported`).
    async fn start_with(auth_methods: &'static [&'static str]) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let token_requests = Arc::new(Mutex::new(Vec::new()));
        let (kept, served) = (token_requests.clone(), base.clone());
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, served.clone(), auth_methods, kept.clone()));
            }
        });
        Self {
            base,
            token_requests,
            task,
        }
    }

    fn mcp(&self) -> String {
        format!("{}/mcp", self.base)
    }
}

impl Drop for Protected {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(
    mut stream: TcpStream,
    base: String,
    auth_methods: &[&str],
    token_requests: Arc<Mutex<Vec<TokenRequest>>>,
) {
    let Some((head, body)) = read_request(&mut stream).await else {
        return;
    };
    let request_line = head.lines().next().unwrap_or_default().to_owned();
    let path = request_line.split(' ').nth(1).unwrap_or_default();
    let authorized = head
        .lines()
        .any(|line| line.eq_ignore_ascii_case(&format!("authorization: Bearer {TOKEN}")));
    let (status, extra, body) = match path {
        "/.well-known/oauth-protected-resource/mcp" => (
            "200 OK",
            String::new(),
            json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}),
        ),
        "/.well-known/oauth-authorization-server" => (
            "200 OK",
            String::new(),
            json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
                "grant_types_supported": ["authorization_code", "client_credentials"],
                "token_endpoint_auth_methods_supported": auth_methods,
            }),
        ),
        "/register" => (
            "201 Created",
            String::new(),
            json!({"client_id": "registered", "redirect_uris": ["http://localhost:3000/callback"]}),
        ),
        "/token" => {
            token_requests.lock().unwrap().push(TokenRequest {
                head: head.clone(),
                body: String::from_utf8_lossy(&body).into_owned(),
            });
            (
                "200 OK",
                String::new(),
                json!({"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600}),
            )
        }
        "/mcp" if !authorized => (
            "401 Unauthorized",
            format!(
                "www-authenticate: Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"\r\n"
            ),
            json!({"error": "invalid_token"}),
        ),
        "/mcp" => {
            let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let Some(id) = message.get("id") else {
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    )
                    .await;
                return;
            };
            let result = match message["method"].as_str().unwrap_or_default() {
                "initialize" => json!({
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "protected", "version": "1.0.0"}
                }),
                "tools/list" => {
                    json!({"tools": [{"name": "whoami", "inputSchema": {"type": "object"}}]})
                }
                "tools/call" => {
                    json!({"content": [{"type": "text", "text": "an authorized caller"}]})
                }
                _ => json!({}),
            };
            (
                "200 OK",
                String::new(),
                json!({"jsonrpc": "2.0", "id": id, "result": result}),
            )
        }
        _ => ("404 Not Found", String::new(), json!({})),
    };
    let body = body.to_string();
    let answer = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(answer.as_bytes()).await;
}

/// The head and body of one HTTP/1.1 request.
async fn read_request(stream: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    let header_end = loop {
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 || buffer.len() > 1 << 20 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(at) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..header_end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    while buffer.len() < header_end + length {
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    Some((head, buffer[header_end..header_end + length].to_vec()))
}

/// OAuth whose handler approves at once, as the authorization server would: the code and the
/// authorization URL's `state`. Counts the authorizations.
fn approving(asked: Arc<AtomicUsize>) -> McpOAuth {
    McpOAuth::new("http://localhost:3000/callback").on_authorize(
        move |prompt: AuthorizationPrompt| {
            asked.fetch_add(1, Ordering::SeqCst);
            async move {
                let url = url::Url::parse(&prompt.url)?;
                let state = url
                    .query_pairs()
                    .find(|(key, _)| key == "state")
                    .map(|(_, value)| value.into_owned())
                    .ok_or("no state")?;
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(AuthorizationCallback::new(
                    CODE, state,
                ))
            }
        },
    )
}

#[tokio::test]
async fn a_refused_connect_is_authorized_by_the_handler_and_the_call_goes_through() {
    guard(async {
        let server = Protected::start().await;
        let asked = Arc::new(AtomicUsize::new(0));
        let toolset = McpToolset::connect([
            McpServer::http("protected", server.mcp()).oauth(approving(asked.clone()))
        ])
        .await
        .expect("connected after the authorization");
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        let messages = call_once(&toolset, "whoami", json!({})).await;
        assert_eq!(messages, [("an authorized caller".to_owned(), false)]);
        // The code exchanged with its PKCE verifier, for this server (RFC 8707).
        let requests = server.token_requests.lock().unwrap().clone();
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].form("code").as_deref(), Some(CODE));
        assert_eq!(requests[0].form("resource"), Some(server.mcp()));
        assert!(requests[0].form("code_verifier").is_some());
        toolset.close().await;
    })
    .await;
}

#[tokio::test]
async fn without_a_handler_the_connect_fails_with_the_url_to_open() {
    guard(async {
        let server = Protected::start().await;
        let oauth = McpOAuth::new("http://localhost:3000/callback");
        let Err(error) =
            McpToolset::connect([McpServer::http("protected", server.mcp()).oauth(oauth)]).await
        else {
            panic!("connected without a token");
        };
        let Error::AuthorizationRequired { server: name, url } = &error else {
            panic!("not the error with the URL: {error:?}");
        };
        assert_eq!(name, "protected");
        let url = url::Url::parse(url).expect("a URL");
        assert_eq!(
            url.as_str().split('?').next(),
            Some(&*format!("{}/authorize", server.base))
        );
        let query: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        assert!(query.contains(&("code_challenge_method".to_owned(), "S256".to_owned())));
        assert!(query.contains(&("client_id".to_owned(), "registered".to_owned())));
        assert!(query.contains(&("resource".to_owned(), server.mcp())));
        assert!(
            error.to_string().starts_with(
                "MCP server `protected` needs an authorization: open http://127.0.0.1:"
            )
        );
    })
    .await;
}

#[tokio::test]
async fn a_kept_token_is_used_by_the_next_connect_without_asking_again() {
    guard(async {
        let server = Protected::start().await;
        let asked = Arc::new(AtomicUsize::new(0));
        // One store, as an application that keeps its tokens across restarts has.
        let oauth = approving(asked.clone());
        let first =
            McpToolset::connect([McpServer::http("protected", server.mcp()).oauth(oauth.clone())])
                .await
                .expect("connected after the authorization");
        first.close().await;
        let second = McpToolset::connect([McpServer::http("protected", server.mcp()).oauth(oauth)])
            .await
            .expect("connected with the kept token");
        let messages = call_once(&second, "whoami", json!({})).await;
        assert_eq!(messages, [("an authorized caller".to_owned(), false)]);
        assert_eq!(asked.load(Ordering::SeqCst), 1, "asked again");
        assert_eq!(server.token_requests.lock().unwrap().len(), 1);
        second.close().await;
    })
    .await;
}

/// The client-credentials grant's id and secret in the tests.
const CLIENT_ID: &str = "nightly-reports";
const CLIENT_SECRET: &str = "the-secret";

/// `Basic` and `nightly-reports:the-secret` in base64.
const BASIC: &str = "Basic bmlnaHRseS1yZXBvcnRzOnRoZS1zZWNyZXQ=";

/// A client no person stands behind: its secret gets the token at the first refusal, sent as
/// the authorization server's metadata says — HTTP Basic when it takes only that, else in the
/// form — for the server's URL; no registration, no handler.
#[tokio::test]
async fn the_client_credentials_get_a_token_without_a_person() {
    guard(async {
        for (auth_methods, basic) in [
            (&["client_secret_basic"][..], true),
            (&["client_secret_post"][..], false),
            (&["client_secret_basic", "client_secret_post"][..], false),
        ] {
            let server = Protected::start_with(auth_methods).await;
            let oauth = McpOAuth::client_credentials(CLIENT_ID, CLIENT_SECRET);
            let toolset =
                McpToolset::connect([McpServer::http("protected", server.mcp()).oauth(oauth)])
                    .await
                    .expect("connected with the client's token");
            let messages = call_once(&toolset, "whoami", json!({})).await;
            assert_eq!(messages, [("an authorized caller".to_owned(), false)]);
            let requests = server.token_requests.lock().unwrap().clone();
            assert_eq!(requests.len(), 1, "{auth_methods:?}");
            let request = &requests[0];
            assert_eq!(
                request.form("grant_type").as_deref(),
                Some("client_credentials")
            );
            assert_eq!(request.form("resource"), Some(server.mcp()));
            // No scope was named anywhere: none asked.
            assert_eq!(request.form("scope"), None);
            if basic {
                assert_eq!(request.authorization(), Some(BASIC), "{auth_methods:?}");
                assert_eq!(request.form("client_secret"), None);
            } else {
                assert_eq!(request.authorization(), None, "{auth_methods:?}");
                assert_eq!(request.form("client_id").as_deref(), Some(CLIENT_ID));
                assert_eq!(
                    request.form("client_secret").as_deref(),
                    Some(CLIENT_SECRET)
                );
            }
            toolset.close().await;
        }
    })
    .await;
}

/// An authorization server that does not take a client secret at its token endpoint is not
/// sent one: the connect fails, saying why, and the token endpoint was never asked.
#[tokio::test]
async fn the_client_credentials_are_not_sent_where_a_secret_is_not_taken() {
    guard(async {
        let server = Protected::start_with(&["private_key_jwt"]).await;
        let oauth = McpOAuth::client_credentials(CLIENT_ID, CLIENT_SECRET);
        let Err(error) =
            McpToolset::connect([McpServer::http("protected", server.mcp()).oauth(oauth)]).await
        else {
            panic!("connected without a token");
        };
        assert!(
            matches!(&error, Error::Authorization { server, .. } if server == "protected"),
            "{error:?}"
        );
        let mut chain = error.to_string();
        let mut source = std::error::Error::source(&error);
        while let Some(cause) = source {
            chain.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        assert!(chain.contains("private_key_jwt"), "{chain}");
        assert!(!chain.contains(CLIENT_SECRET), "{chain}");
        assert!(server.token_requests.lock().unwrap().is_empty());
    })
    .await;
}

#[test]
fn the_client_secret_and_the_code_are_not_in_debug_output() {
    let oauth = McpOAuth::new("http://localhost:3000/callback")
        .client("pre-registered", Some("the-secret".to_owned()));
    let shown = format!(
        "{:?}",
        McpServer::http("docs", "https://mcp.example.com/mcp").oauth(oauth)
    );
    assert!(shown.contains("pre-registered"));
    assert!(!shown.contains("the-secret"));
    let machine = McpOAuth::client_credentials(CLIENT_ID, CLIENT_SECRET);
    let shown = format!("{machine:?}");
    assert!(shown.contains(CLIENT_ID), "{shown}");
    assert!(!shown.contains(CLIENT_SECRET), "{shown}");
    let callback = AuthorizationCallback::new("the-code", "the-state");
    assert!(!format!("{callback:?}").contains("the-code"));
}
