//! An agent served to signed-in users: the README's *Serve it safely*. A login sets a signed
//! session cookie (`axum-extra`'s `SignedCookieJar`); the server's authorizer reads it on every
//! request and says who asks; each conversation is its maker's, and another user who knows its
//! id gets the same `404` as for an id that does not exist. The payment tool asks the user
//! before it runs, and reads who asked from its context.
//!
//! ```sh
//! cargo run --example serve_safely --features axum            # on http://127.0.0.1:3000
//! cargo run --example serve_safely --features axum -- --smoke # alice pays, bob sees nothing (CI)
//! ```

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::{FromRef, Json};
use axum::http::{Request, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;
use axum_extra::extract::cookie::{Cookie, Key, SameSite, SignedCookieJar};
use hookchain::auth::http::request::Parts;
use hookchain::auth::{Authorize, Denied};
use hookchain::axum::AgentServer;
use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::interrupt::InMemoryCheckpointer;
use hookchain::prelude::*;
use hookchain::thread_store::InMemoryThreadStore;
use hookchain::{Durability, ModelError, Principal, Role, ToolContext, ToolError, tool};
use serde_json::{Value, json};
use tower::ServiceExt;

/// The cookie that says who is signed in: the user's id, signed with the server's key (a
/// client can read it, but not make or change one).
const SESSION: &str = "session";

/// Who asks: the user of the signed session cookie, or `401`. Your login may be anything that
/// ends in a principal — a JWT's `sub` checked with `jsonwebtoken`, an OIDC session — and the
/// claims you put on it reach hooks and tools.
fn session_authorizer(key: Key) -> impl Authorize {
    move |parts: &Parts| {
        // Read before the `async` block: its future does not borrow the request.
        let user = SignedCookieJar::from_headers(&parts.headers, key.clone())
            .get(SESSION)
            .map(|cookie| cookie.value().to_owned());
        async move {
            let user = user.ok_or_else(|| Denied::unauthenticated("sign in first"))?;
            Ok(Principal::new(user).with_claim("can_pay", true))
        }
    }
}

/// Pays an invoice (a fake: it records the payment).
#[tool]
async fn pay(
    cx: ToolContext<'_>,
    /// The invoice.
    invoice: String,
) -> Result<String, ToolError> {
    // Who asked, as the authorizer said: the tool checks it too.
    let who = cx
        .get::<Principal>()
        .filter(|who| who.claim("can_pay") == Some(&Value::Bool(true)))
        .ok_or_else(|| ToolError::for_model("pay", "the user may not pay"))?;
    PAID.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(format!("{invoice} by {}", who.id()));
    Ok(format!("paid {invoice}"))
}

/// The payments made.
static PAID: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The model: asked to pay, it calls `pay`; after a result, it says it is done.
fn answer(request: &ModelRequest) -> Result<ModelResponse, ModelError> {
    let last = request.messages.last();
    if last.is_some_and(|message| message.role == Role::Tool) {
        return Ok(ModelResponse::text("Done."));
    }
    let said = last
        .map(|message| message.text().into_owned())
        .unwrap_or_default();
    let invoice = said.trim_start_matches("pay ").to_owned();
    Ok(ModelResponse::tool_calls([ToolCall::new(
        format!("call_{}", request.messages.len()),
        "pay",
        json!({ "invoice": invoice }),
    )]))
}

/// What the routes share: the key that signs sessions.
#[derive(Clone)]
struct App {
    key: Key,
}

impl FromRef<App> for Key {
    fn from_ref(app: &App) -> Key {
        app.key.clone()
    }
}

/// `POST /login {"user": …}`: signs the user in. (A stand-in: your login checks a password or
/// a provider's token before it sets the cookie.)
async fn login(jar: SignedCookieJar, Json(body): Json<Value>) -> impl IntoResponse {
    let Some(user) = body["user"].as_str().filter(|user| !user.is_empty()) else {
        return (StatusCode::BAD_REQUEST, jar).into_response();
    };
    let cookie = Cookie::build((SESSION, user.to_owned()))
        .http_only(true)
        .secure(true)
        .same_site(SameSite::Strict)
        .path("/");
    (StatusCode::NO_CONTENT, jar.add(cookie)).into_response()
}

fn app(key: Key) -> Result<Router, Box<dyn std::error::Error>> {
    let agent = Agent::builder(ScriptedModel::from_rule(answer))
        .tool(pay)
        .chain(HumanInTheLoop::new().interrupt_on("pay", ToolPolicy::always()))
        .checkpointer(InMemoryCheckpointer::new(), Durability::Pauses)
        .build()?;
    let server = AgentServer::builder()
        .authorize(session_authorizer(key.clone()))
        // The names this server answers for (and loopback's, for this example).
        .allowed_hosts(["localhost", "127.0.0.1", "chat.example.com"])
        .build(Arc::new(agent), InMemoryThreadStore::new())?;
    Ok(Router::new()
        .route("/login", post(login))
        .with_state(App { key })
        .nest("/agent", server.router()))
}

#[tokio::main]
async fn main() -> ExitCode {
    // A real server reads its key from a secret (`Key::from(&bytes)`, 64 bytes or more), so
    // that sessions survive a restart.
    let key = Key::generate();
    let app = match app(key) {
        Ok(app) => app,
        Err(error) => {
            eprintln!("the server could not be built: {error}");
            return ExitCode::FAILURE;
        }
    };
    if std::env::args().any(|arg| arg == "--smoke") {
        return match smoke(app).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("smoke test failed: {error}");
                ExitCode::FAILURE
            }
        };
    }
    let listener = match tokio::net::TcpListener::bind("127.0.0.1:3000").await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("cannot listen on 127.0.0.1:3000: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!("serving on http://127.0.0.1:3000 (POST /login, then POST /agent)");
    match axum::serve(listener, app).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("the server failed: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Alice signs in, asks to pay, approves; Bob, signed in too, tries her conversation and her
/// approval, and gets what an unknown id gets.
async fn smoke(app: Router) -> Result<(), Box<dyn std::error::Error>> {
    let send = |request: Request<Body>| {
        let app = app.clone();
        async move {
            let response = app.oneshot(request).await?;
            let status = response.status();
            let cookie = response
                .headers()
                .get(header::SET_COOKIE)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.split(';').next())
                .map(str::to_owned);
            let body = axum::body::to_bytes(response.into_body(), 1 << 20).await?;
            let body: Value = serde_json::from_slice(&body)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
            Ok::<_, Box<dyn std::error::Error>>((status, body, cookie))
        }
    };
    let json_post = |path: &str, cookie: Option<&str>, body: Value| {
        let mut request = Request::post(path)
            .header(header::HOST, "localhost")
            .header(header::CONTENT_TYPE, "application/json");
        if let Some(cookie) = cookie {
            request = request.header(header::COOKIE, cookie);
        }
        request.body(Body::from(body.to_string()))
    };
    let sign_in = |user: &'static str| {
        let request = json_post("/login", None, json!({ "user": user }));
        let send = &send;
        async move {
            let (_, _, cookie) = send(request?).await?;
            cookie.ok_or_else(|| format!("{user} got no session").into())
        }
    };
    let alice: String = sign_in("alice")
        .await
        .map_err(|e: Box<dyn std::error::Error>| e)?;
    let bob: String = sign_in("bob")
        .await
        .map_err(|e: Box<dyn std::error::Error>| e)?;

    let turn = json!({"threadId": "t-1", "runId": "r1",
                      "messages": [{"id": "m1", "role": "user", "content": "pay INV-7"}]});
    let (status, paused, _) = send(json_post("/agent", Some(&alice), turn)?).await?;
    let interrupt = paused["outcome"]["interrupts"][0]["id"]
        .as_str()
        .ok_or(format!("alice's turn did not pause ({status}): {paused}"))?
        .to_owned();
    println!(
        "alice: {} waits for her approval",
        paused["outcome"]["type"]
    );

    let approve = |run: &str| {
        json!({"threadId": "t-1", "runId": run, "messages": [],
               "resume": [{"interruptId": interrupt, "status": "resolved",
                           "payload": {"decisions": [{"type": "approve"}]}}]})
    };
    let (status, refused, _) = send(json_post("/agent", Some(&bob), approve("b1"))?).await?;
    println!(
        "bob approving alice's payment: {status} {}",
        refused["code"]
    );
    if status != StatusCode::NOT_FOUND {
        return Err(format!("bob's approval was not refused: {status} {refused}").into());
    }
    let (status, _, _) = send(json_post("/agent", None, approve("x1"))?).await?;
    println!("no session: {status}");
    if status != StatusCode::UNAUTHORIZED {
        return Err(format!("a request without a session got {status}").into());
    }

    let (status, done, _) = send(json_post("/agent", Some(&alice), approve("r2"))?).await?;
    println!("alice approves: {status} {}", done["result"]["text"]);
    let paid = PAID
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    println!("payments: {paid:?}");
    if paid != ["INV-7 by alice"] {
        return Err(format!("expected one payment by alice, got {paid:?}").into());
    }
    Ok(())
}
