//! An agent's tools served over streamable HTTP, called by this crate's own client
//! (`McpToolset`) and by plain HTTP requests where a test needs to see the wire: no Python, no
//! Node.

mod served;

use std::net::SocketAddr;
use std::time::Duration;

use hookchain::ToolContext;
use hookchain::prelude::*;
use hookchain::{CallFrame, Model, Tool};
use hookchain_mcp::{McpServer, McpToolServer, McpToolset, ServeError};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The protocol version of the plain requests: one with sessions (before 2026-07-28).
const PROTOCOL: &str = "2025-11-25";

/// A server serving on loopback until stopped.
struct Serving {
    address: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), ServeError>>,
}

impl Serving {
    async fn start<M, C>(server: McpToolServer<M, C>) -> Self
    where
        M: Model + Send + Sync + 'static,
        C: Middleware + Send + Sync + 'static,
    {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server.serve_http(listener, async {
            let _ = stopped.await;
        }));
        Self {
            address,
            stop,
            task,
        }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.address)
    }

    async fn stop(self) {
        self.stop.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(15), self.task)
            .await
            .expect("the server shuts down")
            .unwrap()
            .unwrap();
    }
}

/// A plain HTTP client (reqwest, whose TLS provider this crate leaves unset: ring here; the
/// requests are plain HTTP anyway).
fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// A request of the MCP client `bearer` (none: no credentials) in `session`.
fn mcp_request(
    client: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    bearer: Option<&str>,
    session: Option<&str>,
) -> reqwest::RequestBuilder {
    let mut request = client
        .request(method, url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", PROTOCOL);
    if let Some(user) = bearer {
        request = request.bearer_auth(user);
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request
}

/// POSTs the JSON-RPC `message` as `bearer` in `session`.
async fn post(
    client: &reqwest::Client,
    url: &str,
    bearer: Option<&str>,
    session: Option<&str>,
    message: Value,
) -> reqwest::Response {
    mcp_request(client, reqwest::Method::POST, url, bearer, session)
        .json(&message)
        .send()
        .await
        .expect("the server answers")
}

/// A response's whole body (an event stream of one response ends with it).
async fn body(response: reqwest::Response) -> String {
    tokio::time::timeout(Duration::from_secs(10), response.text())
        .await
        .expect("the body ends")
        .expect("the body is read")
}

/// Opens a session as `user`: `initialize`, then `notifications/initialized`. Its id.
async fn open_session(client: &reqwest::Client, url: &str, user: &str) -> String {
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "plain", "version": "0"},
        },
    });
    let response = post(client, url, Some(user), None, initialize).await;
    assert_eq!(response.status(), 200, "initialize as {user}");
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(body(response).await.contains("serverInfo"));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = post(client, url, Some(user), Some(&session), initialized).await;
    assert_eq!(response.status(), 202, "initialized as {user}");
    session
}

fn tool_call(id: u64, name: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    })
}

/// Checks that `response` is the problem of a `401` by the tests' authorizer.
async fn assert_unauthenticated(response: reqwest::Response, what: &str) {
    assert_eq!(response.status(), 401, "{what}");
    let headers = response.headers();
    assert_eq!(
        headers["content-type"], "application/problem+json",
        "{what}"
    );
    assert_eq!(headers["www-authenticate"], served::CHALLENGE, "{what}");
    let problem: Value = serde_json::from_str(&body(response).await).unwrap();
    assert_eq!(
        problem,
        json!({
            "type": "urn:hookchain:problem:unauthenticated",
            "title": "Unauthorized",
            "status": 401,
            "detail": "sign in first",
            "code": "unauthenticated",
        }),
        "{what}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_toolset_lists_and_calls_the_served_tools_through_the_chain() {
    let serving = Serving::start(served::server().authorize(served::bearer())).await;
    let toolset =
        McpToolset::connect([McpServer::http("served", serving.url()).bearer_token("alice")])
            .await
            .expect("the toolset connects");
    let mut names: Vec<String> = toolset
        .tools()
        .iter()
        .map(|tool| tool.name().to_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["add", "broken", "delete", "greet", "whoami"]);

    let cx = Context::new(Vec::new());
    let call = |name: &str, arguments: serde_json::Value| {
        let tool = toolset
            .tools()
            .iter()
            .find(|tool| tool.name() == name)
            .expect("the tool is listed")
            .clone();
        let cx = &cx;
        async move {
            let frame = CallFrame::new("c1", tool.name());
            tool.call(ToolContext::new(cx, &frame), arguments).await
        }
    };
    assert_eq!(call("add", json!({"a": 2, "b": 3})).await.unwrap(), "5");
    assert_eq!(
        call("greet", json!({"name": "Ada"})).await.unwrap(),
        "HELLO, ADA!"
    );
    let failed = call("broken", json!({})).await.unwrap_err();
    assert!(failed.to_string().contains("the disk is full"), "{failed}");

    // The authorizer's principal reached the tool, through rmcp and the call's RunContext.
    assert_eq!(call("whoami", json!({})).await.unwrap(), "alice");

    // Gates stay gates: an authorized caller's gated call is an error result, and the tool
    // did not run.
    let gated = call("delete", json!({"path": "/tmp/round-trip"}))
        .await
        .unwrap_err();
    assert!(gated.to_string().contains("HumanInTheLoop"), "{gated}");
    assert!(!served::ran("delete /tmp/round-trip"));

    toolset.close().await;
    serving.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_without_credentials_is_refused_with_a_problem_and_runs_nothing() {
    let serving = Serving::start(served::server().authorize(served::bearer())).await;
    let (client, url) = (http_client(), serving.url());

    // Before any session: the handshake itself.
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                   "clientInfo": {"name": "plain", "version": "0"}},
    });
    let refused = post(&client, &url, None, None, initialize).await;
    assert!(refused.headers().get("mcp-session-id").is_none());
    assert_unauthenticated(refused, "initialize").await;

    // In a session alice opened: every request is authorized, not only the first.
    let session = open_session(&client, &url, "alice").await;
    let call = tool_call(2, "greet", json!({"name": "Mallory"}));
    let refused = post(&client, &url, None, Some(&session), call).await;
    assert_unauthenticated(refused, "tools/call without credentials").await;
    assert!(!served::ran("greet Mallory"), "the refused call ran");
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let refused = mcp_request(&client, method.clone(), &url, None, Some(&session))
            .send()
            .await
            .unwrap();
        assert_unauthenticated(refused, &format!("{method} without credentials")).await;
    }

    // The session is still alice's, and works.
    let call = tool_call(3, "greet", json!({"name": "Alice"}));
    let answered = post(&client, &url, Some("alice"), Some(&session), call).await;
    assert_eq!(answered.status(), 200);
    assert!(body(answered).await.contains("HELLO, ALICE!"));
    assert!(served::ran("greet Alice"));

    serving.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_opened_by_alice_cannot_be_used_by_bob() {
    let serving = Serving::start(served::server().authorize(served::bearer())).await;
    let (client, url) = (http_client(), serving.url());
    let session = open_session(&client, &url, "alice").await;

    // Bob, naming alice's session: a session that does not exist, whatever he sends.
    let call = tool_call(2, "greet", json!({"name": "Bob"}));
    let refused = post(&client, &url, Some("bob"), Some(&session), call).await;
    assert_eq!(refused.status(), 404);
    let not_found = body(refused).await;
    assert!(
        !served::ran("greet Bob"),
        "bob's call ran in alice's session"
    );
    let stream = mcp_request(
        &client,
        reqwest::Method::GET,
        &url,
        Some("bob"),
        Some(&session),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(stream.status(), 404, "bob's GET of alice's event stream");
    let end = mcp_request(
        &client,
        reqwest::Method::DELETE,
        &url,
        Some("bob"),
        Some(&session),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(end.status(), 404, "bob's DELETE of alice's session");
    // Just as a session that does not exist.
    let call = tool_call(3, "whoami", json!({}));
    let unknown = post(&client, &url, Some("bob"), Some("no-such-session"), call).await;
    assert_eq!(unknown.status(), 404);
    assert_eq!(body(unknown).await, not_found);

    // Alice's session was not touched, and calls run as alice in it.
    let call = tool_call(4, "whoami", json!({}));
    let answered = post(&client, &url, Some("alice"), Some(&session), call).await;
    assert_eq!(answered.status(), 200);
    let answered = body(answered).await;
    assert!(answered.contains(r#""text":"alice""#), "{answered}");

    // Alice ends it; then it is no one's, hers included.
    let end = mcp_request(
        &client,
        reqwest::Method::DELETE,
        &url,
        Some("alice"),
        Some(&session),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(end.status(), 202);
    let call = tool_call(5, "whoami", json!({}));
    let gone = post(&client, &url, Some("alice"), Some(&session), call).await;
    assert_eq!(gone.status(), 404);

    serving.stop().await;
}

#[tokio::test]
async fn a_server_not_told_who_may_call_refuses_to_serve_http() {
    let server = served::server();
    let error = server.http_service().unwrap_err();
    assert!(matches!(error, ServeError::NoAuthorizer), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains("authorize(..)") && message.contains("allow_anonymous()"),
        "{message}"
    );

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let outcome = tokio::time::timeout(
        Duration::from_secs(5),
        server.serve_http(listener, std::future::pending()),
    )
    .await
    .expect("it refuses at once, without serving");
    assert!(
        matches!(outcome, Err(ServeError::NoAuthorizer)),
        "{outcome:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_allows_anonymous_calls_runs_them_as_the_anonymous_principal() {
    let serving = Serving::start(served::server().allow_anonymous()).await;
    let toolset = McpToolset::connect([McpServer::http("served", serving.url())])
        .await
        .expect("the toolset connects without credentials");
    let whoami = toolset
        .tools()
        .iter()
        .find(|tool| tool.name() == "whoami")
        .unwrap()
        .clone();
    let cx = Context::new(Vec::new());
    let frame = CallFrame::new("c1", "whoami");
    let answer = whoami
        .call(ToolContext::new(&cx, &frame), json!({}))
        .await
        .unwrap();
    assert_eq!(answer, "anonymous");
    toolset.close().await;
    serving.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_mounted_in_rmcps_service_directly_refuses_calls_it_cannot_attribute() {
    use std::sync::Arc;

    use hookchain_mcp::rmcp::transport::StreamableHttpService;
    use hookchain_mcp::rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use hyper_util::rt::TokioIo;
    use hyper_util::service::TowerToHyperService;

    // The server as rmcp's own service, past `http_service` and its authorizer: what an
    // application might mount by hand.
    let server = served::server().allow_anonymous();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        Default::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let accepting = tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let service = TowerToHyperService::new(service.clone());
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service),
            );
        }
    });

    let toolset = McpToolset::connect([McpServer::http("bypassed", url)])
        .await
        .expect("the toolset connects");
    let greet = toolset
        .tools()
        .iter()
        .find(|tool| tool.name() == "greet")
        .unwrap()
        .clone();
    let cx = Context::new(Vec::new());
    let frame = CallFrame::new("c1", "greet");
    let refused = greet
        .call(ToolContext::new(&cx, &frame), json!({"name": "Bypass"}))
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("cannot tell who is calling"),
        "{refused}"
    );
    assert!(!served::ran("greet Bypass"));
    toolset.close().await;
    accepting.abort();
}

/// Counts to three, reporting each step (and waiting between, as a long tool does).
struct Count;

impl Tool for Count {
    fn spec(&self) -> hookchain::ToolSpec {
        hookchain::ToolSpec::new("count", "Counts to three.", json!({ "type": "object" }))
    }

    async fn call(
        &self,
        cx: ToolContext<'_>,
        _arguments: Value,
    ) -> Result<hookchain::Content, hookchain::ToolError> {
        for step in 1..=3 {
            cx.progress(f64::from(step), Some(3.0), Some(&format!("counted {step}")));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok("three".into())
    }
}

/// A served tool's progress reaches the client as `notifications/progress`, in order and
/// before the result: through `McpToolset`'s call, to the calling context's `ProgressSink`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_tools_progress_reaches_the_client() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .tool(Count)
        .build()
        .unwrap();
    let serving =
        Serving::start(McpToolServer::new(std::sync::Arc::new(agent)).allow_anonymous()).await;
    let toolset = McpToolset::connect([McpServer::http("served", serving.url())])
        .await
        .unwrap();
    let count = toolset.tool("count").expect("listed");
    let seen: std::sync::Arc<std::sync::Mutex<Vec<hookchain::ToolProgress>>> = Default::default();
    let kept = std::sync::Arc::clone(&seen);
    let sink = hookchain::ProgressSink::new(move |report| kept.lock().unwrap().push(report));
    let cx = Context::new(Vec::new()).with_run_context(hookchain::RunContext::new().with(sink));
    let frame = CallFrame::new("c1", "count");
    let answer = count
        .call(ToolContext::new(&cx, &frame), json!({}))
        .await
        .unwrap();
    assert_eq!(answer, "three");
    let reports = seen.lock().unwrap().clone();
    let progress: Vec<(f64, Option<f64>, Option<String>)> = reports
        .into_iter()
        .map(|report| (report.progress, report.total, report.message))
        .collect();
    // Each as the tool made it, in order; rmcp handles each notification in a task of its own,
    // so one overtaken by a later one is dropped rather than shown going back.
    assert!(!progress.is_empty(), "no progress reached the client");
    for (step, total, message) in &progress {
        assert_eq!(
            (*total, message.as_deref()),
            (Some(3.0), Some(format!("counted {step}").as_str()))
        );
    }
    assert!(
        progress.windows(2).all(|pair| pair[0].0 < pair[1].0),
        "{progress:?}"
    );
    toolset.close().await;
    serving.stop().await;
}

/// Records a clip and its transcript: audio and embedded resources, text and binary.
struct Record;

impl Tool for Record {
    fn spec(&self) -> hookchain::ToolSpec {
        hookchain::ToolSpec::new("record", "Records a clip.", json!({ "type": "object" }))
    }

    async fn call(
        &self,
        _cx: ToolContext<'_>,
        _arguments: Value,
    ) -> Result<hookchain::Content, hookchain::ToolError> {
        Ok(recorded())
    }
}

fn recorded() -> hookchain::Content {
    use hookchain::message::{ContentPart, EmbeddedResource};
    hookchain::Content::from(vec![
        ContentPart::text("Recorded:"),
        ContentPart::audio_base64("audio/wav", "UklGRiYAAABXQVZF"),
        ContentPart::resource_text("test://transcript", "text/plain", "hello there"),
        ContentPart::from(EmbeddedResource::blob("test://raw", "AAAA")),
    ])
}

/// A served tool's audio and embedded resources reach an `McpToolset` as the parts they were
/// (as MCP `audio` and `resource` blocks on the wire), not as text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_tools_audio_and_resources_reach_the_client_as_parts() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .tool(Record)
        .build()
        .unwrap();
    let serving =
        Serving::start(McpToolServer::new(std::sync::Arc::new(agent)).allow_anonymous()).await;
    let toolset = McpToolset::connect([McpServer::http("served", serving.url())])
        .await
        .unwrap();
    let record = toolset.tool("record").expect("listed");
    let cx = Context::new(Vec::new());
    let frame = CallFrame::new("c1", "record");
    let answer = record
        .call(ToolContext::new(&cx, &frame), json!({}))
        .await
        .unwrap();
    assert_eq!(answer, recorded());
    toolset.close().await;
    serving.stop().await;
}
