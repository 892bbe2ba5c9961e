//! hookchain's spans in OpenTelemetry, and a log line that stays short: the README's
//! *Observability* recipe as a program.
//!
//! A run reports to `tracing` (an `invoke_agent` span, a `chat` span per model call, an
//! `execute_tool` span per tool call, with the GenAI semantic conventions' attributes).
//! `tracing-opentelemetry` turns them into OpenTelemetry spans, and `opentelemetry-otlp` sends
//! them to a collector: over HTTP (protobuf, port 4318) by default, over gRPC (port 4317) with
//! `--grpc` and the feature `grpc`. The collector's address is the exporter's usual
//! configuration (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`).
//!
//! ```sh
//! cargo run -p hookchain-observability-example --features otlp            # OTLP/HTTP
//! cargo run -p hookchain-observability-example --features grpc -- --grpc  # OTLP/gRPC
//! cargo run -p hookchain-observability-example --features grpc -- --smoke # CI: no network
//! ```
//!
//! The versions that work together are pinned in this package's `Cargo.toml`:
//! `tracing-opentelemetry` 0.34 with `opentelemetry`, `opentelemetry_sdk` and
//! `opentelemetry-otlp` 0.33.
//!
//! # The log line
//!
//! `tracing_subscriber::fmt`'s default format writes before each event the whole scope of
//! spans with their fields, so every line inside a run repeats the `invoke_agent{…}` prefix
//! (agent, run id, limits; the conversation's id too in a thread), and a tool's line the
//! `execute_tool{…}` one after it. Measured on this program's run (at `TRACE`, with
//! timestamps, without colours), a line is **264 to 417 characters, 302 on average**. With
//! [`RunFormat`] — the time, the level, the run's id, the innermost span's name, then the
//! event — it is **83 to 141 characters, 111 on average**: the spans' fields are in the
//! spans, sent to OpenTelemetry, and the run id finds them there. `--smoke` measures both,
//! prints the numbers and the longest line of each, and fails if the compact lines are not
//! shorter than every default one and half as long on average:
//!
//! ```text
//! 2026-11-27T09:18:29.751571Z  INFO invoke_agent{otel.name=invoke_agent weather gen_ai.operation.name="invoke_agent" gen_ai.agent.name="weather" hookchain.run.id="d7d64e8be5e415eaf847f65b3ce07127" hookchain.max_steps=25}:execute_tool{otel.name=execute_tool get_weather gen_ai.operation.name="execute_tool" gen_ai.tool.name="get_weather" gen_ai.tool.call.id="call_1"}: observability: looking up the weather city="Lisbon"
//! 2026-11-27T09:18:29.751910Z  INFO run=d7d64e8be5e415eaf847f65b3ce07127 execute_tool: looking up the weather city="Lisbon"
//! ```
//!
//! # `--smoke`
//!
//! Starts a loopback OTLP receiver of its own (HTTP/1.1 for OTLP/HTTP, HTTP/2 without TLS for
//! OTLP/gRPC, on one port), exports a run's spans to it over HTTP (and over gRPC with the
//! feature `grpc`), and checks that they arrived: one trace, `invoke_agent weather` the parent
//! of its two `chat` spans and its `execute_tool get_weather`. It also checks that the compact
//! log lines are shorter than the default's. No collector, no network.

use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::process::ExitCode;

use hookchain::prelude::*;
use hookchain::{Usage, chain, hook, tool};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use serde_json::json;
use tracing::instrument::WithSubscriber as _;
use tracing::{Dispatch, Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::{FormatTime as _, SystemTime};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::layer::{Context as LayerContext, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer};

type BoxError = Box<dyn StdError + Send + Sync>;

/// Says in the log which request goes out (an event inside the `invoke_agent` span).
#[hook(before_model)]
fn log_request(cx: &mut Context, request: &mut ModelRequest) {
    tracing::info!(
        step = cx.step(),
        messages = request.messages.len(),
        "sending a request"
    );
}

/// Current weather for a city.
#[tool(name = "get_weather")]
async fn weather(
    /// The city to look up.
    city: String,
) -> String {
    tracing::info!(city, "looking up the weather");
    format!("{city}: 18°C, light rain")
}

/// The agent the program runs: a scripted model that asks for the weather, then answers.
fn agent() -> Result<Agent<ScriptedModel, impl Middleware>, hookchain::agent::AgentBuildError> {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new(
            "call_1",
            "get_weather",
            json!({ "city": "Lisbon" }),
        )])
        .with_usage(Usage::new(30, 12)),
        ModelResponse::text("It is 18°C with light rain in Lisbon.").with_usage(Usage::new(42, 9)),
    ]);
    Agent::builder(model)
        .name("weather")
        .tool(weather)
        .chain(chain![log_request])
        .build()
}

/// Where the spans go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    /// OTLP over HTTP, protobuf-encoded (the collector's port 4318, path `/v1/traces`).
    Http,
    /// OTLP over gRPC (the collector's port 4317).
    #[cfg(feature = "grpc")]
    Grpc,
}

/// The tracer provider that batches spans and exports them over `transport`, to `endpoint`
/// or to where the `OTEL_EXPORTER_OTLP_*` variables say (by default, a collector on this
/// machine). Built inside a Tokio runtime: the gRPC channel runs on it.
fn tracer_provider(
    transport: Transport,
    endpoint: Option<String>,
) -> Result<SdkTracerProvider, BoxError> {
    let exporter = match transport {
        Transport::Http => {
            let builder = SpanExporter::builder()
                .with_http()
                .with_protocol(Protocol::HttpBinary);
            match endpoint {
                Some(endpoint) => builder.with_endpoint(endpoint),
                None => builder,
            }
            .build()?
        }
        #[cfg(feature = "grpc")]
        Transport::Grpc => {
            let builder = SpanExporter::builder().with_tonic();
            match endpoint {
                Some(endpoint) => builder.with_endpoint(endpoint),
                None => builder,
            }
            .build()?
        }
    };
    Ok(SdkTracerProvider::builder()
        .with_resource(
            Resource::builder()
                .with_service_name("hookchain-example")
                .build(),
        )
        .with_batch_exporter(exporter)
        .build())
}

/// The recipe's subscriber: `RUST_LOG` (default `info`) filters; the spans go to
/// OpenTelemetry through `provider`, the events to stderr, one compact line each.
fn subscriber(provider: &SdkTracerProvider) -> impl Subscriber + Send + Sync + 'static {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::registry()
        .with(filter)
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("hookchain-example")))
        .with(RunIds)
        .with(
            tracing_subscriber::fmt::layer()
                .event_format(RunFormat)
                .with_writer(std::io::stderr),
        )
}

// ---------------------------------------------------------------------------------------------
// The compact log format
// ---------------------------------------------------------------------------------------------

/// Keeps the id of each run's span (`hookchain.run.id`, recorded as the `invoke_agent` span
/// opens) where [`RunFormat`] finds it: the span's extensions.
#[derive(Debug)]
struct RunIds;

/// A run's id, in the extensions of its `invoke_agent` span.
struct RunId(String);

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for RunIds {
    fn on_new_span(
        &self,
        attributes: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        cx: LayerContext<'_, S>,
    ) {
        let mut run_id = RunIdField(None);
        attributes.record(&mut run_id);
        if let (Some(run_id), Some(span)) = (run_id.0, cx.span(id)) {
            span.extensions_mut().insert(RunId(run_id));
        }
    }
}

/// Reads the `hookchain.run.id` field.
struct RunIdField(Option<String>);

impl tracing::field::Visit for RunIdField {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "hookchain.run.id" {
            self.0 = Some(value.to_owned());
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn fmt::Debug) {
        if field.name() == "hookchain.run.id" {
            self.0 = Some(format!("{value:?}"));
        }
    }
}

/// One short line per event: the time, the level, `run=` the run's id, the innermost span's
/// name (`chat`, `execute_tool`; none directly in the run's span), then the event's message
/// and fields. The spans' own fields are left out: they are in the spans.
///
/// ```text
/// 2026-11-27T09:18:29.751871Z  INFO run=d7d64e8be5e415eaf847f65b3ce07127: sending a request step=1 messages=1
/// 2026-11-27T09:18:29.751910Z  INFO run=d7d64e8be5e415eaf847f65b3ce07127 execute_tool: looking up the weather city="Lisbon"
/// ```
#[derive(Debug)]
struct RunFormat;

impl<S, N> FormatEvent<S, N> for RunFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        cx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        SystemTime.format_time(&mut writer)?;
        write!(writer, " {:>5}", event.metadata().level())?;
        if let Some(scope) = cx.event_scope() {
            let mut innermost = None;
            for span in scope {
                innermost.get_or_insert(span.name());
                if let Some(RunId(run_id)) = span.extensions().get::<RunId>() {
                    write!(writer, " run={run_id}")?;
                    break;
                }
            }
            if let Some(name) = innermost.filter(|name| *name != "invoke_agent") {
                write!(writer, " {name}")?;
            }
        }
        writer.write_str(": ")?;
        cx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

// ---------------------------------------------------------------------------------------------
// The program
// ---------------------------------------------------------------------------------------------

fn main() -> ExitCode {
    let mut smoke = false;
    let mut grpc = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--smoke" => smoke = true,
            "--grpc" => grpc = true,
            _ => {
                eprintln!(
                    "usage: observability [--smoke] [--grpc]\n\n\
                     --grpc      export over OTLP/gRPC (needs the feature `grpc`)\n\
                     --smoke     export to a loopback receiver of its own, and check what arrived"
                );
                return ExitCode::from(2);
            }
        }
    }
    let transport = match grpc {
        false => Transport::Http,
        #[cfg(feature = "grpc")]
        true => Transport::Grpc,
        #[cfg(not(feature = "grpc"))]
        true => {
            eprintln!(
                "--grpc needs the feature `grpc`: \
                 cargo run -p hookchain-observability-example --features grpc -- --grpc"
            );
            return ExitCode::from(2);
        }
    };
    let outcome = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(BoxError::from)
        .and_then(|runtime| {
            if smoke {
                smoke_test(&runtime)
            } else {
                export(&runtime, transport)
            }
        });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", hookchain::error::Report(error.as_ref()));
            ExitCode::FAILURE
        }
    }
}

/// The recipe: the subscriber installed for the whole program, one run, the spans flushed.
fn export(runtime: &tokio::runtime::Runtime, transport: Transport) -> Result<(), BoxError> {
    let provider = {
        let _runtime = runtime.enter();
        tracer_provider(transport, None)?
    };
    subscriber(&provider).try_init()?;
    let output = runtime.block_on(async { agent()?.run("What's the weather in Lisbon?").await })?;
    println!("{}", output.text().unwrap_or_default());
    // Exports the spans still in the batch: a collector that did not take them is reported
    // here (`shutdown` flushes too, but does not say whether the export failed).
    provider.force_flush()?;
    provider.shutdown()?;
    Ok(())
}

/// `--smoke`: the log lines measured, then a run exported over each transport to a loopback
/// receiver, checked.
fn smoke_test(runtime: &tokio::runtime::Runtime) -> Result<(), BoxError> {
    let (full, compact) = runtime.block_on(measure_lines())?;
    println!("the log of a run at TRACE, default format: {full}; its longest line:");
    println!("{}", full.longest);
    println!("compact: {compact}; its longest line:");
    println!("{}", compact.longest);
    if compact.max >= full.min || compact.mean * 2 > full.mean {
        return Err(format!("the compact lines ({compact}) are not short enough ({full})").into());
    }

    let receiver = runtime.block_on(receiver::start())?;
    let http = (
        Transport::Http,
        format!("http://{}/v1/traces", receiver.addr),
    );
    #[cfg(feature = "grpc")]
    let transports = [http, (Transport::Grpc, format!("http://{}", receiver.addr))];
    #[cfg(not(feature = "grpc"))]
    let transports = [http];
    for (transport, endpoint) in transports {
        let provider = {
            let _runtime = runtime.enter();
            tracer_provider(transport, Some(endpoint))?
        };
        let output = runtime.block_on(
            async { agent()?.run("What's the weather in Lisbon?").await }
                .with_subscriber(Dispatch::new(subscriber(&provider))),
        )?;
        assert_eq!(
            output.text().as_deref(),
            Some("It is 18°C with light rain in Lisbon.")
        );
        provider.force_flush()?;
        provider.shutdown()?;
        let spans = receiver.take(transport);
        check_trace(&spans).map_err(|error| format!("over {transport:?}: {error}"))?;
        println!(
            "{transport:?}: {} spans received in one trace: {}",
            spans.len(),
            spans
                .iter()
                .map(|span| span.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    println!("smoke test passed");
    Ok(())
}

/// One trace: `invoke_agent weather` with, as its children, two `chat` spans and an
/// `execute_tool get_weather`.
fn check_trace(spans: &[receiver::Span]) -> Result<(), String> {
    let names: Vec<&str> = spans.iter().map(|span| span.name.as_str()).collect();
    let root = spans
        .iter()
        .find(|span| span.name == "invoke_agent weather")
        .ok_or_else(|| format!("no `invoke_agent weather` span among {names:?}"))?;
    let children = |prefix: &str| {
        spans
            .iter()
            .filter(|span| span.name.starts_with(prefix) && span.parent == root.id)
            .count()
    };
    if spans.iter().any(|span| span.trace != root.trace) {
        return Err(format!("the spans are not one trace: {spans:?}"));
    }
    if children("chat") != 2 || children("execute_tool get_weather") != 1 {
        return Err(format!(
            "expected two `chat` spans and an `execute_tool get_weather` under the run, got {names:?}"
        ));
    }
    if !root.attributes.iter().any(|key| key == "hookchain.run.id") {
        return Err(format!(
            "the run's span has no `hookchain.run.id`: {:?}",
            root.attributes
        ));
    }
    Ok(())
}

/// The lengths of a set of lines, in characters.
#[derive(Debug, Clone)]
struct Lengths {
    lines: usize,
    min: usize,
    mean: usize,
    max: usize,
    longest: String,
}

impl Lengths {
    fn of(text: &str) -> Lengths {
        let lengths: Vec<usize> = text.lines().map(|line| line.chars().count()).collect();
        Lengths {
            lines: lengths.len(),
            min: lengths.iter().copied().min().unwrap_or(0),
            mean: lengths.iter().sum::<usize>() / lengths.len().max(1),
            max: lengths.iter().copied().max().unwrap_or(0),
            longest: text
                .lines()
                .max_by_key(|line| line.chars().count())
                .unwrap_or_default()
                .to_owned(),
        }
    }
}

impl fmt::Display for Lengths {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} lines of {} to {} characters, {} on average",
            self.lines, self.min, self.max, self.mean
        )
    }
}

/// The same run logged at `TRACE` with `tracing_subscriber::fmt`'s default format and with
/// [`RunFormat`], measured.
async fn measure_lines() -> Result<(Lengths, Lengths), BoxError> {
    let full = Captured::default();
    let default_format = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(full.clone())
        .finish();
    logged_run(default_format).await?;

    let compact = Captured::default();
    let compact_format = tracing_subscriber::registry()
        .with(RunIds)
        .with(
            tracing_subscriber::fmt::layer()
                .event_format(RunFormat)
                .with_writer(compact.clone()),
        )
        .with(tracing_subscriber::filter::LevelFilter::TRACE);
    logged_run(compact_format).await?;
    Ok((Lengths::of(&full.text()), Lengths::of(&compact.text())))
}

/// A run of the agent with `subscriber` as the default while it runs.
fn logged_run(
    subscriber: impl Subscriber + Send + Sync + 'static,
) -> impl Future<Output = Result<(), BoxError>> {
    async {
        agent()?.run("What's the weather in Lisbon?").await?;
        Ok(())
    }
    .with_subscriber(Dispatch::new(subscriber))
}

/// A log written into memory.
#[derive(Debug, Clone, Default)]
struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Captured {
    fn text(&self) -> String {
        let bytes = self.0.lock().map(|bytes| bytes.clone()).unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut captured) = self.0.lock() {
            captured.extend_from_slice(bytes);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;

    fn make_writer(&'a self) -> Captured {
        self.clone()
    }
}

/// The smoke test's OTLP receiver: what a collector does with the requests, reduced to
/// decoding them and keeping their spans.
mod receiver {
    use std::collections::VecDeque;
    use std::convert::Infallible;
    use std::net::SocketAddr;
    use std::pin::Pin;
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll};

    use axum::Router;
    use axum::body::{Body, Bytes};
    use axum::extract::State;
    use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
    use axum::response::{IntoResponse, Response};
    use axum::routing::post;
    use http_body::Frame;
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use prost::Message as _;

    use super::{BoxError, Transport};

    /// A span as received.
    #[derive(Debug, Clone)]
    pub(super) struct Span {
        pub(super) name: String,
        pub(super) trace: Vec<u8>,
        pub(super) id: Vec<u8>,
        pub(super) parent: Vec<u8>,
        /// The attributes' keys.
        pub(super) attributes: Vec<String>,
    }

    /// The spans received, by transport.
    type Received = Arc<Mutex<Vec<(Transport, Span)>>>;

    /// The running receiver.
    pub(super) struct Receiver {
        pub(super) addr: SocketAddr,
        received: Received,
    }

    impl Receiver {
        /// The spans received over `transport` so far, taken.
        pub(super) fn take(&self, transport: Transport) -> Vec<Span> {
            let Ok(mut received) = self.received.lock() else {
                return Vec::new();
            };
            let (taken, kept) = received.drain(..).partition(|(over, _)| *over == transport);
            *received = kept;
            taken.into_iter().map(|(_, span)| span).collect()
        }
    }

    /// Serves OTLP/HTTP (`POST /v1/traces`) and OTLP/gRPC (`TraceService/Export`) on a
    /// loopback port of its own, until the program ends.
    pub(super) async fn start() -> Result<Receiver, BoxError> {
        let received = Received::default();
        let app = Router::new()
            .route("/v1/traces", post(http_export))
            .route(
                "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
                post(grpc_export),
            )
            .with_state(received.clone());
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        tokio::spawn(async move { axum::serve(listener, app).await });
        Ok(Receiver { addr, received })
    }

    /// Keeps the spans of an export request.
    fn keep(received: &Received, transport: Transport, request: ExportTraceServiceRequest) {
        let spans = request
            .resource_spans
            .into_iter()
            .flat_map(|resource| resource.scope_spans)
            .flat_map(|scope| scope.spans)
            .map(|span| Span {
                name: span.name,
                trace: span.trace_id,
                id: span.span_id,
                parent: span.parent_span_id,
                attributes: span.attributes.into_iter().map(|kv| kv.key).collect(),
            });
        if let Ok(mut received) = received.lock() {
            received.extend(spans.map(|span| (transport, span)));
        }
    }

    /// OTLP/HTTP: the request's body is the protobuf message; an empty answer is a full
    /// success.
    async fn http_export(State(received): State<Received>, body: Bytes) -> Response {
        match ExportTraceServiceRequest::decode(body) {
            Ok(request) => {
                keep(&received, Transport::Http, request);
                (
                    [(header::CONTENT_TYPE, "application/x-protobuf")],
                    Bytes::new(),
                )
                    .into_response()
            }
            Err(error) => (StatusCode::BAD_REQUEST, error.to_string()).into_response(),
        }
    }

    /// OTLP/gRPC: the body is one length-prefixed message (a flag byte for compression, then
    /// four bytes of length); the answer is an empty message, then the `grpc-status` trailer.
    async fn grpc_export(State(received): State<Received>, body: Bytes) -> Response {
        let message = match body.get(..5) {
            Some([0, length @ ..]) => {
                let length = u32::from_be_bytes([length[0], length[1], length[2], length[3]]);
                body.get(5..5 + length as usize)
            }
            _ => None,
        };
        let status = match message.map(ExportTraceServiceRequest::decode) {
            Some(Ok(request)) => {
                #[cfg(feature = "grpc")]
                keep(&received, Transport::Grpc, request);
                #[cfg(not(feature = "grpc"))]
                let _ = (request, &received);
                "0"
            }
            // INVALID_ARGUMENT
            _ => "3",
        };
        let mut trailers = HeaderMap::new();
        trailers.insert("grpc-status", HeaderValue::from_static(status));
        let frames = VecDeque::from([
            Frame::data(Bytes::from_static(&[0, 0, 0, 0, 0])),
            Frame::trailers(trailers),
        ]);
        (
            [(header::CONTENT_TYPE, "application/grpc")],
            Body::new(Frames(frames)),
        )
            .into_response()
    }

    /// A body of the given frames, trailers included.
    struct Frames(VecDeque<Frame<Bytes>>);

    impl http_body::Body for Frames {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            Poll::Ready(self.get_mut().0.pop_front().map(Ok))
        }
    }
}
