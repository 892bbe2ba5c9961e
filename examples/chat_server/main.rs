//! A chat page served with its agent: answers streamed as they come, tool calls as they
//! happen, Approve / Reject buttons for the gated tool — over AG-UI, on the scripted model (no
//! API key, no network).
//!
//! ```sh
//! cargo run --example chat_server --features axum,sqlite     # then open http://127.0.0.1:3000
//! cargo run --example chat_server --features axum,sqlite -- --port 8080 --data /tmp/chat
//! cargo run --example chat_server --features axum,sqlite -- --smoke # one turn against itself (CI)
//! ```
//!
//! Conversations and runs are kept in one SQLite database under `--data` (a directory of the
//! system's temporary one by default): stop the server while an approval waits, start it
//! again, and the button still works; stop it during a run, and the page's "Send again" goes
//! on with that run instead of starting it over.

mod app;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use tokio::net::TcpListener;

const USAGE: &str = "usage: chat_server [--port PORT] [--data DIR] [--smoke]";

struct Options {
    port: u16,
    data: PathBuf,
    smoke: bool,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        port: 3000,
        data: std::env::temp_dir().join("hookchain-chat"),
        smoke: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => {
                let port = args.next().ok_or("--port needs a number")?;
                options.port = port.parse().map_err(|_| format!("not a port: {port}"))?;
            }
            "--data" => options.data = args.next().ok_or("--data needs a directory")?.into(),
            "--smoke" => {
                options.smoke = true;
                options.port = 0;
            }
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    Ok(options)
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    match serve(options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", hookchain::error::Report(error.as_ref()));
            ExitCode::FAILURE
        }
    }
}

async fn serve(options: Options) -> Result<(), Box<dyn std::error::Error>> {
    let server = app::server(&options.data)?;
    let listener = TcpListener::bind(("127.0.0.1", options.port)).await?;
    let address = listener.local_addr()?;
    println!(
        "chat on http://{address} (data in {})",
        options.data.display()
    );
    let router = app::router(&server);
    let graceful = server.clone();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(async move {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = stopped => {}
                }
                let report = graceful.shutdown(Duration::from_secs(10)).await;
                println!(
                    "stopped: {} run(s) finished, {} stopped",
                    report.finished, report.stopped
                );
            })
            .await
    });
    if options.smoke {
        smoke(address).await?;
        let _ = stop.send(());
    }
    serving.await??;
    Ok(())
}

/// One turn against the server itself, as the page sends it (what CI runs).
async fn smoke(address: std::net::SocketAddr) -> Result<(), Box<dyn std::error::Error>> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = serde_json::json!({
        "threadId": format!("smoke-{}", std::process::id()), "runId": "smoke-run",
        "messages": [{"id": "1", "role": "user", "content": "Hello"}],
    })
    .to_string();
    let mut socket = tokio::net::TcpStream::connect(address).await?;
    let request = format!(
        "POST /agent HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    socket.write_all(request.as_bytes()).await?;
    let mut answer = String::new();
    socket.read_to_string(&mut answer).await?;
    let status = answer.lines().next().unwrap_or_default();
    println!("{status}");
    if !status.contains(" 200 ") || !answer.contains("You said: Hello") {
        return Err(format!("unexpected answer:\n{answer}").into());
    }
    println!(
        "the agent answered: {}",
        answer.rsplit("\r\n\r\n").next().unwrap_or_default()
    );
    Ok(())
}
