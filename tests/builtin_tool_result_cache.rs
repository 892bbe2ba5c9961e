//! `ToolResultCache`: the rules of DESIGN §11, one test each, on tokio's paused clock.
#![cfg(feature = "tokio")]

mod support;

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookchain::builtin::ToolResultCache;
use hookchain::builtin::tool_result_cache::{CacheScope, CacheStore, InMemoryCache};
use hookchain::message::validate_history;
use hookchain::prelude::*;
use hookchain::{
    Content, EndReason, FnTool, Principal, Role, RunContext, RunOutput, Thread, Tool, ToolError,
    ToolSpec, chain, hook,
};
use serde_json::{Value, json};
use support::counting_tool;

const TTL: Duration = Duration::from_secs(60);

fn search(id: &str, arguments: Value) -> ToolCall {
    ToolCall::new(id, "search", arguments)
}

/// A model that makes `calls`, one per answer, then says "done".
fn model(calls: Vec<ToolCall>) -> ScriptedModel {
    let mut responses: Vec<ModelResponse> = calls
        .into_iter()
        .map(|call| ModelResponse::tool_calls([call]))
        .collect();
    responses.push(ModelResponse::text("done"));
    ScriptedModel::new(responses)
}

/// A `search` tool that counts its runs and answers with the count, so that a result tells
/// which run made it.
fn numbered_search(runs: &Arc<AtomicUsize>) -> impl Tool {
    let runs = runs.clone();
    FnTool::new("search", "Searches.", move |_: Value| {
        let n = runs.fetch_add(1, Ordering::SeqCst) + 1;
        async move { Ok::<_, Infallible>(format!("result {n}")) }
    })
}

/// The results' texts, in order.
fn results(output: &RunOutput) -> Vec<String> {
    output
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.text().into_owned())
        .collect()
}

fn cache() -> ToolResultCache {
    ToolResultCache::builder()
        .tool("search", TTL)
        .build()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_hit_does_not_run_the_tool() {
    let runs = Arc::new(AtomicUsize::new(0));
    let q = json!({ "q": "rust" });
    let agent = Agent::builder(model(vec![search("a", q.clone()), search("b", q)]))
        .tool(numbered_search(&runs))
        .chain(cache())
        .build()
        .unwrap();
    let output = agent.run("go").await.unwrap();
    validate_history(&output.messages).unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(results(&output), ["result 1", "result 1"]);
}

#[tokio::test(start_paused = true)]
async fn the_key_is_the_tool_and_its_canonical_arguments() {
    let runs = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder(model(vec![
        search("a", json!({ "q": "rust", "page": 1 })),
        // The same arguments, in another order: a hit.
        search("b", json!({ "page": 1, "q": "rust" })),
        // Other arguments: a miss.
        search("c", json!({ "q": "rust", "page": 2 })),
    ]))
    .tool(numbered_search(&runs))
    .chain(cache())
    .build()
    .unwrap();
    let output = agent.run("go").await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert_eq!(results(&output), ["result 1", "result 1", "result 2"]);
}

#[tokio::test(start_paused = true)]
async fn the_in_memory_store_keeps_a_result_for_its_ttl_on_tokios_clock() {
    let store = InMemoryCache::new();
    store.put("k".into(), "v".into(), TTL).await;
    tokio::time::advance(TTL - Duration::from_millis(1)).await;
    assert_eq!(store.get("k").await, Some("v".into()));
    tokio::time::advance(Duration::from_millis(1)).await;
    assert_eq!(store.get("k").await, None);
    assert!(store.is_empty(), "an expired entry is dropped when read");
}

/// Sleeps `TTL` before every model call: the clock moves between the tool calls of a run.
#[hook(before_model)]
async fn a_minute_passes() {
    tokio::time::sleep(TTL).await;
}

#[tokio::test(start_paused = true)]
async fn a_call_after_the_ttl_runs_the_tool_again() {
    let runs = Arc::new(AtomicUsize::new(0));
    let q = json!({ "q": "rust" });
    let cache = ToolResultCache::builder()
        .tool("search", TTL + TTL / 2)
        .build()
        .unwrap();
    let agent = Agent::builder(model(vec![
        search("a", q.clone()),
        search("b", q.clone()),
        search("c", q),
    ]))
    .tool(numbered_search(&runs))
    .chain(chain![a_minute_passes, cache])
    .build()
    .unwrap();
    let output = agent.run("go").await.unwrap();
    // a at t=1min (runs, kept until 2.5min), b at 2min (hit), c at 3min (expired: runs).
    assert_eq!(results(&output), ["result 1", "result 1", "result 2"]);
}

#[tokio::test(start_paused = true)]
async fn only_the_tools_opted_in_are_cached() {
    let searches = Arc::new(AtomicUsize::new(0));
    let echoes = Arc::new(AtomicUsize::new(0));
    let echo = |id: &str| ToolCall::new(id, "echo", json!({ "text": "x" }));
    let agent = Agent::builder(model(vec![echo("a"), echo("b")]))
        .tool(numbered_search(&searches))
        .tool(counting_tool("echo", &echoes))
        .chain(cache())
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    assert_eq!(echoes.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn error_results_are_never_cached() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    // Fails the first time, succeeds after.
    let flaky = FnTool::new("search", "Searches.", move |_: Value| {
        let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            if n == 1 {
                Err(ToolError::for_model("search", "try again"))
            } else {
                Ok(format!("result {n}"))
            }
        }
    });
    let q = json!({ "q": "rust" });
    let agent = Agent::builder(model(vec![
        search("a", q.clone()),
        search("b", q.clone()),
        search("c", q),
    ]))
    .tool(flaky)
    .chain(cache())
    .build()
    .unwrap();
    let output = agent.run("go").await.unwrap();
    assert_eq!(results(&output), ["try again", "result 2", "result 2"]);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

/// A store that records what is put in it.
#[derive(Debug, Default, Clone)]
struct Recording {
    puts: Arc<Mutex<Vec<(String, Content)>>>,
}

impl CacheStore for Recording {
    async fn get(&self, _key: &str) -> Option<Content> {
        None
    }

    async fn put(&self, key: String, content: Content, _ttl: Duration) {
        self.puts.lock().unwrap().push((key, content));
    }
}

/// Pauses the run at the first `search` call; on the resume, lets it run.
#[hook(wrap_tool_call)]
async fn ask_first(
    cx: ToolContext<'_>,
    call: ToolCall,
    mut next: impl ToolNext,
) -> Result<ToolResult, Error> {
    if cx.resume_value().is_none() {
        return Err(Error::interrupt(json!({ "allow": call.name })));
    }
    Ok(next.call(cx, call).await)
}

#[tokio::test(start_paused = true)]
async fn a_paused_call_is_never_cached_and_a_custom_store_keeps_the_rest() {
    let runs = Arc::new(AtomicUsize::new(0));
    let store = Recording::default();
    let cache = ToolResultCache::builder()
        .tool("search", TTL)
        .store(store.clone())
        .build()
        .unwrap();
    let agent = Agent::builder(model(vec![search("a", json!({ "q": "rust" }))]))
        .tool(numbered_search(&runs))
        .chain(chain![cache, ask_first])
        .build()
        .unwrap();
    let paused = agent.run("go").await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    assert!(
        store.puts.lock().unwrap().is_empty(),
        "a paused call was cached"
    );

    let id = paused.interrupts()[0].id.clone();
    let checkpoint = paused.checkpoint.unwrap();
    let output = agent.resume(checkpoint, [(id, json!(true))]).await.unwrap();
    validate_history(&output.messages).unwrap();
    // One run, paused and resumed: one scope, `run:<len>:<run id>`.
    let puts = store.puts.lock().unwrap().clone();
    assert_eq!(puts.len(), 1);
    let (key, content) = &puts[0];
    assert_eq!(content, "result 1");
    assert!(key.starts_with("run:32:"), "{key:?}");
    assert!(key.ends_with("\0search\0{\"q\":\"rust\"}"), "{key:?}");
}

#[test]
fn settings_that_cannot_work_are_errors_naming_the_field() {
    assert_eq!(
        ToolResultCache::builder().build().unwrap_err().field(),
        "tool"
    );
    let empty = ToolResultCache::builder()
        .tool("", TTL)
        .build()
        .unwrap_err();
    assert_eq!(empty.field(), "tool");
    let zero = ToolResultCache::builder()
        .tool("search", Duration::ZERO)
        .build()
        .unwrap_err();
    assert_eq!(zero.field(), "ttl");
}

/// Who a run is for, given in its run context.
struct Tenant(&'static str);

/// An `account` tool that answers with the balance of the run's tenant: the same arguments
/// mean another result for another tenant.
struct Account {
    runs: Arc<AtomicUsize>,
}

impl Tool for Account {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "account",
            "The balance of the caller's account.",
            json!({ "type": "object" }),
        )
    }

    async fn call(&self, cx: ToolContext<'_>, _arguments: Value) -> Result<Content, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        let tenant = cx.get::<Tenant>().map_or("nobody", |tenant| tenant.0);
        Ok(format!("balance of {tenant}").into())
    }
}

fn account_call(id: &str) -> ToolCall {
    ToolCall::new(id, "account", json!({}))
}

/// Runs `agent` once for `tenant`, in `thread` if given; the results its calls got.
async fn balance<C: Middleware>(
    agent: &Agent<ScriptedModel, C>,
    tenant: &'static str,
    thread: Option<&mut Thread<C::ThreadState>>,
) -> Vec<String> {
    let with = agent.with_context(RunContext::new().with(Tenant(tenant)));
    let output = match thread {
        Some(thread) => with.run_in(thread, "balance?").await,
        None => with.run("balance?").await,
    };
    results(&output.unwrap())
}

/// A model whose every run calls `account` twice.
fn account_model(runs: usize) -> ScriptedModel {
    ScriptedModel::new((0..runs).flat_map(|n| {
        [
            ModelResponse::tool_calls([account_call(&format!("a{n}"))]),
            ModelResponse::tool_calls([account_call(&format!("b{n}"))]),
            ModelResponse::text("done"),
        ]
    }))
}

fn account_cache() -> hookchain::builtin::tool_result_cache::ToolResultCacheBuilder {
    ToolResultCache::builder().tool("account", TTL)
}

#[tokio::test(start_paused = true)]
async fn by_default_a_result_is_served_again_only_in_its_thread() {
    let runs = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder(account_model(5))
        .tool(Account { runs: runs.clone() })
        .chain(account_cache().build().unwrap())
        .build()
        .unwrap();
    // Two runs outside a thread, for two tenants: each its own scope.
    let acme = balance(&agent, "acme", None).await;
    let globex = balance(&agent, "globex", None).await;
    assert_eq!(acme, ["balance of acme", "balance of acme"]);
    assert_eq!(globex, ["balance of globex", "balance of globex"]);
    assert_eq!(
        runs.load(Ordering::SeqCst),
        2,
        "one run of the tool per run"
    );

    // The runs of a thread share results; another thread does not see them.
    let mut thread = agent.thread();
    let mut other = agent.thread();
    balance(&agent, "acme", Some(&mut thread)).await;
    assert_eq!(
        balance(&agent, "globex", Some(&mut other)).await,
        ["balance of globex", "balance of globex"]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 4);
    balance(&agent, "acme", Some(&mut thread)).await;
    assert_eq!(
        runs.load(Ordering::SeqCst),
        4,
        "the thread's next run is served"
    );
}

#[tokio::test(start_paused = true)]
async fn a_scope_key_from_the_run_context_shares_results_within_a_tenant_only() {
    let runs = Arc::new(AtomicUsize::new(0));
    let by_tenant = CacheScope::by(|cx| cx.get::<Tenant>().map(|tenant| tenant.0.to_owned()));
    let agent = Agent::builder(account_model(3))
        .tool(Account { runs: runs.clone() })
        .chain(account_cache().scope(by_tenant).build().unwrap())
        .build()
        .unwrap();
    assert_eq!(
        balance(&agent, "acme", None).await,
        ["balance of acme", "balance of acme"]
    );
    assert_eq!(
        balance(&agent, "acme", None).await,
        ["balance of acme", "balance of acme"]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1, "acme's runs share results");
    assert_eq!(
        balance(&agent, "globex", None).await,
        ["balance of globex", "balance of globex"]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);

    // A run without the key caches nothing.
    let runs = Arc::new(AtomicUsize::new(0));
    let by_tenant = CacheScope::by(|cx| cx.get::<Tenant>().map(|tenant| tenant.0.to_owned()));
    let agent = Agent::builder(model(vec![account_call("a"), account_call("b")]))
        .tool(Account { runs: runs.clone() })
        .chain(account_cache().scope(by_tenant).build().unwrap())
        .build()
        .unwrap();
    agent.run("balance?").await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn a_shared_scope_serves_every_run_and_an_arc_store_is_shared() {
    let runs = Arc::new(AtomicUsize::new(0));
    let store = Arc::new(InMemoryCache::with_capacity(10));
    let cache = || {
        ToolResultCache::builder()
            .tool("search", TTL)
            .scope(CacheScope::Shared)
            .store(Arc::clone(&store))
            .build()
            .unwrap()
    };
    let q = json!({ "q": "rust" });
    let first = Agent::builder(model(vec![search("a", q.clone())]))
        .tool(numbered_search(&runs))
        .chain(cache())
        .build()
        .unwrap();
    let second = Agent::builder(model(vec![search("b", q)]))
        .tool(numbered_search(&runs))
        .chain(cache())
        .build()
        .unwrap();
    assert_eq!(results(&first.run("go").await.unwrap()), ["result 1"]);
    assert_eq!(results(&second.run("go").await.unwrap()), ["result 1"]);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(store.len(), 1);
    assert_eq!(
        store.get("shared\0search\0{\"q\":\"rust\"}").await,
        Some("result 1".into())
    );
}

#[tokio::test(start_paused = true)]
async fn the_in_memory_store_is_bounded_and_evicts_the_least_recently_used() {
    assert_eq!(InMemoryCache::new().capacity(), 1024);
    let store = InMemoryCache::with_capacity(2);
    store.put("a".into(), "1".into(), TTL).await;
    store.put("b".into(), "2".into(), TTL).await;
    assert_eq!(store.get("a").await, Some("1".into()));
    store.put("c".into(), "3".into(), TTL).await;
    assert_eq!(store.len(), 2);
    assert_eq!(store.get("b").await, None, "the least recently used went");
    assert_eq!(store.get("a").await, Some("1".into()));
}

/// A `profile` tool that answers with the run's principal (`id@tenant`) and counts its runs:
/// the same arguments mean another result for another principal.
struct Profile {
    runs: Arc<AtomicUsize>,
}

impl Tool for Profile {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "profile",
            "The caller's profile.",
            json!({ "type": "object" }),
        )
    }

    async fn call(&self, cx: ToolContext<'_>, _arguments: Value) -> Result<Content, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        let who = cx.get::<Principal>().map_or("nobody".to_owned(), |who| {
            format!("{}@{}", who.id(), who.tenant().unwrap_or("-"))
        });
        Ok(format!("profile of {who}").into())
    }
}

/// An agent whose every one of `runs` runs calls `profile` twice, with the same arguments,
/// and whose cache has `scope`.
fn profile_agent(
    scope: CacheScope,
    runs: usize,
    tool_runs: &Arc<AtomicUsize>,
) -> Agent<ScriptedModel, ToolResultCache> {
    let model = ScriptedModel::new((0..runs).flat_map(|n| {
        [
            ModelResponse::tool_calls([ToolCall::new(format!("a{n}"), "profile", json!({}))]),
            ModelResponse::tool_calls([ToolCall::new(format!("b{n}"), "profile", json!({}))]),
            ModelResponse::text("done"),
        ]
    }));
    let cache = ToolResultCache::builder()
        .tool("profile", TTL)
        .scope(scope)
        .build()
        .unwrap();
    Agent::builder(model)
        .tool(Profile {
            runs: tool_runs.clone(),
        })
        .chain(cache)
        .build()
        .unwrap()
}

/// Runs `agent` once, outside a thread, for `principal` (none: no principal in the run's
/// context); the results its calls got.
async fn profile_for(
    agent: &Agent<ScriptedModel, ToolResultCache>,
    principal: Option<Principal>,
) -> Vec<String> {
    let context = match principal {
        Some(principal) => RunContext::new().with(principal),
        None => RunContext::new(),
    };
    results(&agent.with_context(context).run("profile?").await.unwrap())
}

#[tokio::test(start_paused = true)]
async fn a_principal_scope_serves_a_principal_its_own_results_only() {
    let runs = Arc::new(AtomicUsize::new(0));
    let agent = profile_agent(CacheScope::Principal, 4, &runs);
    let alice = || Some(Principal::new("alice"));
    // Alice's two calls: the second is served.
    assert_eq!(
        profile_for(&agent, alice()).await,
        ["profile of alice@-", "profile of alice@-"]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // Bob's calls, with the same arguments, do not see Alice's result.
    assert_eq!(
        profile_for(&agent, Some(Principal::new("bob"))).await,
        ["profile of bob@-", "profile of bob@-"]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    // Alice's next run (another run, outside any thread, with other claims) is served.
    let alice_again = Principal::new("alice").with_claim("role", "admin");
    assert_eq!(
        profile_for(&agent, Some(alice_again)).await,
        ["profile of alice@-", "profile of alice@-"]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2, "Alice's result served");
    // The anonymous principal is one principal, not the user whose id is `anonymous`.
    assert_eq!(
        profile_for(&agent, Some(Principal::anonymous())).await,
        ["profile of anonymous@-", "profile of anonymous@-"]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 3);
}

#[tokio::test(start_paused = true)]
async fn a_principal_scope_caches_nothing_for_a_run_without_a_principal() {
    let runs = Arc::new(AtomicUsize::new(0));
    let agent = profile_agent(CacheScope::Principal, 2, &runs);
    assert_eq!(
        profile_for(&agent, None).await,
        ["profile of nobody", "profile of nobody"]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2, "neither served...");
    profile_for(&agent, None).await;
    assert_eq!(runs.load(Ordering::SeqCst), 4, "...nor kept");
}

#[tokio::test(start_paused = true)]
async fn the_same_id_in_two_tenants_is_two_principals() {
    let runs = Arc::new(AtomicUsize::new(0));
    let agent = profile_agent(CacheScope::Principal, 3, &runs);
    let alice_of = |tenant: &str| Some(Principal::new("alice").with_tenant(tenant));
    assert_eq!(
        profile_for(&agent, alice_of("acme")).await,
        ["profile of alice@acme", "profile of alice@acme"]
    );
    assert_eq!(
        profile_for(&agent, alice_of("globex")).await,
        ["profile of alice@globex", "profile of alice@globex"]
    );
    // Nor is she, in no tenant, either of them.
    assert_eq!(
        profile_for(&agent, Some(Principal::new("alice"))).await,
        ["profile of alice@-", "profile of alice@-"]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 3);
}

#[tokio::test(start_paused = true)]
async fn a_tenant_scope_is_shared_by_the_principals_of_a_tenant_only() {
    let runs = Arc::new(AtomicUsize::new(0));
    let agent = profile_agent(CacheScope::Tenant, 5, &runs);
    let of_acme = |id: &str| Some(Principal::new(id).with_tenant("acme"));
    assert_eq!(
        profile_for(&agent, of_acme("alice")).await,
        ["profile of alice@acme", "profile of alice@acme"]
    );
    // Bob of acme is served Alice's result: the tool must not depend on more than the tenant.
    assert_eq!(
        profile_for(&agent, of_acme("bob")).await,
        ["profile of alice@acme", "profile of alice@acme"]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let of_globex = Some(Principal::new("alice").with_tenant("globex"));
    assert_eq!(
        profile_for(&agent, of_globex).await,
        ["profile of alice@globex", "profile of alice@globex"]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    // No tenant, or no principal: nothing cached.
    profile_for(&agent, Some(Principal::new("alice"))).await;
    assert_eq!(runs.load(Ordering::SeqCst), 4);
    profile_for(&agent, None).await;
    assert_eq!(runs.load(Ordering::SeqCst), 6);
}

#[tokio::test(start_paused = true)]
async fn principal_and_tenant_scopes_are_written_with_their_lengths() {
    let written = |scope: CacheScope, principal: Principal| async move {
        let store = Recording::default();
        let cache = ToolResultCache::builder()
            .tool("search", TTL)
            .scope(scope)
            .store(store.clone())
            .build()
            .unwrap();
        let runs = Arc::new(AtomicUsize::new(0));
        let agent = Agent::builder(model(vec![search("a", json!({ "q": "rust" }))]))
            .tool(numbered_search(&runs))
            .chain(cache)
            .build()
            .unwrap();
        agent
            .with_context(RunContext::new().with(principal))
            .run("go")
            .await
            .unwrap();
        let puts = store.puts.lock().unwrap().clone();
        assert_eq!(puts.len(), 1);
        puts[0].0.clone()
    };
    let alice = Principal::new("alice");
    let tail = "\0search\0{\"q\":\"rust\"}";
    assert_eq!(
        written(CacheScope::Principal, alice.clone().with_tenant("acme")).await,
        format!("principal:4:acme:5:alice{tail}")
    );
    assert_eq!(
        written(CacheScope::Principal, alice.clone()).await,
        format!("principal:-:5:alice{tail}")
    );
    assert_eq!(
        written(CacheScope::Principal, Principal::anonymous()).await,
        format!("principal:-:anonymous{tail}")
    );
    assert_eq!(
        written(CacheScope::Tenant, alice.with_tenant("acme")).await,
        format!("tenant:4:acme{tail}")
    );
}
