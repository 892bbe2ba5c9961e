//! Every option of `#[middleware]`: `phase`, `name`, `state`, `before`, `after`, `requires`
//! (one type or a list), `crate`, and `jumps` on a hook method.

use hookchain::prelude::*;
use hookchain::{chain, middleware};

struct Auth;

#[middleware(phase = input, name = "Authentication")]
impl Auth {
    #[hook(before_agent)]
    fn check(&self, cx: &mut Context) {
        let _ = cx;
    }
}

struct Scrub;

#[middleware(phase = input, after = Auth, before = [Audit, Limit])]
impl Scrub {
    #[hook(before_model)]
    fn scrub(&self, request: &mut ModelRequest) {
        let _ = request;
    }
}

struct Audit;

#[middleware(requires = Auth, state = Vec<String>)]
impl Audit {
    #[hook(before_model)]
    fn audit(&self, log: &mut Vec<String>, request: &mut ModelRequest) {
        log.extend(request.system_prompt.clone());
    }
}

struct Limit {
    max: usize,
}

#[middleware(phase = wrap, requires = [Auth, Audit], after = [Auth, Scrub, Audit])]
impl Limit {
    #[hook(before_model, jumps = [end])]
    fn limit(&self, cx: &mut Context) -> Flow {
        if cx.model_calls() >= self.max {
            Flow::end()
        } else {
            Flow::Continue
        }
    }
}

struct Redact;

#[middleware(phase = Output, crate = hookchain, name = "Redaction")]
impl Redact {
    #[hook(after_model)]
    fn redact(&self, response: &mut ModelResponse) {
        response.message.content = response.message.text().replace("secret", "***").into();
    }
}

struct Quoted;

#[middleware(crate = "hookchain")]
impl Quoted {
    #[hook(after_agent)]
    fn done(&self) {}
}

fn main() {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("a secret")]))
        .chain(chain![Auth, Scrub, Audit, Limit { max: 4 }, Quoted, Redact])
        .build().unwrap();
    let output = futures::executor::block_on(agent.run("hi")).unwrap();
    assert_eq!(output.text().as_deref(), Some("a ***"));
    assert_eq!(<Auth as Middleware>::NAME, "Authentication");
    assert_eq!(<Redact as Middleware>::NAME, "Redaction");
    assert_eq!(<Audit as Middleware>::NAME, "Audit");
}
