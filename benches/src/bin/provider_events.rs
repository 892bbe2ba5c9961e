//! The cost of one event of a streamed answer in the OpenAI-compatible provider, for
//! instruction counting under callgrind (`benches/provider_events.sh`):
//!
//! ```text
//! valgrind --tool=callgrind target/release/provider_events small 1000
//! ```
//!
//! One streamed call to a loopback server (in this process) whose answer is `EVENTS` text
//! chunks, then the finish: bytes off the socket, the SSE parser, each chunk's JSON, the
//! assembler, the event handed to the caller. Instructions per event = (total(M2) − total(M1))
//! / (M2 − M1): start-up, the connection and the request cancel out (the server's copy of each
//! event into the body it writes does not: a `memcpy` of the event's bytes).

use std::process::ExitCode;

use futures::StreamExt;
use hookchain::providers::openai::OpenAiModel;
use hookchain::{Message, Model, ModelRequest};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const VARIANTS: &[(&str, &str)] = &[
    (
        "paced",
        "an OpenAI chunk of 10 bytes of text, each written apart (one event per read)",
    ),
    (
        "small",
        "the same chunks written at once (a burst: many events per read)",
    ),
    (
        "64k",
        "an OpenAI chunk of 64 KiB of text (one long SSE line)",
    ),
    (
        "1m",
        "an OpenAI chunk of 1 MiB of text (one very long SSE line)",
    ),
];

fn chunk(content: &str) -> String {
    format!(
        "data: {{\"id\":\"chatcmpl-B9MJ2\",\"object\":\"chat.completion.chunk\",\"created\":1741570401,\
         \"model\":\"gpt-4o-mini\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{content}\"}},\
         \"logprobs\":null,\"finish_reason\":null}}],\"usage\":null}}\n\n"
    )
}

/// The SSE body in the pieces a server writes: the first chunk, `events` text chunks, the
/// finish and `[DONE]`.
fn pieces(text: &str, events: usize) -> Vec<String> {
    let mut pieces = vec![chunk("")];
    pieces.extend(std::iter::repeat_n(chunk(text), events));
    pieces.push(
        "data: {\"id\":\"chatcmpl-B9MJ2\",\"choices\":[{\"index\":0,\"delta\":{},\
         \"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
            .to_owned(),
    );
    pieces
}

/// Answers one request on `listener` with `pieces` as an event stream: at once, or, `paced`,
/// each piece written apart and the client let read it before the next.
async fn serve(listener: TcpListener, pieces: Vec<String>, paced: bool) {
    let (mut socket, _) = listener.accept().await.expect("accept");
    let mut request = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let read = socket.read(&mut buffer).await.expect("read");
        request.extend_from_slice(&buffer[..read]);
        let text = String::from_utf8_lossy(&request);
        if let Some(head) = text.find("\r\n\r\n") {
            let length: usize = text[..head]
                .lines()
                .find_map(|line| {
                    line.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap())
                })
                .unwrap_or(0);
            if request.len() >= head + 4 + length {
                break;
            }
        }
    }
    let length: usize = pieces.iter().map(String::len).sum();
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {length}\r\n\r\n"
    );
    socket.write_all(head.as_bytes()).await.expect("write");
    if !paced {
        let body = pieces.concat();
        socket.write_all(body.as_bytes()).await.expect("write");
        return;
    }
    for piece in pieces {
        socket.write_all(piece.as_bytes()).await.expect("write");
        tokio::task::yield_now().await;
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("list") {
        for (name, what) in VARIANTS {
            println!("{name} {what}");
        }
        return ExitCode::SUCCESS;
    }
    let (Some(variant), Some(Ok(events))) = (args.get(1), args.get(2).map(|n| n.parse::<usize>()))
    else {
        eprintln!("usage: provider_events VARIANT EVENTS (provider_events list)");
        return ExitCode::FAILURE;
    };
    let text = match variant.as_str() {
        "paced" | "small" => "and sunny.".to_owned(),
        "64k" => "x".repeat(64 * 1024),
        "1m" => "x".repeat(1024 * 1024),
        _ => {
            eprintln!("unknown variant `{variant}` (provider_events list)");
            return ExitCode::FAILURE;
        }
    };
    let pieces = pieces(&text, events);
    let paced = variant == "paced";
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let received = runtime.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/v1", listener.local_addr().expect("address"));
        tokio::spawn(serve(listener, pieces, paced));
        let model = OpenAiModel::builder("gpt-4o-mini")
            .base_url(url)
            .build()
            .expect("model");
        let request = ModelRequest::new(vec![Message::user("Weather?")]);
        let mut stream = std::pin::pin!(model.stream(request));
        let mut received = 0;
        while let Some(event) = stream.next().await {
            event.expect("an event");
            received += 1;
        }
        received
    });
    // The text events, the finish.
    assert_eq!(received, events + 1, "{received} events");
    ExitCode::SUCCESS
}
