//! Every option of `#[hook]`: `phase`, `name`, `jumps`, `state` and `crate`.

use hookchain::prelude::*;
use hookchain::{chain, hook};

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Seen {
    prompts: Vec<String>,
}

#[hook(before_model, phase = input)]
async fn scrub(request: &mut ModelRequest) {
    request.system_prompt = None;
}

#[hook(before_agent, phase = Input, name = "Greeter")]
async fn greet(cx: &mut Context) {
    let _ = cx;
}

#[hook(before_model, phase = wrap, state = Seen)]
async fn remember(seen: &mut Seen, request: &mut ModelRequest) {
    seen.prompts.extend(request.system_prompt.clone());
}

#[hook(before_model, jumps = [end, model])]
async fn stop_early(cx: &mut Context) -> Flow {
    if cx.model_calls() > 3 {
        Flow::end()
    } else {
        Flow::Continue
    }
}

#[hook(after_model, jumps = tools)]
async fn to_tools(response: &mut ModelResponse) -> Flow {
    let _ = response;
    Flow::Jump(Jump::Tools)
}

#[hook(after_model, phase = output, name = "Redact")]
async fn redact(response: &mut ModelResponse) {
    response.message.content = response.message.text().replace("secret", "***").into();
}

#[hook(after_agent, crate = hookchain, phase = output)]
async fn finish(cx: &mut Context) {
    let _ = cx;
}

#[hook(after_agent, crate = "hookchain")]
async fn finish_quoted() {}

fn main() {
    let chain = chain![
        scrub,
        greet,
        remember,
        stop_early,
        to_tools,
        finish_quoted,
        redact,
        finish
    ];
    assert_eq!(<redact as Middleware>::NAME, "Redact");
    assert_eq!(<greet as Middleware>::NAME, "Greeter");
    assert_eq!(<scrub as Middleware>::NAME, "scrub");
    let _ = chain;
}
