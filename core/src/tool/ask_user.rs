//! A tool the model uses to ask the user a question: it pauses the run until the answer comes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::answer::Answer;
use super::{Tool, ToolError, ToolSpec};
use crate::context::ToolContext;
use crate::message::Content;

/// The tool's name.
pub const ASK_USER: &str = "ask_user";

/// Lets the model ask the user a question, with free text, one option, or several options as
/// the answer. Calling it pauses the run with an interrupt whose payload is the [`Question`];
/// resume with the answer — a string for `free_text` and `one_of`, a list of strings for
/// `several_of` — and the model reads it as the tool's result.
///
/// ```
/// use hookchain::tool::AskUser;
/// use hookchain::Tool;
///
/// assert_eq!(AskUser.spec().name, "ask_user");
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct AskUser;

/// What the model asks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Question {
    /// The question, as the user will read it.
    pub question: String,
    /// What kind of answer is expected.
    #[serde(default)]
    pub answer: AnswerKind,
}

/// The kind of answer a [`Question`] expects.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum AnswerKind {
    /// Any text.
    #[default]
    FreeText,
    /// Exactly one of the options.
    OneOf {
        /// The options.
        options: Vec<String>,
    },
    /// Any number of the options (at least one).
    SeveralOf {
        /// The options.
        options: Vec<String>,
    },
}

/// Why an answer does not fit its question.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AnswerError {
    /// The answer should be text.
    #[error("the answer should be text")]
    NotText,
    /// The answer should be a list of options.
    #[error("the answer should be a list of the options")]
    NotList,
    /// The answer is not one of the options.
    #[error("`{answer}` is not one of the options: {}", options.join(", "))]
    NotAnOption {
        /// The answer.
        answer: String,
        /// The options.
        options: Vec<String>,
    },
    /// No option was chosen.
    #[error("choose at least one option")]
    Empty,
}

impl Question {
    /// The question `question`, expecting an answer of the kind `answer`.
    pub fn new(question: impl Into<String>, answer: AnswerKind) -> Self {
        Self {
            question: question.into(),
            answer,
        }
    }

    /// Checks `answer` against the question, and returns it as the text the model reads.
    pub fn check(&self, answer: &serde_json::Value) -> Result<String, AnswerError> {
        let text = |value: &serde_json::Value| value.as_str().map(str::to_owned);
        match &self.answer {
            AnswerKind::FreeText => text(answer).ok_or(AnswerError::NotText),
            AnswerKind::OneOf { options } => {
                let answer = text(answer).ok_or(AnswerError::NotText)?;
                one_of(answer, options)
            }
            AnswerKind::SeveralOf { options } => {
                let answers = answer.as_array().ok_or(AnswerError::NotList)?;
                if answers.is_empty() {
                    return Err(AnswerError::Empty);
                }
                let chosen = answers
                    .iter()
                    .map(|answer| one_of(text(answer).ok_or(AnswerError::NotText)?, options))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(chosen.join(", "))
            }
        }
    }
}

fn one_of(answer: String, options: &[String]) -> Result<String, AnswerError> {
    if options.contains(&answer) {
        Ok(answer)
    } else {
        Err(AnswerError::NotAnOption {
            answer,
            options: options.to_vec(),
        })
    }
}

fn question(arguments: serde_json::Value) -> Result<Question, ToolError> {
    serde_json::from_value(arguments).map_err(|source| ToolError::InvalidArguments {
        tool: ASK_USER.to_owned(),
        source,
    })
}

// Not listed in a "not a tool" error, which names the usual fixes instead.
#[diagnostic::do_not_recommend]
impl Tool for AskUser {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            ASK_USER,
            "Ask the user a question and wait for the answer. Use it when you need \
             information or a choice only the user can give.",
            super::parameters_schema::<Question>(),
        )
    }

    async fn call(
        &self,
        cx: ToolContext<'_>,
        arguments: serde_json::Value,
    ) -> Result<Content, ToolError> {
        let question = question(arguments)?;
        // Resumed with the answer: it is the result (checked again, in case the run resumed
        // without `check_answer`).
        if let Some(answer) = cx.resume_value() {
            return question
                .check(answer)
                .map(Content::from)
                .map_err(|error| ToolError::failed(ASK_USER, error));
        }
        let payload = serde_json::to_value(&question).map_err(|source| ToolError::Output {
            tool: ASK_USER.to_owned(),
            source,
        })?;
        Err(ToolError::Interrupt { payload })
    }

    fn check_answer(
        &self,
        arguments: &serde_json::Value,
        answer: &Answer<'_>,
    ) -> Result<(), ToolError> {
        let question = question(arguments.clone())?;
        question
            .check(answer.value())
            .map(drop)
            .map_err(|error| ToolError::failed(ASK_USER, error))
    }
}
