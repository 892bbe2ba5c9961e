//! `TodoList`: the rules of DESIGN §11, one test each.

mod support;

use hookchain::agent::AgentBuildError;
use hookchain::builtin::TodoList;
use hookchain::builtin::todo_list::{Todo, TodoStatus, WRITE_TODOS};
use hookchain::message::validate_history;
use hookchain::prelude::*;
use serde_json::json;
use support::{echo_call, echo_tool, new_log, tool_results};

fn write(id: &str, todos: serde_json::Value) -> ToolCall {
    ToolCall::new(id, WRITE_TODOS, json!({ "todos": todos }))
}

fn plan() -> serde_json::Value {
    json!([
        { "content": "Read", "status": "completed" },
        { "content": "Write", "status": "in_progress" },
    ])
}

#[tokio::test]
async fn the_tool_and_the_prompt_piece_are_contributed() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .system_prompt("Be brief.")
        .chain(TodoList::new())
        .build()
        .unwrap();
    let spec = agent
        .tools()
        .spec(WRITE_TODOS)
        .expect("write_todos is a tool");
    assert!(
        spec.parameters["properties"]["todos"].is_object(),
        "{}",
        spec.parameters
    );
    let prompt = agent.system_prompt().unwrap();
    assert!(
        prompt.starts_with("Be brief.\n\n## `write_todos`"),
        "{prompt}"
    );
    let description = agent.chain().describe();
    assert_eq!(description.tools(), [WRITE_TODOS]);
    assert!(
        description
            .to_string()
            .contains("tool: write_todos (TodoList)")
    );
}

#[tokio::test]
async fn the_model_reads_the_prompt_piece_and_the_tool() {
    let model = ScriptedModel::new([ModelResponse::text("ok")]);
    let agent = Agent::builder(model)
        .chain(TodoList::new())
        .build()
        .unwrap();
    agent.run("Hi").await.unwrap();
    let request = &agent.model().requests()[0];
    assert!(
        request
            .system_prompt
            .as_deref()
            .unwrap()
            .contains("write_todos")
    );
    assert!(request.tools.iter().any(|tool| tool.name == WRITE_TODOS));
}

#[tokio::test]
async fn the_list_is_kept_in_thread_state_across_runs() {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([write("t1", plan())]),
        ModelResponse::text("first"),
        ModelResponse::text("second"),
    ]);
    let agent = Agent::builder(model)
        .chain(TodoList::new())
        .build()
        .unwrap();
    let mut thread = agent.thread();
    let output = agent.run_in(&mut thread, "Plan").await.unwrap();
    assert_eq!(
        tool_results(&output.messages)[0].1,
        "Updated the todo list: 2 todos (0 pending, 1 in progress, 1 completed)."
    );
    agent.run_in(&mut thread, "Go on").await.unwrap();
    assert_eq!(
        thread.state().todos(),
        [
            Todo::new("Read", TodoStatus::Completed),
            Todo::new("Write", TodoStatus::InProgress)
        ]
    );
}

#[tokio::test]
async fn parallel_write_todos_calls_get_error_results_and_the_list_stays() {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([write("t1", plan())]),
        ModelResponse::tool_calls([
            write("t2", json!([])),
            echo_call("e1", "hi"),
            write("t3", json!([{ "content": "X", "status": "pending" }])),
        ]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(echo_tool(&new_log()))
        .chain(TodoList::new())
        .build()
        .unwrap();
    let mut thread = agent.thread();
    let output = agent.run_in(&mut thread, "Plan").await.unwrap();
    let results = tool_results(&output.messages);
    let (t2, e1, t3) = (&results[1], &results[2], &results[3]);
    assert!(t2.2 && t2.1.contains("called 2 times"), "{t2:?}");
    assert!(t3.2 && t3.1.contains("called 2 times"), "{t3:?}");
    assert_eq!((e1.1.as_str(), e1.2), ("hi", false), "the other call runs");
    assert_eq!(thread.state().todos().len(), 2, "the first list is kept");
    validate_history(&output.messages).unwrap();
}

#[tokio::test]
async fn bad_arguments_get_the_tools_error_and_the_list_stays() {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([write("t1", plan())]),
        ModelResponse::tool_calls([write("t2", json!([{ "content": "X", "status": "maybe" }]))]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .chain(TodoList::new())
        .build()
        .unwrap();
    let mut thread = agent.thread();
    let output = agent.run_in(&mut thread, "Plan").await.unwrap();
    assert!(tool_results(&output.messages)[1].2, "an error result");
    assert_eq!(thread.state().todos().len(), 2);
}

#[test]
fn a_tool_of_the_agent_named_write_todos_is_an_error_at_build() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .tool(hookchain::FnTool::new(
            WRITE_TODOS,
            "Mine.",
            |_: support::TextArgs| async { Ok::<_, std::convert::Infallible>("mine") },
        ))
        .chain(TodoList::new())
        .build();
    assert_eq!(
        agent.unwrap_err(),
        AgentBuildError::ToolTaken {
            tool: WRITE_TODOS.into(),
            middleware: "TodoList"
        }
    );
}

#[test]
fn two_todo_lists_are_an_error_at_build() {
    let error = Agent::builder(ScriptedModel::new([]))
        .chain((TodoList::new(), TodoList::new()))
        .build()
        .unwrap_err();
    assert_eq!(
        error,
        AgentBuildError::ToolContributedTwice {
            tool: WRITE_TODOS.into(),
            first: "TodoList",
            second: "TodoList"
        }
    );
}

#[test]
fn the_builder_names_an_empty_setting() {
    let field = |b: hookchain::builtin::todo_list::TodoListBuilder| b.build().unwrap_err().field();
    assert_eq!(
        field(TodoList::builder().system_prompt(" ")),
        "system_prompt"
    );
    assert_eq!(
        field(TodoList::builder().tool_description("")),
        "tool_description"
    );
    let custom = TodoList::builder()
        .system_prompt("Plan with write_todos.")
        .build()
        .unwrap();
    let agent = Agent::builder(ScriptedModel::new([]))
        .chain(custom)
        .build()
        .unwrap();
    assert_eq!(agent.system_prompt(), Some("Plan with write_todos."));
}
