//! Which answers a paused run takes: those to the pause it waits on now, checked by the
//! workflow's update validator before the update is accepted.
//!
//! A refused update is only refused — the caller gets the reason and the run goes on waiting —
//! while an accepted one is handed to the next step: answers to an earlier pause (a webhook
//! delivered twice, a client that retried) must be refused here, never taken.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::Value;

use crate::RunStatus;

/// Why a paused run refused answers (the reason its client gets in
/// [`Error::Rejected`](crate::Error::Rejected)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum AnswersRefused {
    /// The run is not waiting on a pause.
    #[error("the run is not paused")]
    NotPaused,
    /// The run is paused, and answers it took already are on their way to its next step.
    #[error("the run has taken answers to its pause already (its next step gets them)")]
    AlreadyAnswered,
    /// The answers are not an object of interrupt ids.
    #[error(
        "the answers are an object of the ids of the interrupts the run waits on ({}) to their \
         answers, not {kind}",
        Ids(waits_on)
    )]
    NotAnObject {
        /// The ids the pause waits on.
        waits_on: Vec<String>,
        /// What they are instead (`a string`, …).
        kind: &'static str,
    },
    /// The answers are to other interrupts than the pause's (an earlier pause's, say), or leave
    /// some of them unanswered.
    #[error(
        "the answers are not to the pause the run waits on: it waits on {} after step {step}; \
         {}",
        Ids(waits_on),
        Mismatch { unknown, missing }
    )]
    OtherInterrupts {
        /// The step that paused.
        step: u32,
        /// The ids the pause waits on.
        waits_on: Vec<String>,
        /// The ids answered that the pause does not wait on.
        unknown: Vec<String>,
        /// The ids of the pause left unanswered.
        missing: Vec<String>,
    },
}

/// Checks `answers` against where the run stands: paused (`status`), with no answers taken yet
/// (`pending`), and answering exactly the interrupts of its pause. A pause that lists no
/// interrupts (a [`StepHandler`](crate::StepHandler) of one's own) takes answers of any shape.
pub(crate) fn check(
    status: Option<&RunStatus>,
    pending: bool,
    answers: &Value,
) -> Result<(), AnswersRefused> {
    let Some(RunStatus::Paused { step, interrupts }) = status else {
        return Err(AnswersRefused::NotPaused);
    };
    if pending {
        return Err(AnswersRefused::AlreadyAnswered);
    }
    if interrupts.is_empty() {
        return Ok(());
    }
    let waits_on: BTreeSet<&str> = interrupts.iter().map(|i| i.id.as_str()).collect();
    let Value::Object(answers) = answers else {
        return Err(AnswersRefused::NotAnObject {
            waits_on: owned(&waits_on),
            kind: kind(answers),
        });
    };
    let answered: BTreeSet<&str> = answers.keys().map(String::as_str).collect();
    if answered == waits_on {
        return Ok(());
    }
    Err(AnswersRefused::OtherInterrupts {
        step: *step,
        waits_on: owned(&waits_on),
        unknown: owned(&answered.difference(&waits_on).copied().collect()),
        missing: owned(&waits_on.difference(&answered).copied().collect()),
    })
}

fn owned(ids: &BTreeSet<&str>) -> Vec<String> {
    ids.iter().map(|&id| id.to_owned()).collect()
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Ids as a message shows them: `[a, b]`.
struct Ids<'a>(&'a [String]);

impl fmt::Display for Ids<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}]", self.0.join(", "))
    }
}

/// What answered the wrong interrupts, and what is left unanswered.
struct Mismatch<'a> {
    unknown: &'a [String],
    missing: &'a [String],
}

impl fmt::Display for Mismatch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.unknown.is_empty() {
            write!(
                f,
                "answered {}, which it does not wait on (answers to an earlier pause, delivered \
                 again?)",
                Ids(self.unknown)
            )?;
            if !self.missing.is_empty() {
                f.write_str("; ")?;
            }
        }
        if !self.missing.is_empty() {
            write!(
                f,
                "no answer to {}: answer every interrupt of the pause at once",
                Ids(self.missing)
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::InterruptSummary;

    fn paused_at(step: u32, ids: &[&str]) -> RunStatus {
        RunStatus::Paused {
            step,
            interrupts: ids.iter().map(|&id| InterruptSummary::new(id)).collect(),
        }
    }

    #[test]
    fn the_answers_to_the_pause_the_run_waits_on_are_taken() {
        let paused = paused_at(3, &["1/a", "1/b"]);
        let answers = json!({ "1/a": { "decisions": [] }, "1/b": "yes" });
        assert_eq!(check(Some(&paused), false, &answers), Ok(()));
    }

    #[test]
    fn answers_to_an_earlier_pause_are_refused_and_say_so() {
        let paused = paused_at(4, &["1/pay"]);
        let refused = check(Some(&paused), false, &json!({ "0/pay": "approve" })).unwrap_err();
        assert_eq!(
            refused,
            AnswersRefused::OtherInterrupts {
                step: 4,
                waits_on: vec!["1/pay".to_owned()],
                unknown: vec!["0/pay".to_owned()],
                missing: vec!["1/pay".to_owned()],
            }
        );
        assert_eq!(
            refused.to_string(),
            "the answers are not to the pause the run waits on: it waits on [1/pay] after step \
             4; answered [0/pay], which it does not wait on (answers to an earlier pause, \
             delivered again?); no answer to [1/pay]: answer every interrupt of the pause at once"
        );
    }

    #[test]
    fn answers_to_part_of_the_pause_are_refused() {
        let paused = paused_at(2, &["0/a", "0/b"]);
        let refused = check(Some(&paused), false, &json!({ "0/a": "yes" })).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "the answers are not to the pause the run waits on: it waits on [0/a, 0/b] after \
             step 2; no answer to [0/b]: answer every interrupt of the pause at once"
        );
    }

    #[test]
    fn answers_that_are_no_object_are_refused() {
        let paused = paused_at(1, &["0/a"]);
        assert_eq!(
            check(Some(&paused), false, &json!("yes")),
            Err(AnswersRefused::NotAnObject {
                waits_on: vec!["0/a".to_owned()],
                kind: "a string",
            })
        );
    }

    #[test]
    fn a_run_not_paused_or_answered_already_takes_none() {
        let answers = json!({ "0/a": "yes" });
        assert_eq!(check(None, false, &answers), Err(AnswersRefused::NotPaused));
        let running = RunStatus::Running { step: 2 };
        assert_eq!(
            check(Some(&running), false, &answers),
            Err(AnswersRefused::NotPaused)
        );
        let paused = paused_at(1, &["0/a"]);
        assert_eq!(
            check(Some(&paused), true, &answers),
            Err(AnswersRefused::AlreadyAnswered)
        );
    }

    #[test]
    fn a_pause_without_interrupts_takes_answers_of_any_shape() {
        let paused = paused_at(1, &[]);
        assert_eq!(check(Some(&paused), false, &json!("yes")), Ok(()));
    }
}
