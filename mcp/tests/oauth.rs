//! OAuth against a loopback MCP server that refuses without a token and is its own
//! authorization server (metadata, registration, token endpoint), without the conformance
//! suite: a refusal leads to the handler and a token, no handler to the URL to open, a kept
//! token to no second authorization; with the client-credentials grant, to a token for the
//! client's secret, sent as the authorization server says, and no person asked; with the
//! JWT-bearer grant, to a token for the workload's assertion (a refused one is not retried);
//! enterprise-managed, to the ID token exchanged at the IdP and the ID-JAG presented; with a
//! client key, to a signed client assertion. A tool call
//! that needs a person, without a handler, pauses the run; another toolset and agent (a
//! restart), sharing only the stores, resume it with the person's answer.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use hookchain::interrupt::Checkpoint;
use hookchain::prelude::*;
use hookchain::{EndReason, Role};
use hookchain_mcp::oauth::{
    AuthorizationCallback, AuthorizationPrompt, ClientKey, EnterpriseIdp, InMemoryCredentialStore,
    InMemoryStateStore, McpAuthorization, McpOAuth,
};
use hookchain_mcp::{Error, McpServer, McpToolset};
use serde_json::{Value, json};
use support::{call_once, failures, guard, tool_messages};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The only access token the server takes, and the code it is exchanged for.
const TOKEN: &str = "the-access-token";
const CODE: &str = "the-code";
/// The JWT-bearer grant, the workload's assertion it takes, and one it refuses.
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const WORKLOAD_JWT: &str = "eyJhbGciOiJFUzI1NiJ9.the-workload.signature";
const EXPIRED_JWT: &str = "eyJhbGciOiJFUzI1NiJ9.an-expired-one.signature";
/// The person's ID token the IdP takes, and the ID-JAG it gives for it.
const ID_TOKEN: &str = "eyJhbGciOiJFUzI1NiJ9.the-person.signature";
const ID_JAG: &str = "eyJhbGciOiJFUzI1NiIsInR5cCI6Im9hdXRoLWlkLWphZytqd3QifQ.jag.signature";

/// The server: MCP at `/mcp` (JSON answers, no session) behind a bearer token, and the
/// authorization server at the root. Keeps the token requests: their heads and form bodies.
struct Protected {
    base: String,
    token_requests: Arc<Mutex<Vec<TokenRequest>>>,
    /// The `tools/call` requests the server ran (with the token).
    calls: Arc<AtomicUsize>,
    /// The DPoP proofs the MCP endpoint was sent, verified: their claims.
    mcp_proofs: Arc<Mutex<Vec<Value>>>,
    task: tokio::task::JoinHandle<()>,
}

/// Whether the authorization server binds tokens with DPoP, and whether it and the MCP
/// server ask for a nonce.
#[derive(Clone, Copy, PartialEq)]
enum Dpop {
    Off,
    On,
    Nonces,
}

/// The nonces of the authorization server and of the MCP server.
const AS_NONCE: &str = "the-as-nonce";
const RS_NONCE: &str = "the-rs-nonce";

/// How the fake server is set up.
#[derive(Clone, Copy)]
struct Setup {
    /// `token_endpoint_auth_methods_supported`.
    auth_methods: &'static [&'static str],
    /// Whether it answers the handshake and the listing without a token (and refuses only
    /// `tools/call`).
    open_listing: bool,
    /// DPoP: `dpop_signing_alg_values_supported: ["ES256"]`, a proof checked at each token
    /// request and MCP request, a `DPoP` token.
    dpop: Dpop,
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
        Self::start_as(Setup {
            auth_methods,
            open_listing: false,
            dpop: Dpop::Off,
        })
        .await
    }

    /// A server that lists its tools to anyone, and wants a token for a call.
    async fn start_open_listing() -> Self {
        Self::start_as(Setup {
            auth_methods: &["none"],
            open_listing: true,
            dpop: Dpop::Off,
        })
        .await
    }

    async fn start_as(setup: Setup) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let token_requests = Arc::new(Mutex::new(Vec::new()));
        let calls = Arc::new(AtomicUsize::new(0));
        let mcp_proofs = Arc::new(Mutex::new(Vec::new()));
        let (kept, counted, served) = (token_requests.clone(), calls.clone(), base.clone());
        let proofs = mcp_proofs.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(
                    stream,
                    served.clone(),
                    setup,
                    kept.clone(),
                    counted.clone(),
                    proofs.clone(),
                ));
            }
        });
        Self {
            base,
            token_requests,
            calls,
            mcp_proofs,
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
    setup: Setup,
    token_requests: Arc<Mutex<Vec<TokenRequest>>>,
    calls: Arc<AtomicUsize>,
    mcp_proofs: Arc<Mutex<Vec<Value>>>,
) {
    let auth_methods = setup.auth_methods;
    let Some((head, body)) = read_request(&mut stream).await else {
        return;
    };
    let request_line = head.lines().next().unwrap_or_default().to_owned();
    let method = request_line
        .split(' ')
        .next()
        .unwrap_or_default()
        .to_owned();
    let target = request_line.split(' ').nth(1).unwrap_or_default();
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let proof = header(&head, "dpop").and_then(verified_proof);
    // With DPoP, the token as `DPoP`, and a proof of this request, for this token, signed
    // by the key the token was bound to (and with the nonce, when one is asked for).
    let mut asks_nonce = false;
    let authorized = if setup.dpop == Dpop::Off {
        header(&head, "authorization") == Some(&*format!("Bearer {TOKEN}"))
    } else if path == "/mcp" && header(&head, "authorization") == Some(&*format!("DPoP {TOKEN}")) {
        let bound = token_requests
            .lock()
            .unwrap()
            .last()
            .and_then(|request| header(&request.head, "dpop").and_then(verified_proof))
            .map(|claims| claims["jwk"].clone());
        match &proof {
            Some(claims)
                if claims["htm"] == method
                    && claims["htu"] == format!("{base}/mcp")
                    && claims["ath"] == sha256_base64url(TOKEN)
                    && bound.is_some_and(|jwk| jwk == claims["jwk"]) =>
            {
                mcp_proofs.lock().unwrap().push(claims.clone());
                asks_nonce = setup.dpop == Dpop::Nonces && claims["nonce"] != RS_NONCE;
                !asks_nonce
            }
            _ => false,
        }
    } else {
        false
    };
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let needs_token = !setup.open_listing || message["method"] == "tools/call";
    let (status, extra, body) = match path {
        // The person approves at once: the browser is sent back with the code and the state.
        "/authorize" => {
            let query: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
                .into_owned()
                .collect();
            let value = |key: &str| {
                query
                    .iter()
                    .find(|(name, _)| name == key)
                    .map(|(_, value)| value.clone())
                    .unwrap_or_default()
            };
            let mut back = url::Url::parse(&value("redirect_uri")).unwrap();
            back.query_pairs_mut()
                .append_pair("code", CODE)
                .append_pair("state", &value("state"));
            ("302 Found", format!("location: {back}\r\n"), json!({}))
        }
        "/.well-known/oauth-protected-resource/mcp" => (
            "200 OK",
            String::new(),
            json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}),
        ),
        "/.well-known/oauth-authorization-server" => {
            let mut metadata = json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
                "grant_types_supported": ["authorization_code", "client_credentials"],
                "token_endpoint_auth_methods_supported": auth_methods,
            });
            if setup.dpop != Dpop::Off {
                metadata["dpop_signing_alg_values_supported"] = json!(["ES256"]);
            }
            ("200 OK", String::new(), metadata)
        }
        "/register" => (
            "201 Created",
            String::new(),
            json!({"client_id": "registered", "redirect_uris": ["http://localhost:3000/callback"]}),
        ),
        // The enterprise's IdP: an ID token exchanged for an ID-JAG (RFC 8693).
        "/idp/token" => {
            let request = TokenRequest {
                head: head.clone(),
                body: String::from_utf8_lossy(&body).into_owned(),
            };
            let known = request.form("subject_token").as_deref() == Some(ID_TOKEN);
            token_requests.lock().unwrap().push(request);
            if known {
                (
                    "200 OK",
                    String::new(),
                    json!({
                        "access_token": ID_JAG,
                        "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                        "token_type": "N_A",
                    }),
                )
            } else {
                (
                    "400 Bad Request",
                    String::new(),
                    json!({"error": "invalid_grant", "error_description": "an unknown ID token"}),
                )
            }
        }
        "/token" => {
            let request = TokenRequest {
                head: head.clone(),
                body: String::from_utf8_lossy(&body).into_owned(),
            };
            let known = match request.form("grant_type").as_deref() {
                Some("authorization_code") => request.form("code").as_deref() == Some(CODE),
                Some(JWT_BEARER) => request.form("assertion").as_deref() != Some(EXPIRED_JWT),
                _ => true,
            };
            token_requests.lock().unwrap().push(request);
            // With DPoP, a proof of this request (and the nonce, when one is asked for).
            let proven = proof.as_ref().is_some_and(|claims| {
                claims["htm"] == "POST"
                    && claims["htu"] == format!("{base}/token")
                    && claims.get("ath").is_none()
            });
            if setup.dpop != Dpop::Off && !proven {
                (
                    "400 Bad Request",
                    String::new(),
                    json!({"error": "invalid_dpop_proof"}),
                )
            } else if setup.dpop == Dpop::Nonces
                && proof
                    .as_ref()
                    .is_some_and(|claims| claims["nonce"] != AS_NONCE)
            {
                (
                    "400 Bad Request",
                    format!("dpop-nonce: {AS_NONCE}\r\n"),
                    json!({"error": "use_dpop_nonce"}),
                )
            } else if known {
                let token_type = if setup.dpop == Dpop::Off {
                    "Bearer"
                } else {
                    "DPoP"
                };
                (
                    "200 OK",
                    String::new(),
                    json!({"access_token": TOKEN, "token_type": token_type, "expires_in": 3600}),
                )
            } else {
                (
                    "400 Bad Request",
                    String::new(),
                    json!({"error": "invalid_grant", "error_description": "not a grant of ours"}),
                )
            }
        }
        "/mcp" if asks_nonce => (
            "401 Unauthorized",
            format!(
                "www-authenticate: DPoP error=\"use_dpop_nonce\"\r\ndpop-nonce: {RS_NONCE}\r\n"
            ),
            json!({"error": "use_dpop_nonce"}),
        ),
        "/mcp" if !authorized && needs_token => (
            "401 Unauthorized",
            format!(
                "www-authenticate: Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"\r\n"
            ),
            json!({"error": "invalid_token"}),
        ),
        "/mcp" => {
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
                    calls.fetch_add(1, Ordering::SeqCst);
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

/// The value of the header `name` in `head`.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then_some(value.trim())
    })
}

/// The claims of a DPoP proof (`typ` `dpop+jwt`, ES256) whose signature its public `jwk`
/// verifies, with that `jwk` added; else `None`.
fn verified_proof(proof: &str) -> Option<Value> {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut parts = proof.split('.');
    let (head, claims, signature) = (parts.next()?, parts.next()?, parts.next()?);
    let header: Value = serde_json::from_slice(&b64.decode(head).ok()?).ok()?;
    let jwk = &header["jwk"];
    if header["typ"] != "dpop+jwt" || header["alg"] != "ES256" || jwk.get("d").is_some() {
        return None;
    }
    let mut point = vec![4];
    point.extend(b64.decode(jwk["x"].as_str()?).ok()?);
    point.extend(b64.decode(jwk["y"].as_str()?).ok()?);
    ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_FIXED, point)
        .verify(
            format!("{head}.{claims}").as_bytes(),
            &b64.decode(signature).ok()?,
        )
        .ok()?;
    let mut claims: Value = serde_json::from_slice(&b64.decode(claims).ok()?).ok()?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    (claims["jti"].is_string() && claims["iat"].as_u64()?.abs_diff(now) < 60).then_some(())?;
    claims["jwk"] = jwk.clone();
    Some(claims)
}

/// base64url(SHA-256(`text`)): a proof's `ath` of the token `text`.
fn sha256_base64url(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(ring::digest::digest(&ring::digest::SHA256, text.as_bytes()))
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
        // An authorization server that does not offer DPoP gets no proof (a bearer token).
        assert_eq!(header(&requests[0].head, "dpop"), None);
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
async fn a_dpop_authorization_server_binds_the_token_and_each_request_proves_the_key() {
    guard(async {
        let server = Protected::start_as(Setup {
            auth_methods: &["none"],
            open_listing: false,
            dpop: Dpop::On,
        })
        .await;
        let asked = Arc::new(AtomicUsize::new(0));
        let toolset = McpToolset::connect([
            McpServer::http("protected", server.mcp()).oauth(approving(asked.clone()))
        ])
        .await
        .expect("connected after the authorization");
        let messages = call_once(&toolset, "whoami", json!({})).await;
        assert_eq!(messages, [("an authorized caller".to_owned(), false)]);
        assert_eq!(server.calls.load(Ordering::SeqCst), 1);
        // The code exchanged with a proof of the token request (no `ath`, no nonce).
        let requests = server.token_requests.lock().unwrap().clone();
        assert_eq!(requests.len(), 1);
        let token_proof = header(&requests[0].head, "dpop")
            .and_then(verified_proof)
            .expect("a token request with a verified proof");
        assert_eq!(token_proof["htu"], format!("{}/token", server.base));
        assert!(token_proof.get("nonce").is_none());
        // Every MCP request after it: `DPoP` and a proof of it with the token's `ath`, by
        // the key the token is bound to (the server checks), each with its own `jti`.
        let proofs = server.mcp_proofs.lock().unwrap().clone();
        assert!(
            proofs.len() >= 3,
            "initialize, initialized, list, call: {proofs:?}"
        );
        let mut jtis: Vec<&str> = proofs.iter().filter_map(|p| p["jti"].as_str()).collect();
        jtis.sort_unstable();
        jtis.dedup();
        assert_eq!(jtis.len(), proofs.len(), "a fresh jti each time");
        assert!(
            proofs
                .iter()
                .all(|proof| proof["jwk"] == token_proof["jwk"])
        );
        toolset.close().await;
    })
    .await;
}

#[tokio::test]
async fn dpop_nonces_asked_for_are_sent_and_the_refused_request_runs_once() {
    guard(async {
        let server = Protected::start_as(Setup {
            auth_methods: &["none"],
            open_listing: true,
            dpop: Dpop::Nonces,
        })
        .await;
        let asked = Arc::new(AtomicUsize::new(0));
        let toolset = McpToolset::connect([
            McpServer::http("protected", server.mcp()).oauth(approving(asked.clone()))
        ])
        .await
        .expect("connected without a token");
        // The call is refused without a token, authorized, refused for want of the MCP
        // server's nonce, asked again for it, then sent with it: run once.
        let messages = call_once(&toolset, "whoami", json!({})).await;
        assert_eq!(messages, [("an authorized caller".to_owned(), false)]);
        assert_eq!(server.calls.load(Ordering::SeqCst), 1);
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        // The token request, refused for the authorization server's nonce, sent again with it.
        let requests = server.token_requests.lock().unwrap().clone();
        assert_eq!(requests.len(), 2);
        let nonces: Vec<Value> = requests
            .iter()
            .map(|request| {
                let proof = header(&request.head, "dpop").and_then(verified_proof);
                proof.expect("a verified proof")["nonce"].clone()
            })
            .collect();
        assert_eq!(nonces, [Value::Null, json!(AS_NONCE)]);
        let proofs = server.mcp_proofs.lock().unwrap().clone();
        let last = proofs.last().expect("proofs at the MCP endpoint");
        assert_eq!(last["nonce"], RS_NONCE);
        // Refused first: its nonce was the origin's last one, the authorization server's
        // (both at one origin here).
        assert_eq!(proofs[0]["nonce"], AS_NONCE);
        toolset.close().await;
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

/// The agent of one "process": the model calls `whoami`, then says what it read.
fn asking_agent(toolset: &McpToolset) -> Agent<ScriptedModel> {
    let model = ScriptedModel::from_rule(|request| {
        Ok(
            match request.messages.iter().rfind(|m| m.role == Role::Tool) {
                Some(result) => ModelResponse::text(format!("read: {}", result.text())),
                None => ModelResponse::tool_calls([ToolCall::new("c1", "whoami", json!({}))]),
            },
        )
    });
    Agent::builder(model)
        .tools(toolset.registry())
        .build()
        .unwrap()
}

/// OAuth without a handler, with the application's two stores.
fn sharing(credentials: &InMemoryCredentialStore, states: &InMemoryStateStore) -> McpOAuth {
    McpOAuth::new("http://localhost:3000/callback")
        .credential_store(credentials.clone())
        .state_store(states.clone())
}

/// The person: opens the URL; the authorization server sends the browser back. Where to.
async fn follow(url: &str) -> String {
    let parsed = url::Url::parse(url).unwrap();
    let mut browser = TcpStream::connect((
        parsed.host_str().unwrap(),
        parsed.port_or_known_default().unwrap(),
    ))
    .await
    .unwrap();
    let target = &url[url.find(parsed.path()).unwrap()..];
    let request = format!(
        "GET {target} HTTP/1.1\r\nhost: {}\r\nconnection: close\r\n\r\n",
        parsed.authority()
    );
    browser.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    browser.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 302"), "{response}");
    response
        .lines()
        .find_map(|line| line.strip_prefix("location: "))
        .expect("a location")
        .to_owned()
}

/// The run paused on the authorization of a call of `whoami`: its stored checkpoint, as JSON.
async fn paused_on_authorization(toolset: &McpToolset) -> String {
    let paused = asking_agent(toolset).run("Who am I?").await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    paused.checkpoint.expect("a checkpoint").to_json().unwrap()
}

#[tokio::test]
async fn without_a_handler_a_call_pauses_the_run_and_a_restarted_agent_resumes_it_authorized() {
    guard(async {
        let server = Protected::start_open_listing().await;
        let (credentials, states) = (InMemoryCredentialStore::new(), InMemoryStateStore::new());
        let before = McpToolset::connect([
            McpServer::http("protected", server.mcp()).oauth(sharing(&credentials, &states))
        ])
        .await
        .expect("listed without a token");
        let stored = paused_on_authorization(&before).await;
        before.close().await;
        assert_eq!(server.calls.load(Ordering::SeqCst), 0);
        assert!(server.token_requests.lock().unwrap().is_empty());

        // The application reads the interrupt from its store; the person authorizes.
        let checkpoint = Checkpoint::from_json(&stored).unwrap();
        let [interrupt] = checkpoint.interrupts() else {
            panic!("{:?}", checkpoint.interrupts());
        };
        let asked = McpAuthorization::from_interrupt(interrupt).expect("an authorization");
        assert_eq!((&*asked.server, &*asked.tool), ("protected", "whoami"));
        assert!(
            asked
                .url
                .starts_with(&format!("{}/authorize?", server.base)),
            "{}",
            asked.url
        );
        assert!(asked.challenge.contains("resource_metadata"), "{asked:?}");
        let redirected = follow(&asked.url).await;
        let answer = asked.answer_redirect(&redirected).unwrap();

        // A restart: another toolset and agent, sharing only the two stores.
        let after = McpToolset::connect([
            McpServer::http("protected", server.mcp()).oauth(sharing(&credentials, &states))
        ])
        .await
        .unwrap();
        let agent = asking_agent(&after);
        let output = agent
            .resume(checkpoint.clone(), [(interrupt.id.clone(), answer.clone())])
            .await
            .unwrap();
        assert_eq!(output.end, EndReason::Finished);
        let results = tool_messages(&output.messages);
        assert_eq!(results.len(), 1, "{results:?}");
        assert_eq!(results[0].text(), "an authorized caller");
        assert_eq!(server.calls.load(Ordering::SeqCst), 1);
        // The code exchanged once, with the PKCE verifier the first process kept in the state
        // store: never in the checkpoint, nor in the answer.
        let requests = server.token_requests.lock().unwrap().clone();
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].form("code").as_deref(), Some(CODE));
        assert_eq!(requests[0].form("client_id").as_deref(), Some("registered"));
        assert_eq!(requests[0].form("resource"), Some(server.mcp()));
        let verifier = requests[0].form("code_verifier").expect("a PKCE verifier");
        assert!(!stored.contains(&verifier));
        assert!(!answer.to_string().contains(&verifier));
        // The token is in the credential store, for the next runs.
        use hookchain_mcp::oauth::CredentialStore;
        assert!(credentials.load().await.unwrap().is_some());

        // The same answer again (the application replays it): refused, nothing called.
        let replayed = agent
            .resume(checkpoint.clone(), [(interrupt.id.clone(), answer)])
            .await
            .unwrap();
        let why = failures(&replayed);
        assert!(
            why.iter()
                .any(|failure| failure.contains("no authorization waits for this answer")),
            "{why:?}"
        );
        assert_eq!(server.calls.load(Ordering::SeqCst), 1);
        assert_eq!(server.token_requests.lock().unwrap().len(), 1);
        after.close().await;
    })
    .await;
}

#[tokio::test]
async fn a_wrong_answer_to_an_authorization_is_refused_and_nothing_is_called() {
    guard(async {
        let server = Protected::start_open_listing().await;
        let toolset = McpToolset::connect([McpServer::http("protected", server.mcp())
            .oauth(McpOAuth::new("http://localhost:3000/callback"))])
        .await
        .unwrap();
        let agent = asking_agent(&toolset);
        let checkpoint = Checkpoint::from_json(&paused_on_authorization(&toolset).await).unwrap();
        let interrupt = &checkpoint.interrupts()[0];
        let asked = McpAuthorization::from_interrupt(interrupt).unwrap();
        let state = asked.state().expect("the URL's state");
        let resume =
            |answer: Value| agent.resume(checkpoint.clone(), [(interrupt.id.clone(), answer)]);

        // Another authorization's redirect (another state): refused before the run resumes.
        let forged = asked.answer(AuthorizationCallback::new(CODE, "another-state"));
        let refused = resume(forged)
            .await
            .expect_err("resumed with another state");
        assert!(format!("{refused:?}").contains("OtherState"), "{refused:?}");
        // An answer to another server's authorization.
        let mut payload = interrupt.payload.clone();
        payload["mcpAuthorization"]["server"] = json!("mail");
        let mail = McpAuthorization::from_payload(&payload).unwrap();
        let for_mail = mail.answer(AuthorizationCallback::new(CODE, state.clone()));
        let refused = resume(for_mail)
            .await
            .expect_err("resumed with mail's answer");
        assert!(format!("{refused:?}").contains("mail"), "{refused:?}");
        // Not an answer at all.
        assert!(resume(json!("yes")).await.is_err());
        assert!(server.token_requests.lock().unwrap().is_empty());

        // A code the authorization server refuses: the call fails, saying so; nothing called.
        let wrong_code = asked.answer(AuthorizationCallback::new("not-the-code", state));
        let output = resume(wrong_code).await.unwrap();
        let why = failures(&output);
        assert!(
            why.iter()
                .any(|failure| failure.contains("authorization failed")),
            "{why:?}"
        );
        assert_eq!(server.token_requests.lock().unwrap().len(), 1);
        assert_eq!(server.calls.load(Ordering::SeqCst), 0);
        toolset.close().await;
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

/// A workload's assertion, taken from its source when the server refuses, gets the token
/// (RFC 7523): the grant, the assertion, the server's URL, and the client as the
/// authorization server's metadata says — its id alone in the form, its secret with HTTP
/// Basic or in the form, nothing without a client id.
#[tokio::test]
async fn the_jwt_bearer_grant_presents_the_workloads_assertion() {
    guard(async {
        for (auth_methods, client, basic) in [
            (&["none"][..], None, false),
            (&["none"][..], Some((CLIENT_ID, None)), false),
            (
                &["client_secret_basic"][..],
                Some((CLIENT_ID, Some(CLIENT_SECRET))),
                true,
            ),
            (
                &["client_secret_post"][..],
                Some((CLIENT_ID, Some(CLIENT_SECRET))),
                false,
            ),
        ] {
            let server = Protected::start_with(auth_methods).await;
            let asked = Arc::new(AtomicUsize::new(0));
            let counted = asked.clone();
            let mut oauth = McpOAuth::jwt_bearer(move || {
                counted.fetch_add(1, Ordering::SeqCst);
                async { Ok::<_, std::io::Error>(WORKLOAD_JWT.to_owned()) }
            });
            if let Some((id, secret)) = client {
                oauth = oauth.client(id, secret.map(str::to_owned));
            }
            let toolset =
                McpToolset::connect([McpServer::http("protected", server.mcp()).oauth(oauth)])
                    .await
                    .expect("connected with the workload's token");
            let messages = call_once(&toolset, "whoami", json!({})).await;
            assert_eq!(messages, [("an authorized caller".to_owned(), false)]);
            assert_eq!(asked.load(Ordering::SeqCst), 1, "{auth_methods:?}");
            let requests = server.token_requests.lock().unwrap().clone();
            assert_eq!(requests.len(), 1, "{auth_methods:?}");
            let request = &requests[0];
            assert_eq!(request.form("grant_type").as_deref(), Some(JWT_BEARER));
            assert_eq!(request.form("assertion").as_deref(), Some(WORKLOAD_JWT));
            assert_eq!(request.form("resource"), Some(server.mcp()));
            assert_eq!(request.form("scope"), None);
            match client {
                None => {
                    assert_eq!(request.form("client_id"), None);
                    assert_eq!(request.authorization(), None);
                }
                Some((_, None)) => {
                    assert_eq!(request.form("client_id").as_deref(), Some(CLIENT_ID));
                    assert_eq!(request.form("client_secret"), None);
                    assert_eq!(request.authorization(), None);
                }
                Some(_) if basic => {
                    assert_eq!(request.authorization(), Some(BASIC));
                    assert_eq!(request.form("client_secret"), None);
                }
                Some(_) => {
                    assert_eq!(request.authorization(), None);
                    assert_eq!(request.form("client_id").as_deref(), Some(CLIENT_ID));
                    assert_eq!(
                        request.form("client_secret").as_deref(),
                        Some(CLIENT_SECRET)
                    );
                }
            }
            toolset.close().await;
        }
    })
    .await;
}

/// An assertion the authorization server refuses fails the connect with its `error`, once:
/// it is not presented again, and the error does not show it.
#[tokio::test]
async fn a_refused_assertion_fails_the_connect_and_is_not_retried() {
    guard(async {
        let server = Protected::start().await;
        let oauth =
            McpOAuth::jwt_bearer(|| async { Ok::<_, std::io::Error>(EXPIRED_JWT.to_owned()) });
        let Err(error) =
            McpToolset::connect([McpServer::http("protected", server.mcp()).oauth(oauth)]).await
        else {
            panic!("connected without a token");
        };
        let mut chain = error.to_string();
        let mut source = std::error::Error::source(&error);
        while let Some(cause) = source {
            chain.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        assert!(chain.contains("invalid_grant"), "{chain}");
        assert!(!chain.contains(EXPIRED_JWT), "{chain}");
        assert_eq!(server.token_requests.lock().unwrap().len(), 1);
    })
    .await;
}

/// A source that gives no assertion fails the connect, saying so; nothing is sent.
#[tokio::test]
async fn a_source_without_an_assertion_fails_the_connect() {
    guard(async {
        let server = Protected::start().await;
        let oauth = McpOAuth::jwt_bearer(|| async {
            Err::<String, _>(std::io::Error::other("no token mounted"))
        });
        let Err(error) =
            McpToolset::connect([McpServer::http("protected", server.mcp()).oauth(oauth)]).await
        else {
            panic!("connected without a token");
        };
        assert!(
            matches!(
                &error,
                Error::Authorization {
                    source: hookchain_mcp::oauth::AuthorizationError::Assertion(_),
                    ..
                }
            ),
            "{error:?}"
        );
        assert!(server.token_requests.lock().unwrap().is_empty());
    })
    .await;
}

/// A client that proves itself with its key (`private_key_jwt`): the client-credentials
/// grant with a new assertion signed for the authorization server, and no secret.
#[tokio::test]
async fn the_client_credentials_with_a_key_send_a_signed_assertion() {
    use base64::Engine as _;
    use ring::signature::{self, EcdsaKeyPair, KeyPair as _};

    guard(async {
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .unwrap();
        let public = EcdsaKeyPair::from_pkcs8(
            &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            pkcs8.as_ref(),
            &rng,
        )
        .unwrap()
        .public_key()
        .as_ref()
        .to_vec();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            base64::engine::general_purpose::STANDARD.encode(pkcs8.as_ref())
        );
        let server = Protected::start_with(&["private_key_jwt"]).await;
        let key = ClientKey::from_pkcs8_pem("ES256", &pem).unwrap();
        let oauth = McpOAuth::client_credentials_jwt(CLIENT_ID, key);
        let toolset =
            McpToolset::connect([McpServer::http("protected", server.mcp()).oauth(oauth)])
                .await
                .expect("connected with the client's token");
        let messages = call_once(&toolset, "whoami", json!({})).await;
        assert_eq!(messages, [("an authorized caller".to_owned(), false)]);
        let requests = server.token_requests.lock().unwrap().clone();
        assert_eq!(requests.len(), 1);
        let request = &requests[0];
        assert_eq!(
            request.form("grant_type").as_deref(),
            Some("client_credentials")
        );
        assert_eq!(
            request.form("client_assertion_type").as_deref(),
            Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
        );
        assert_eq!(request.form("resource"), Some(server.mcp()));
        assert_eq!(request.form("client_secret"), None);
        assert_eq!(request.authorization(), None);
        let assertion = request.form("client_assertion").expect("an assertion");
        let parts: Vec<&str> = assertion.split('.').collect();
        let decode = |part: &str| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(part)
                .unwrap()
        };
        let claims: Value = serde_json::from_slice(&decode(parts[1])).unwrap();
        assert_eq!(claims["iss"], CLIENT_ID);
        assert_eq!(claims["sub"], CLIENT_ID);
        assert_eq!(claims["aud"], server.base.as_str());
        signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, &public)
            .verify(
                format!("{}.{}", parts[0], parts[1]).as_bytes(),
                &decode(parts[2]),
            )
            .expect("signed with the client's key");
        toolset.close().await;
    })
    .await;
}

/// Enterprise-managed authorization (SEP-990): the person's ID token is exchanged at the IdP
/// for an ID-JAG for the authorization server (its issuer the audience, the server's URL the
/// resource), which is presented there with the JWT-bearer grant, the client authenticated
/// as the metadata says.
#[tokio::test]
async fn the_enterprise_idp_exchanges_the_id_token_for_the_grant() {
    guard(async {
        let server = Protected::start_with(&["client_secret_basic"]).await;
        let idp = EnterpriseIdp::new(format!("{}/idp/token", server.base), "agent-at-idp")
            .client_secret("the-idp-secret");
        let oauth = McpOAuth::enterprise_managed(idp, || async {
            Ok::<_, std::io::Error>(ID_TOKEN.to_owned())
        })
        .client(CLIENT_ID, Some(CLIENT_SECRET.to_owned()));
        let toolset =
            McpToolset::connect([McpServer::http("protected", server.mcp()).oauth(oauth)])
                .await
                .expect("connected with the token the ID-JAG got");
        let messages = call_once(&toolset, "whoami", json!({})).await;
        assert_eq!(messages, [("an authorized caller".to_owned(), false)]);
        let requests = server.token_requests.lock().unwrap().clone();
        assert_eq!(requests.len(), 2);
        let (exchange, grant) = (&requests[0], &requests[1]);
        assert!(
            exchange.head.starts_with("POST /idp/token "),
            "{}",
            exchange.head
        );
        assert_eq!(
            exchange.form("grant_type").as_deref(),
            Some("urn:ietf:params:oauth:grant-type:token-exchange")
        );
        assert_eq!(
            exchange.form("requested_token_type").as_deref(),
            Some("urn:ietf:params:oauth:token-type:id-jag")
        );
        assert_eq!(exchange.form("subject_token").as_deref(), Some(ID_TOKEN));
        assert_eq!(
            exchange.form("subject_token_type").as_deref(),
            Some("urn:ietf:params:oauth:token-type:id_token")
        );
        assert_eq!(exchange.form("audience"), Some(server.base.clone()));
        assert_eq!(exchange.form("resource"), Some(server.mcp()));
        assert_eq!(exchange.form("client_id").as_deref(), Some("agent-at-idp"));
        assert_eq!(
            exchange.form("client_secret").as_deref(),
            Some("the-idp-secret")
        );
        assert!(grant.head.starts_with("POST /token "), "{}", grant.head);
        assert_eq!(grant.form("grant_type").as_deref(), Some(JWT_BEARER));
        assert_eq!(grant.form("assertion").as_deref(), Some(ID_JAG));
        assert_eq!(grant.form("resource"), Some(server.mcp()));
        assert_eq!(grant.authorization(), Some(BASIC));
        assert_eq!(grant.form("client_secret"), None);
        toolset.close().await;
    })
    .await;
}

/// An ID token the IdP refuses fails the connect with the IdP's error; the authorization
/// server is not asked.
#[tokio::test]
async fn an_id_token_the_idp_refuses_fails_the_connect() {
    guard(async {
        let server = Protected::start().await;
        let idp = EnterpriseIdp::new(format!("{}/idp/token", server.base), "agent-at-idp");
        let oauth = McpOAuth::enterprise_managed(idp, || async {
            Ok::<_, std::io::Error>(EXPIRED_JWT.to_owned())
        });
        let Err(error) =
            McpToolset::connect([McpServer::http("protected", server.mcp()).oauth(oauth)]).await
        else {
            panic!("connected without a token");
        };
        let mut chain = error.to_string();
        let mut source = std::error::Error::source(&error);
        while let Some(cause) = source {
            chain.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        assert!(chain.contains("invalid_grant"), "{chain}");
        assert!(chain.contains("/idp/token"), "{chain}");
        assert!(!chain.contains(EXPIRED_JWT), "{chain}");
        let requests = server.token_requests.lock().unwrap().clone();
        assert_eq!(requests.len(), 1);
        assert!(requests[0].head.starts_with("POST /idp/token "));
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
    let workload =
        McpOAuth::jwt_bearer(|| async { Ok::<_, std::io::Error>(WORKLOAD_JWT.to_owned()) });
    let shown = format!("{workload:?}");
    assert!(shown.contains("JwtBearer"), "{shown}");
    assert!(!shown.contains(WORKLOAD_JWT), "{shown}");
    let enterprise = McpOAuth::enterprise_managed(
        EnterpriseIdp::new("https://idp.example.com/token", "agent").client_secret("idp-secret"),
        || async { Ok::<_, std::io::Error>(ID_TOKEN.to_owned()) },
    );
    let shown = format!("{enterprise:?}");
    assert!(shown.contains("idp.example.com"), "{shown}");
    assert!(!shown.contains("idp-secret"), "{shown}");
    assert!(!shown.contains(ID_TOKEN), "{shown}");
    let callback = AuthorizationCallback::new("the-code", "the-state");
    assert!(!format!("{callback:?}").contains("the-code"));
}
