//! One hookchain agent using another's tool over MCP, the tool gated by an approval in the
//! serving agent: the approval reaches the calling agent's user as an elicitation, pauses the
//! calling run (durably), and the run's resume with the answer has the tool run once — under
//! 2026-07-28 as an input-required round trip (the served call kept by `ServedPauses`), under
//! 2025-11-25 asked in the call's session.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::interrupt::InMemoryCheckpointer;
use hookchain::message::Role;
use hookchain::prelude::*;
use hookchain::{chain, tool};
use hookchain_mcp::elicitation::{Elicitation, ElicitationAnswer};
use hookchain_mcp::{
    McpProtocol, McpServer, McpToolServer, McpToolset, RequestStateCodec, ServedPauses,
};
use serde_json::json;
use tokio::sync::oneshot;

/// How many charges the serving agent's tool made.
static CHARGES: AtomicUsize = AtomicUsize::new(0);

/// Charges the card on file.
#[tool]
async fn charge(cents: u64) -> String {
    CHARGES.fetch_add(1, Ordering::SeqCst);
    format!("charged {cents}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_approval_pauses_the_calling_run_and_its_answer_runs_the_tool_once() {
    // The serving agent: its `charge` needs an approval.
    let approval = HumanInTheLoop::new().interrupt_on("charge", ToolPolicy::always());
    let served = Agent::builder(ScriptedModel::new([]))
        .tool(charge)
        .chain(chain![approval])
        .build()
        .unwrap();
    let codec = RequestStateCodec::new_with_keyring("k", [("k", [3u8; 32])]).unwrap();
    let server = McpToolServer::new(Arc::new(served))
        .allow_anonymous()
        .pauses(ServedPauses::new(InMemoryCheckpointer::new(), codec));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (stop, stopped) = oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve_http(listener, async {
        let _ = stopped.await;
    }));

    for (round, protocol) in [McpProtocol::Negotiate, McpProtocol::V2025_11_25]
        .into_iter()
        .enumerate()
    {
        let toolset = McpToolset::connect([McpServer::http("shop", &url).protocol(protocol)])
            .await
            .unwrap();
        let name = toolset.registry().specs()[0].name.clone();
        let model = ScriptedModel::new([
            ModelResponse::tool_calls([ToolCall::new("c1", &name, json!({ "cents": 250 }))]),
            ModelResponse::text("paid"),
        ]);
        let agent = Agent::builder(model)
            .tools(toolset.registry())
            .build()
            .unwrap();
        let first = agent.run("Pay the invoice.").await.unwrap();
        assert_eq!(
            CHARGES.load(Ordering::SeqCst),
            round,
            "{protocol:?}: charged unasked"
        );
        let interrupt = first.interrupts()[0].clone();
        let asked = Elicitation::from_interrupt(&interrupt).expect("the approval, asked");
        assert!(
            asked.message.contains("`charge`"),
            "{protocol:?}: {}",
            asked.message
        );
        let yes = asked.answer(ElicitationAnswer::accept(json!({ "approve": true })).unwrap());
        let done = agent
            .resume(first.checkpoint.clone().unwrap(), [(interrupt.id, yes)])
            .await
            .unwrap();
        assert_eq!(
            CHARGES.load(Ordering::SeqCst),
            round + 1,
            "{protocol:?}: charged once"
        );
        let result = done
            .messages
            .iter()
            .find(|message| message.role == Role::Tool)
            .expect("the tool's result");
        assert_eq!(result.text(), "charged 250", "{protocol:?}");
        toolset.close().await;
    }
    let _ = stop.send(());
    let _ = serving.await;
}
