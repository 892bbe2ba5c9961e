//! A loopback HTTP server that answers every request with one canned JSON body and keeps the
//! request bodies: what hookchain's OpenAI and Anthropic clients send, with no network.

use std::sync::{Arc, Mutex};

use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

use super::fake::read_request;

/// A chat completion that says "ok".
pub const OPENAI_ANSWER: &str = r#"{"id":"chatcmpl-1","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}"#;

/// A Messages answer that says "ok".
pub const ANTHROPIC_ANSWER: &str = r#"{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}"#;

/// The server: its URL, and the bodies it received.
pub struct Capture {
    pub url: String,
    bodies: Arc<Mutex<Vec<serde_json::Value>>>,
}

impl Capture {
    /// Starts answering every request with `answer`.
    pub async fn start(answer: &'static str) -> Capture {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("an address"));
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let kept = bodies.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let kept = kept.clone();
                tokio::spawn(async move {
                    let Some((_method, body)) = read_request(&mut stream).await else {
                        return;
                    };
                    if let Ok(json) = serde_json::from_slice(&body) {
                        kept.lock().unwrap().push(json);
                    }
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                        answer.len()
                    );
                    let _ = stream.write_all(reply.as_bytes()).await;
                });
            }
        });
        Capture { url, bodies }
    }

    /// The bodies received so far.
    pub fn bodies(&self) -> Vec<serde_json::Value> {
        self.bodies.lock().unwrap().clone()
    }
}
