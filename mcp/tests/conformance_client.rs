//! MCP's official conformance suite (`@modelcontextprotocol/conformance`, pinned by `.ci/run`)
//! against hookchain-mcp's client, at each revision it claims (2025-11-25 and 2026-07-28).
//!
//! Without the libtest harness (`harness = false`): the suite starts this very binary as the
//! client under test, once per scenario — the scenario in `MCP_CONFORMANCE_SCENARIO`, the
//! revision in `MCP_CONFORMANCE_PROTOCOL_VERSION`, its data in `MCP_CONFORMANCE_CONTEXT`, the
//! server's URL as the last argument — and the binary does what the scenario asks, through the
//! public API an application uses (`McpToolset`, an agent's `call_tool`). Run as a test, it
//! runs the suite (`$MCP_CONFORMANCE`, a command, or where `.ci/run` installs it) with the
//! baseline of accepted failures `conformance/client-baseline.yml`: each entry has its reason,
//! and an entry that starts passing fails the run, as an unexpected failure does.

mod support;

use std::process::Command;

use hookchain::prelude::*;
use hookchain_mcp::elicitation::accept_defaults;
use hookchain_mcp::oauth::{
    AuthorizationCallback, AuthorizationPrompt, ClientKey, EnterpriseIdp, McpOAuth,
};
use hookchain_mcp::{McpProtocol, McpServer, McpToolset};
use serde_json::{Value, json};

fn main() {
    if let Ok(scenario) = std::env::var("MCP_CONFORMANCE_SCENARIO") {
        let url = std::env::args()
            .next_back()
            .expect("the server's URL, last");
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(client(&scenario, &url));
        return;
    }
    let Some(conformance) = support::conformance::suite() else {
        return;
    };
    let baseline = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/conformance/client-baseline.yml"
    );
    let exe = std::env::current_exe().unwrap();
    let mut failed = Vec::new();
    for revision in support::conformance::REVISIONS {
        let output = Command::new(&conformance)
            .args(["client", "--requirements", revision, "--command"])
            .arg(&exe)
            .args(["--expected-failures", baseline])
            .output()
            .expect("the conformance suite runs");
        if !support::conformance::passed("client", revision, &output) {
            failed.push(revision);
        }
    }
    assert!(
        failed.is_empty(),
        "the conformance suite failed at {failed:?}"
    );
}

/// What the client does in `scenario`: connect (the handshake or `server/discover`, as the
/// revision says; the tools listed), then call the tools the scenario looks at.
async fn client(scenario: &str, url: &str) {
    let protocol = match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").as_deref() {
        Ok("2026-07-28") => McpProtocol::V2026_07_28,
        _ => McpProtocol::V2025_11_25,
    };
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|context| serde_json::from_str(&context).ok())
        .unwrap_or(Value::Null);
    let mut server = McpServer::http("conformance", url)
        .protocol(protocol)
        .on_elicitation(accept_defaults);
    if scenario.starts_with("auth/") {
        server = server.oauth(oauth(scenario, &context));
    }
    let toolset = match McpToolset::connect([server]).await {
        Ok(toolset) => toolset,
        Err(error) => {
            let mut chain = error.to_string();
            let mut source = std::error::Error::source(&error);
            while let Some(cause) = source {
                chain.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            eprintln!("connect: {chain}");
            std::process::exit(1);
        }
    };
    let agent = Agent::builder(ScriptedModel::new([]))
        .tools(toolset.registry())
        .build()
        .unwrap();
    for (tool, arguments) in calls(scenario, &context, &toolset) {
        let Some(name) = toolset
            .tools()
            .iter()
            .find(|offered| offered.original_name() == tool)
            .map(|offered| offered.name().to_owned())
        else {
            eprintln!("{scenario}: the server offers no `{tool}`");
            continue;
        };
        match agent
            .call_tool(ToolCall::new(format!("call-{tool}"), name, arguments))
            .await
        {
            Ok(result) => eprintln!("{tool}: {}", result.content.text()),
            Err(error) => eprintln!("{tool}: {error}"),
        }
    }
    toolset.close().await;
}

/// OAuth as the suite's reference client does it: its authorization server approves at once,
/// so the authorization URL is fetched without following the redirect, and the redirect is
/// the answer (the redirect URI is never served). The client-id metadata document's URL is
/// the reference client's (the suite never fetches it); pre-registered credentials come in
/// the scenario's context. The client-credentials scenarios are a client with no person
/// behind it: its id and secret (or its private key, `private_key_jwt`), in the context, get
/// the token (SEP-1046); so are the workload
/// of workload identity federation, whose JWT, in the context, gets the token (RFC 7523), and
/// the enterprise-managed client, whose person's ID token the IdP exchanges (SEP-990).
fn oauth(scenario: &str, context: &Value) -> McpOAuth {
    if scenario.starts_with("auth/client-credentials")
        && let (Some(id), Some(algorithm), Some(pem)) = (
            context["client_id"].as_str(),
            context["signing_algorithm"].as_str(),
            context["private_key_pem"].as_str(),
        )
    {
        let key = ClientKey::from_pkcs8_pem(algorithm, pem).expect("the scenario's key");
        return McpOAuth::client_credentials_jwt(id, key);
    }
    if scenario.starts_with("auth/client-credentials")
        && let (Some(id), Some(secret)) = (
            context["client_id"].as_str(),
            context["client_secret"].as_str(),
        )
    {
        return McpOAuth::client_credentials(id, secret);
    }
    // Workload identity federation: the workload's JWT (the valid one the context gives), its
    // client id (the authorization server takes no secret).
    if scenario == "auth/wif-jwt-bearer"
        && let Some(jwt) = context["valid_jwt"].as_str()
    {
        let jwt = jwt.to_owned();
        let mut oauth = McpOAuth::jwt_bearer(move || {
            let jwt = jwt.clone();
            async move { Ok::<_, std::convert::Infallible>(jwt) }
        });
        if let Some(id) = context["client_id"].as_str() {
            oauth = oauth.client(id, None);
        }
        return oauth;
    }
    // Enterprise-managed authorization: the person's ID token, exchanged at the IdP the
    // context names, and the client's id and secret at the MCP server's authorization server.
    if scenario == "auth/enterprise-managed-authorization"
        && let (Some(id_token), Some(endpoint), Some(idp_client)) = (
            context["idp_id_token"].as_str(),
            context["idp_token_endpoint"].as_str(),
            context["idp_client_id"].as_str(),
        )
    {
        let id_token = id_token.to_owned();
        let oauth =
            McpOAuth::enterprise_managed(EnterpriseIdp::new(endpoint, idp_client), move || {
                let id_token = id_token.clone();
                async move { Ok::<_, std::convert::Infallible>(id_token) }
            });
        return match context["client_id"].as_str() {
            Some(id) => oauth.client(id, context["client_secret"].as_str().map(str::to_owned)),
            None => oauth,
        };
    }
    let mut oauth = McpOAuth::new("http://localhost:3000/callback")
        .client_name("hookchain conformance client")
        .client_metadata_url("https://conformance-test.local/client-metadata.json")
        .on_authorize(follow_authorization);
    if let Some(id) = context["client_id"].as_str() {
        let secret = context["client_secret"].as_str().map(str::to_owned);
        oauth = oauth.client(id, secret);
    }
    oauth
}

async fn follow_authorization(
    prompt: AuthorizationPrompt,
) -> Result<AuthorizationCallback, Box<dyn std::error::Error + Send + Sync>> {
    // reqwest is built without a TLS provider of its own (as hookchain-mcp builds it).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let response = client.get(&prompt.url).send().await?;
    let location = response
        .headers()
        .get(reqwest::header::LOCATION)
        .ok_or("the authorization server did not redirect")?
        .to_str()?;
    Ok(AuthorizationCallback::from_redirect_url(location)?)
}

/// The calls a scenario looks at: the server's tool name and its arguments.
fn calls(scenario: &str, context: &Value, toolset: &McpToolset) -> Vec<(String, Value)> {
    let call = |tool: &str, arguments: Value| (tool.to_owned(), arguments);
    match scenario {
        "tools_call" => vec![call("add_numbers", json!({"a": 2, "b": 3}))],
        "elicitation-sep1034-client-defaults" => {
            vec![call("test_client_elicitation_defaults", json!({}))]
        }
        "sse-retry" => vec![call("test_reconnection", json!({}))],
        "sep-2322-client-request-state" => [
            "test_mrtr_echo_state",
            "test_mrtr_no_state",
            "test_mrtr_unrelated",
            "test_mrtr_no_result_type",
        ]
        .into_iter()
        .map(|tool| call(tool, json!({})))
        .collect(),
        "http-standard-headers" => vec![
            call("test_headers", json!({})),
            call("my-hyphenated-tool", json!({})),
        ],
        "http-custom-headers" => context["toolCalls"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|listed| Some(call(listed["name"].as_str()?, listed["arguments"].clone())))
            .collect(),
        "http-invalid-tool-headers" => vec![call("valid_tool", json!({"region": "us-west-2"}))],
        // The tool of every OAuth scenario's server (a call of it is where step-up is asked).
        scenario if scenario.starts_with("auth/") => vec![call("test-tool", json!({}))],
        // The schema as the client received it, echoed.
        "json-schema-2020-12-preservation" => toolset
            .tools()
            .iter()
            .find(|tool| tool.original_name() == "json_schema_2020_12_tool")
            .map(|tool| {
                let schema = hookchain::Tool::spec(tool).parameters;
                vec![call("json_schema_echo", json!({ "schema": schema }))]
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}
