//! The workflow of a run: steps in a loop, a pause until answers come, cancellation.
//!
//! Workflow code is replayed from the run's history on whichever worker picks the run up: it
//! must decide alike on every replay (no clock, no randomness, no I/O but through `ctx`).
// The SDK's macros make a `pub(crate)` marker struct per method in a private module.
#![allow(unreachable_pub)]

use std::collections::VecDeque;

use serde_json::Value;
use temporalio_common::RetryPolicy;
use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::{
    ActivityExecutionError, ActivityOptions, ApplicationFailure, SyncWorkflowContext,
    WorkflowCancellationToken, WorkflowContext, WorkflowContextView, WorkflowResult,
    WorkflowTermination,
};

use crate::{
    RunOutcome, RunStatus, StepPolicy, StepReply, StepRequest, activity::StepActivities,
    model::RunInput, pause_answers,
};

/// The workflow's type name on the server.
pub(crate) const WORKFLOW_TYPE: &str = "hookchain.agent_run";

/// A run: the state that its signal and query handlers share with its main loop.
#[workflow]
#[derive(Default)]
pub(crate) struct AgentRun {
    status: Option<RunStatus>,
    /// Answers received and not yet handed to a step, oldest first.
    answers: VecDeque<Value>,
}

#[workflow_methods]
impl AgentRun {
    #[run(name = WORKFLOW_TYPE)]
    pub(crate) async fn run(
        ctx: &mut WorkflowContext<Self>,
        input: RunInput,
    ) -> WorkflowResult<RunOutcome> {
        let RunInput { input, policy } = input;
        let key = ctx.workflow_id().to_owned();
        let options = step_options(&policy);
        let mut next_input = Some(input);
        let mut step = 0_u32;
        loop {
            if policy.max_steps != 0 && step >= policy.max_steps {
                let message = format!("the run took more than {} steps", policy.max_steps);
                return Err(ApplicationFailure::non_retryable(message).into());
            }
            step += 1;
            ctx.state_mut(|s| s.status = Some(RunStatus::Running { step }));
            let request = StepRequest {
                key: key.clone(),
                step,
                input: next_input.take(),
            };
            let reply = match ctx
                .execute_activity(StepActivities::step, request, options.clone())
                .await
            {
                Ok(reply) => reply,
                Err(ActivityExecutionError::Cancelled(_)) => {
                    return cancelled(ctx, key, &policy).await;
                }
                Err(error) => return Err(error.into()),
            };
            if ctx.cancellation_token().is_cancelled() {
                return cancelled(ctx, key, &policy).await;
            }
            match reply {
                StepReply::Next => {}
                StepReply::Paused { interrupts } => {
                    ctx.state_mut(|s| s.status = Some(RunStatus::Paused { step, interrupts }));
                    if ctx.wait_condition(|s| !s.answers.is_empty()).await.is_err() {
                        return cancelled(ctx, key, &policy).await;
                    }
                    next_input = ctx.state_mut(|s| s.answers.pop_front());
                }
                StepReply::Done { summary } => {
                    ctx.state_mut(|s| s.status = Some(RunStatus::Done { steps: step }));
                    return Ok(RunOutcome {
                        summary,
                        steps: step,
                    });
                }
            }
        }
    }

    /// Answers for a paused run (a human's decisions on its interrupts): the next step gets
    /// them. Answers that come while no step is paused wait for the next pause. A signal is
    /// not validated: answers to a pause the run is past reach a step, which goes on without
    /// them (see [`AgentSteps`](crate::AgentSteps)).
    #[signal(name = "answers")]
    pub(crate) fn answers(&mut self, _ctx: &mut SyncWorkflowContext<Self>, answers: Value) {
        self.answers.push_back(answers);
    }

    /// Refuses answers unless the run is paused with none pending, and they answer exactly the
    /// interrupts of its pause (see [`pause_answers::check`]): answers to an earlier pause (a
    /// duplicated webhook) are refused here, and the run goes on waiting for the right ones,
    /// instead of being accepted and handed to a step.
    #[update_validator(resume)]
    fn validate_resume(
        &self,
        _ctx: &WorkflowContextView,
        answers: &Value,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        pause_answers::check(self.status.as_ref(), !self.answers.is_empty(), answers)
            .map_err(Into::into)
    }

    /// Answers for the run paused now, as an update: unlike the signal, the caller learns
    /// whether they were taken (and by which paused step), and answers that are not to the
    /// pause the run waits on are refused.
    #[update(name = "resume")]
    pub(crate) fn resume(&mut self, _ctx: &mut SyncWorkflowContext<Self>, answers: Value) -> u32 {
        self.answers.push_back(answers);
        match self.status {
            Some(RunStatus::Paused { step, .. }) => step,
            _ => 0,
        }
    }

    /// Where the run stands.
    #[query(name = "status")]
    pub(crate) fn status(&self, _ctx: &WorkflowContextView) -> RunStatus {
        self.status.clone().unwrap_or(RunStatus::Starting)
    }
}

/// Ends a cancelled run: runs the cleanup activity (which the cancellation does not reach),
/// then reports the run cancelled, whether the cleanup succeeded or not.
async fn cancelled(
    ctx: &WorkflowContext<AgentRun>,
    key: String,
    policy: &StepPolicy,
) -> WorkflowResult<RunOutcome> {
    ctx.state_mut(|s| s.status = Some(RunStatus::Cancelled));
    let mut options = step_options(policy);
    options.cancellation_token = Some(WorkflowCancellationToken::new());
    // A failed cleanup is in the history (and the worker's log); the run is cancelled still.
    let _ = ctx
        .execute_activity(StepActivities::cleanup, key, options)
        .await;
    Err(WorkflowTermination::cancelled())
}

/// The activity options of a step, from the run's policy.
fn step_options(policy: &StepPolicy) -> ActivityOptions {
    let retry = RetryPolicy::builder()
        .initial_interval(policy.initial_interval)
        .backoff_coefficient(policy.backoff_coefficient)
        .maybe_maximum_interval(policy.maximum_interval)
        .maximum_attempts(policy.maximum_attempts)
        .build();
    ActivityOptions::with_start_to_close_timeout(policy.start_to_close)
        .maybe_heartbeat_timeout(policy.heartbeat_timeout)
        .retry_policy(retry)
        .build()
}
