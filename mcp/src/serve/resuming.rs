//! A served call's outcome as the client reads it — its result, or an input-required result
//! that asks the client's user — and the call that answers it, resumed once.

use hookchain_core::{AgentWith, CallOutcome, Error, Middleware, Model};
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, InputRequiredResult, InputResponses,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};

use super::McpToolServer;
use super::asking::{Asking, NotAnswered};
use super::content::call_tool_result;
use super::driving::{Claimed, Relay};
use super::in_session::ask_in_session;
use super::pauses::Taken;
use super::tasks::{Started, TaskCall};

/// The most rounds of questions one served call asks a client of 2025-11-25 in its session.
const MAX_SESSION_ROUNDS: usize = 10;

/// Who a served call's next question is asked for, and as which round.
#[derive(Clone, Copy)]
pub(super) struct Asker<'a> {
    /// The round its state would be (from 1).
    pub(super) round: u32,
    /// Whose call it is.
    pub(super) principal: Option<&'a str>,
    /// The tool called.
    pub(super) name: &'a str,
}

/// What a call that answers a paused one carries.
pub(super) struct Answer<'a> {
    /// The `requestState`, as the client sent it back.
    pub(super) state: &'a str,
    /// The client's `inputResponses`.
    pub(super) responses: Option<&'a InputResponses>,
    /// Who calls.
    pub(super) principal: Option<&'a str>,
    /// The tool the client names.
    pub(super) tool: &'a str,
}

impl<M, C> McpToolServer<M, C>
where
    M: Model + Send + Sync + 'static,
    C: Middleware + Send + Sync + 'static,
{
    /// The call a client's answer resumes: opened, claimed, run from where it asked, and
    /// marked answered. A state this server did not seal for this principal, a replayed
    /// answer, an answer being given by another request: refused, nothing run.
    pub(super) async fn resume(
        &self,
        agent: &AgentWith<'_, M, C>,
        answer: Answer<'_>,
        mut relay: Relay,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let refuse = |why: &str| McpError::invalid_params(why.to_owned(), None);
        let pauses = self.settings.pauses.as_ref().ok_or_else(|| {
            refuse(
                "this server keeps no calls that wait for an answer: call without a requestState",
            )
        })?;
        // One answer for every reason, as rmcp advises: which check failed is the server's log.
        let state = pauses
            .open(answer.state, answer.principal)
            .map_err(|error| {
                tracing::info!(%error, "a served call's requestState was refused");
                refuse("the requestState is not one this server gave you, or it expired")
            })?;
        if state.paused.call.name != answer.tool {
            return Err(refuse("the requestState is of a call of another tool"));
        }
        let capabilities = context.client_capabilities().unwrap_or_default();
        let asked = state
            .asking
            .input_requests(&state.paused.interrupt, &capabilities)
            .ok_or_else(|| refuse("this client can no longer answer what the call asked"))?;
        let no_responses = InputResponses::new();
        let responses = answer.responses.unwrap_or(&no_responses);
        let value = match state.asking.answer(&asked, responses) {
            Ok(value) => value,
            // Asked again, with the same state: nothing was claimed.
            Err(NotAnswered::Missing) => {
                let again = InputRequiredResult::new(Some(asked), Some(answer.state.to_owned()));
                return Ok(again.into());
            }
            Err(NotAnswered::Invalid(why)) => return Err(refuse(why)),
        };
        let lease = match pauses.take(&state).await {
            Ok(Taken::Granted(lease)) => lease,
            Ok(Taken::Answered) => return Err(refuse("this call was answered already")),
            Ok(Taken::Busy) => {
                return Err(refuse("this call is being answered by another request"));
            }
            Err(error) => {
                tracing::error!(%error, "a served call could not be claimed in its store");
                return Err(McpError::internal_error("the call's store failed", None));
            }
        };
        let outcome = match self.tasks_for(answer.tool, context) {
            // A tool served as a task: once the answer lets it past its gate, a task runs it.
            Some(tasks) => {
                let call = TaskCall::Resumed(Box::new(state.paused.clone()), value);
                let principal = answer.principal.map(str::to_owned);
                let started = match self.run_context(context) {
                    Ok(run_context) => {
                        self.start_task(tasks, call, run_context, principal, context)
                            .await
                    }
                    Err(error) => Err(error),
                };
                match started {
                    Ok(Started::Task(response)) => {
                        if let Err(error) = pauses.answered(&state, &lease, "answered").await {
                            tracing::warn!(%error, "a served call's answer was not marked in its store");
                        }
                        return Ok(response);
                    }
                    Ok(Started::Ended(outcome)) => outcome,
                    Err(stopped) => {
                        pauses.let_go(&state, &lease).await;
                        return Err(stopped);
                    }
                }
            }
            None => {
                let claimed = Claimed {
                    pauses,
                    state: &state,
                    lease: &lease,
                };
                let resuming = agent.resume_tool_call(state.paused.clone(), value);
                match relay
                    .drive(resuming, context, answer.tool, Some(claimed))
                    .await
                {
                    Ok(outcome) => outcome,
                    Err(stopped) => {
                        pauses.let_go(&state, &lease).await;
                        return Err(stopped);
                    }
                }
            }
        };
        match &outcome {
            // Refused before it ran: the state stays good for a better answer.
            Err(Error::Resume(_)) => {
                pauses.let_go(&state, &lease).await;
                return Err(refuse("the answer was refused by whoever asked"));
            }
            Err(_) => pauses.let_go(&state, &lease).await,
            Ok(_) => {
                if let Err(error) = pauses.answered(&state, &lease, "answered").await {
                    // The call ran: its result goes to the client. The claim lapsed meanwhile
                    // (a store that stalled past the lease): the log says so.
                    tracing::warn!(%error, "a served call's answer was not marked in its store");
                }
            }
        }
        let asker = Asker {
            round: state.round.saturating_add(1),
            principal: answer.principal,
            name: answer.tool,
        };
        self.conclude(agent, outcome, &mut relay, asker, context)
            .await
    }

    /// What the client reads of a served call's `outcome`, once what it asks a client of
    /// 2025-11-25 is answered in its session (the call waiting here): its result, an
    /// input-required result (a client of 2026-07-28), or an error result.
    pub(super) async fn conclude(
        &self,
        agent: &AgentWith<'_, M, C>,
        mut outcome: Result<CallOutcome, Error>,
        relay: &mut Relay,
        asker: Asker<'_>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        for _ in 0..MAX_SESSION_ROUNDS {
            let paused = match outcome {
                Ok(CallOutcome::Paused(paused)) if !speaks_input_required(context) => paused,
                _ => break,
            };
            let capabilities = context.client_capabilities().unwrap_or_default();
            let asking = Asking::of(&paused.interrupt);
            let Some((asking, requests)) = asking.and_then(|asking| {
                Some((
                    asking,
                    asking.input_requests(&paused.interrupt, &capabilities)?,
                ))
            }) else {
                outcome = Ok(CallOutcome::Paused(paused));
                break;
            };
            // The client may cancel the call while its user thinks.
            let asked = tokio::select! {
                asked = ask_in_session(&context.peer, &requests) => asked,
                () = context.ct.cancelled() => {
                    return Err(McpError::internal_error("the call was cancelled", None));
                }
            };
            let value = match asked {
                Ok(responses) => asking.answer(&requests, &responses),
                Err(error) => {
                    tracing::info!(tool = %asker.name, %error, "a served call's question was not answered");
                    return Ok(unanswered(asker.name));
                }
            };
            let Ok(value) = value else {
                return Ok(unanswered(asker.name));
            };
            let resuming = agent.resume_tool_call(*paused, value);
            outcome = relay.drive(resuming, context, asker.name, None).await?;
        }
        self.respond(outcome, asker.round, asker.principal, context, asker.name)
    }

    /// What the client reads of a served call's `outcome`: its result, an input-required
    /// result asking its user (the call paused at `round`), or an error result.
    pub(super) fn respond(
        &self,
        outcome: Result<CallOutcome, Error>,
        round: u32,
        principal: Option<&str>,
        context: &RequestContext<RoleServer>,
        name: &str,
    ) -> Result<CallToolResponse, McpError> {
        let paused = match outcome {
            Ok(CallOutcome::Done(result)) => return Ok(call_tool_result(result).into()),
            Ok(CallOutcome::Paused(paused)) => paused,
            Ok(_) => return Ok(failed(name).into()),
            Err(Error::ToolCallInterrupted(interrupt)) => {
                return Ok(cannot_ask(name, &interrupt.source).into());
            }
            Err(error) => {
                // A hook's error ends the call as it would end a run: the operator gets why,
                // the client a result without the server's internals.
                tracing::warn!(
                    tool = %name,
                    error = %hookchain_core::error::Report(&error),
                    "an MCP tool call failed in the agent's chain"
                );
                return Ok(failed(name).into());
            }
        };
        let (Some(pauses), Some(asking)) = (&self.settings.pauses, Asking::of(&paused.interrupt))
        else {
            return Ok(cannot_ask(name, &paused.interrupt.source).into());
        };
        if !speaks_input_required(context) {
            return Ok(cannot_ask(name, &paused.interrupt.source).into());
        }
        let capabilities = context.client_capabilities().unwrap_or_default();
        let Some(requests) = asking.input_requests(&paused.interrupt, &capabilities) else {
            // The call needs what the client did not declare it can give (SEP-2575).
            let required = asking.required_capabilities(&paused.interrupt);
            return Err(McpError::missing_required_client_capability(required));
        };
        match pauses.seal(&paused, asking, round, principal) {
            Ok(state) => Ok(InputRequiredResult::new(Some(requests), Some(state)).into()),
            Err(error) => {
                tracing::error!(%error, "a served call's state was not sealed");
                Ok(failed(name).into())
            }
        }
    }
}

/// Whether the client of `context` takes input-required results: MCP 2026-07-28 or later.
fn speaks_input_required(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| !version.has_initialize())
}

/// The result of a call that needs an answer this server cannot ask its client for.
pub(super) fn cannot_ask(name: &str, source: &str) -> CallToolResult {
    tracing::info!(
        tool = %name,
        %source,
        "an MCP tool call needs an answer from outside, which this server cannot ask its client for"
    );
    CallToolResult::error(vec![ContentBlock::text(format!(
        "tool `{name}` needs an answer from outside before it can complete (asked by \
         `{source}`: an approval, say), which this MCP server cannot ask for; the call did \
         not complete"
    ))])
}

/// The result of a call whose question its client did not answer.
fn unanswered(name: &str) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "tool `{name}` asked a question the client did not answer; the call did not complete"
    ))])
    .into()
}

/// The result of a call that failed in the server.
pub(super) fn failed(name: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "tool `{name}` failed in the server"
    ))])
}
