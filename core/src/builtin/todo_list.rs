//! A todo list the model keeps for itself: a `write_todos` tool and a system-prompt piece,
//! contributed by the middleware, and the list in thread-scoped state.
//!
//! ```
//! use hookchain::builtin::TodoList;
//! use hookchain::builtin::todo_list::{Todo, TodoStatus};
//! use hookchain::{Agent, ModelResponse, ScriptedModel, ToolCall};
//! # futures::executor::block_on(async {
//! let plan = serde_json::json!({ "todos": [
//!     { "content": "Read the report", "status": "in_progress" },
//!     { "content": "Write the summary", "status": "pending" },
//! ]});
//! let model = ScriptedModel::new([
//!     ModelResponse::tool_calls([ToolCall::new("t1", "write_todos", plan)]),
//!     ModelResponse::text("On it."),
//! ]);
//! let agent = Agent::builder(model).chain(TodoList::new()).build()?;
//! assert!(agent.system_prompt().unwrap().contains("write_todos"));
//! let mut thread = agent.thread();
//! agent.run_in(&mut thread, "Summarize the report").await.unwrap();
//! assert_eq!(thread.state().todos()[0], Todo::new("Read the report", TodoStatus::InProgress));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Rules
//!
//! - The middleware contributes the tool `write_todos` (arguments: the whole list, each todo a
//!   `content` and a `status`: `pending`, `in_progress` or `completed`) and a piece of the
//!   system prompt that tells the model when to use it. A tool of the agent already named
//!   `write_todos` is an error when the agent is built.
//! - Each call replaces the list; the list is thread-scoped state: it stays across the runs of
//!   a [`Thread`](crate::Thread) and is in its checkpoints ([`Todos`]).
//! - Two or more `write_todos` calls in one model answer (parallel calls) are all answered
//!   with an error result telling the model to call it once with the whole list; the list is
//!   left as it was. The other calls of that answer run.
//! - A call whose arguments are not a list of todos gets the tool's error result (bad
//!   arguments), and the list is left as it was.
//! - The list is taken from the model's answer (in `after_model`, where state can change; tool
//!   calls only read it): a `write_todos` call that another middleware blocks or a person
//!   rejects (human in the loop) has still replaced the list.

use serde::{Deserialize, Serialize};

use hookchain_macros::middleware;

use super::ConfigError;
use crate::context::Context;
use crate::message::ToolResult;
use crate::middleware::Contributions;
use crate::model::ModelResponse;
use crate::tool::FnTool;

/// The name of the tool [`TodoList`] contributes.
pub const WRITE_TODOS: &str = "write_todos";

/// The system-prompt piece [`TodoList`] contributes unless told otherwise.
pub const DEFAULT_SYSTEM_PROMPT: &str = "## `write_todos`\n\nYou have a `write_todos` tool to \
plan and track tasks of several steps. Use it for work of three steps or more: write the list \
first, mark a task `in_progress` before you start it and `completed` as soon as it is done, \
and keep one task in progress at a time. Each call replaces the whole list. Call it at most \
once per answer. Skip it for simple requests.";

/// The description of `write_todos` the model reads unless told otherwise.
pub const DEFAULT_TOOL_DESCRIPTION: &str = "Writes your todo list: the whole list, which \
replaces the previous one. Each todo has a `content` and a `status` (`pending`, \
`in_progress`, `completed`).";

/// Keeps the model's todo list (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TodoList {
    system_prompt: String,
    tool_description: String,
}

/// Builds a [`TodoList`]; [`build`](Self::build) checks the settings.
#[derive(Debug, Clone)]
#[must_use]
pub struct TodoListBuilder {
    system_prompt: String,
    tool_description: String,
}

/// Where a todo stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// One task of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Todo {
    /// What is to be done.
    pub content: String,
    /// Where it stands.
    pub status: TodoStatus,
}

impl Todo {
    /// A todo.
    pub fn new(content: impl Into<String>, status: TodoStatus) -> Self {
        Self {
            content: content.into(),
            status,
        }
    }
}

/// The arguments of `write_todos`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
struct WriteTodos {
    /// The whole todo list, in order; it replaces the previous one.
    todos: Vec<Todo>,
}

/// The todo list (thread-scoped state of [`TodoList`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Todos {
    todos: Vec<Todo>,
}

impl Todos {
    /// The todos, in the model's order.
    #[must_use]
    pub fn todos(&self) -> &[Todo] {
        &self.todos
    }
}

impl TodoList {
    /// A todo list with the default system-prompt piece and tool description.
    #[must_use]
    pub fn new() -> Self {
        Self {
            system_prompt: DEFAULT_SYSTEM_PROMPT.to_owned(),
            tool_description: DEFAULT_TOOL_DESCRIPTION.to_owned(),
        }
    }

    /// A builder, to change the system-prompt piece or the tool's description.
    pub fn builder() -> TodoListBuilder {
        TodoListBuilder {
            system_prompt: DEFAULT_SYSTEM_PROMPT.to_owned(),
            tool_description: DEFAULT_TOOL_DESCRIPTION.to_owned(),
        }
    }
}

impl Default for TodoList {
    fn default() -> Self {
        Self::new()
    }
}

impl TodoListBuilder {
    /// The piece of the system prompt that tells the model about the list.
    pub fn system_prompt(mut self, piece: impl Into<String>) -> Self {
        self.system_prompt = piece.into();
        self
    }

    /// The description of `write_todos` the model reads.
    pub fn tool_description(mut self, description: impl Into<String>) -> Self {
        self.tool_description = description.into();
        self
    }

    /// The middleware; an error names an empty `system_prompt` or `tool_description` (the
    /// model would not know what the tool is for).
    pub fn build(self) -> Result<TodoList, ConfigError> {
        ConfigError::require_text("system_prompt", &self.system_prompt)?;
        ConfigError::require_text("tool_description", &self.tool_description)?;
        Ok(TodoList {
            system_prompt: self.system_prompt,
            tool_description: self.tool_description,
        })
    }
}

#[middleware(crate = crate, live_stream, thread_state = Todos)]
impl TodoList {
    /// The tool and the system-prompt piece.
    #[contribute]
    fn contribute(&self, to: &mut Contributions) {
        let tool = FnTool::new(
            WRITE_TODOS,
            self.tool_description.clone(),
            |args: WriteTodos| async move {
                let count = |status| args.todos.iter().filter(|t| t.status == status).count();
                Ok::<_, std::convert::Infallible>(format!(
                    "Updated the todo list: {} todos ({} pending, {} in progress, {} completed).",
                    args.todos.len(),
                    count(TodoStatus::Pending),
                    count(TodoStatus::InProgress),
                    count(TodoStatus::Completed),
                ))
            },
        );
        to.tool(tool).system_prompt(self.system_prompt.clone());
    }

    /// Keeps the list of the answer's one `write_todos` call; refuses parallel calls.
    #[hook(after_model)]
    fn keep(&self, cx: &mut Context, list: &mut Todos, response: &mut ModelResponse) {
        let calls: Vec<_> = response
            .message
            .tool_calls
            .iter()
            .filter(|call| call.name == WRITE_TODOS)
            .collect();
        match calls.as_slice() {
            [] => {}
            [call] => match serde_json::from_value::<WriteTodos>(call.arguments.clone()) {
                Ok(args) => {
                    tracing::debug!(todos = args.todos.len(), "todo list written");
                    list.todos = args.todos;
                }
                // The tool answers with the argument error.
                Err(_) => tracing::debug!("write_todos called with bad arguments"),
            },
            parallel => {
                tracing::warn!(calls = parallel.len(), "parallel write_todos calls refused");
                for call in parallel {
                    cx.answer_tool_call(ToolResult::error(
                        &call.id,
                        format!(
                            "`{WRITE_TODOS}` was called {} times in one answer; none was \
                             applied. Call it once, with the whole list.",
                            parallel.len()
                        ),
                    ));
                }
            }
        }
    }
}
