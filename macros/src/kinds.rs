//! THE table of hook kinds: names, shapes, accepted parameters, return types. Parsing,
//! validation, messages and docs all read it.

/// One of the seven hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HookKind {
    BeforeAgent,
    BeforeModel,
    WrapModelCall,
    OnModelEvent,
    AfterModel,
    WrapToolCall,
    AfterAgent,
}

/// A parameter of a hook function, recognised by its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// `&mut Context` (model path) or `&Context` (tool path).
    Context,
    /// The middleware's run-scoped state: `&mut S` (model path) or `&S` (tool path).
    State,
    /// The middleware's thread-scoped state: `&mut T` (model path) or `&T` (tool path).
    ThreadState,
    /// `&mut ModelRequest` (before_model) or `ModelRequest` (wrap_model_call).
    Request,
    /// `&mut ModelResponse`.
    Response,
    /// `ToolCall`.
    Call,
    /// `impl ModelNext` / `impl ToolNext`, or a type parameter bounded by it.
    Next,
    /// `ModelEvent` (on_model_event).
    Event,
    /// `&mut impl Emit` (on_model_event).
    Out,
    /// The middleware's per-call stream state: `&mut S` (on_model_event).
    StreamState,
}

/// How a parameter is passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    Owned,
    Shared,
    Mut,
}

impl HookKind {
    pub(crate) const ALL: [HookKind; 7] = [
        HookKind::BeforeAgent,
        HookKind::BeforeModel,
        HookKind::WrapModelCall,
        HookKind::OnModelEvent,
        HookKind::AfterModel,
        HookKind::WrapToolCall,
        HookKind::AfterAgent,
    ];

    /// The name written in `#[hook(..)]`, the trait method's name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            HookKind::BeforeAgent => "before_agent",
            HookKind::BeforeModel => "before_model",
            HookKind::WrapModelCall => "wrap_model_call",
            HookKind::OnModelEvent => "on_model_event",
            HookKind::AfterModel => "after_model",
            HookKind::WrapToolCall => "wrap_tool_call",
            HookKind::AfterAgent => "after_agent",
        }
    }

    /// The `Hook` variant.
    pub(crate) fn variant(self) -> &'static str {
        match self {
            HookKind::BeforeAgent => "BeforeAgent",
            HookKind::BeforeModel => "BeforeModel",
            HookKind::WrapModelCall => "WrapModelCall",
            HookKind::OnModelEvent => "OnModelEvent",
            HookKind::AfterModel => "AfterModel",
            HookKind::WrapToolCall => "WrapToolCall",
            HookKind::AfterAgent => "AfterAgent",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<HookKind> {
        HookKind::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// "expected one of `before_agent`, …".
    pub(crate) fn list() -> String {
        let names: Vec<String> = HookKind::ALL
            .iter()
            .map(|kind| format!("`{}`", kind.name()))
            .collect();
        names.join(", ")
    }

    /// The closest kind name to a misspelled one, if close enough.
    pub(crate) fn suggest(name: &str) -> Option<HookKind> {
        HookKind::ALL
            .into_iter()
            .map(|kind| (edit_distance(name, kind.name()), kind))
            .filter(|(distance, kind)| *distance <= kind.name().len() / 3 + 1)
            .min_by_key(|(distance, _)| *distance)
            .map(|(_, kind)| kind)
    }

    pub(crate) fn is_wrap(self) -> bool {
        matches!(self, HookKind::WrapModelCall | HookKind::WrapToolCall)
    }

    pub(crate) fn is_before(self) -> bool {
        matches!(self, HookKind::BeforeAgent | HookKind::BeforeModel)
    }

    /// Whether the hook acts on what the model answered (allowed in the Output phase).
    pub(crate) fn is_after(self) -> bool {
        matches!(
            self,
            HookKind::OnModelEvent | HookKind::AfterModel | HookKind::AfterAgent
        )
    }

    /// Whether the hook returns a `Flow`, and so may jump.
    pub(crate) fn can_jump(self) -> bool {
        matches!(
            self,
            HookKind::BeforeAgent | HookKind::BeforeModel | HookKind::AfterModel
        )
    }

    /// Whether the trait has a synchronous form of this hook (`before_model_sync`, …), which the
    /// chain calls instead of awaiting when the hook is a plain `fn`.
    pub(crate) fn has_sync_form(self) -> bool {
        matches!(self, HookKind::BeforeModel | HookKind::AfterModel)
    }

    /// Whether the hook runs on the tool path (shared context and state).
    pub(crate) fn on_tool_path(self) -> bool {
        self == HookKind::WrapToolCall
    }

    /// The form a role must have in this hook, or `None` if the hook does not take it.
    pub(crate) fn form(self, role: Role) -> Option<Form> {
        let path_form = if self.on_tool_path() {
            Form::Shared
        } else {
            Form::Mut
        };
        match (self, role) {
            // The tool path's context is a `ToolContext<'_>`, passed by value.
            (HookKind::WrapToolCall, Role::Context) => Some(Form::Owned),
            // Per event, with the call's stream state only: no context, no run state.
            (HookKind::OnModelEvent, Role::StreamState | Role::Out) => Some(Form::Mut),
            (HookKind::OnModelEvent, Role::Event) => Some(Form::Owned),
            (HookKind::OnModelEvent, _) => None,
            (_, Role::Context | Role::State | Role::ThreadState) => Some(path_form),
            (HookKind::BeforeModel, Role::Request) => Some(Form::Mut),
            (HookKind::WrapModelCall, Role::Request) => Some(Form::Owned),
            (HookKind::AfterModel, Role::Response) => Some(Form::Mut),
            (HookKind::WrapToolCall, Role::Call) => Some(Form::Owned),
            (HookKind::WrapModelCall | HookKind::WrapToolCall, Role::Next) => Some(Form::Owned),
            _ => None,
        }
    }

    /// The parameters this hook accepts, for messages.
    pub(crate) fn accepted(self) -> &'static str {
        match self {
            HookKind::BeforeAgent | HookKind::AfterAgent => {
                "`&mut Context` and the middleware's state as `&mut S`"
            }
            HookKind::BeforeModel => {
                "`&mut Context`, the middleware's state as `&mut S`, and `&mut ModelRequest`"
            }
            HookKind::WrapModelCall => {
                "`&mut Context`, the middleware's state as `&mut S`, `ModelRequest`, and \
                 `next: impl ModelNext`"
            }
            HookKind::AfterModel => {
                "`&mut Context`, the middleware's state as `&mut S`, and `&mut ModelResponse`"
            }
            HookKind::OnModelEvent => {
                "a stream state as `&mut S`, the event as `ModelEvent`, and `out: &mut impl \
                 Emit`"
            }
            HookKind::WrapToolCall => {
                "`ToolContext<'_>`, the middleware's state as `&S`, `ToolCall`, and \
                 `next: impl ToolNext`"
            }
        }
    }

    /// The `__private` conversion of the return value (`BeforeModelReturn`, …).
    pub(crate) fn conversion(self) -> &'static str {
        match self {
            HookKind::BeforeAgent | HookKind::BeforeModel | HookKind::AfterModel => "FlowReturn",
            HookKind::AfterAgent | HookKind::OnModelEvent => "DoneReturn",
            HookKind::WrapModelCall => "WrapModelCallReturn",
            HookKind::WrapToolCall => "WrapToolCallReturn",
        }
    }

    /// The trait converting what a plain-`fn` hook of this kind returns, and its method; `None`
    /// for wrap hooks, which are `async fn`s.
    pub(crate) fn into_trait(self) -> Option<(&'static str, &'static str)> {
        match self {
            HookKind::BeforeAgent | HookKind::BeforeModel | HookKind::AfterModel => {
                Some(("IntoFlow", "into_flow"))
            }
            HookKind::AfterAgent | HookKind::OnModelEvent => Some(("IntoDone", "into_done")),
            HookKind::WrapModelCall | HookKind::WrapToolCall => None,
        }
    }

    /// The trait every return type of this hook implements (its message names the types a hook
    /// of this kind can return), and its conversion method.
    pub(crate) fn return_trait(self) -> (&'static str, &'static str) {
        match self {
            HookKind::WrapModelCall => ("IntoModelResponse", "into_model_response"),
            HookKind::WrapToolCall => ("IntoToolResult", "into_tool_result"),
            other => other.into_trait().unwrap_or(("IntoFlow", "into_flow")),
        }
    }

    /// The hook that takes a parameter of `role`, for "did you mean" hints.
    pub(crate) fn taking(role: Role) -> Option<HookKind> {
        match role {
            Role::Request => Some(HookKind::BeforeModel),
            Role::Response => Some(HookKind::AfterModel),
            Role::Call => Some(HookKind::WrapToolCall),
            Role::Next => Some(HookKind::WrapModelCall),
            Role::Event | Role::Out => Some(HookKind::OnModelEvent),
            Role::Context | Role::State | Role::ThreadState | Role::StreamState => None,
        }
    }
}

impl Role {
    /// How the role is named in messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Role::Context => "the context",
            Role::State => "the state",
            Role::ThreadState => "the thread state",
            Role::Request => "the request",
            Role::Response => "the response",
            Role::Call => "the tool call",
            Role::Next => "`next`",
            Role::Event => "the event",
            Role::Out => "`out`",
            Role::StreamState => "the stream state",
        }
    }

    /// The type as it must be written, in `form`.
    pub(crate) fn spelled(self, form: Form, next_trait: &str) -> String {
        let base = match self {
            Role::Context if form == Form::Owned => return "ToolContext<'_>".to_owned(),
            Role::Context => "Context",
            Role::State => "S",
            Role::ThreadState => "T",
            Role::Request => "ModelRequest",
            Role::Response => "ModelResponse",
            Role::Call => "ToolCall",
            Role::Next => return format!("impl {next_trait}"),
            Role::Event => "ModelEvent",
            Role::Out => "impl Emit",
            Role::StreamState => "S",
        };
        match form {
            Form::Owned => base.to_owned(),
            Form::Shared => format!("&{base}"),
            Form::Mut => format!("&mut {base}"),
        }
    }
}

/// Levenshtein distance, for "did you mean".
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = if ca == *cb {
                previous
            } else {
                1 + previous.min(row[j]).min(row[j + 1])
            };
            previous = current;
        }
    }
    row[b.len()]
}
