//! Classifying failures: HTTP statuses and error bodies, transport errors, bad answers.

use std::fmt;
use std::time::{Duration, SystemTime};

use hookchain_core::{ModelError, ModelErrorKind};
use reqwest::StatusCode;
use reqwest::header::HeaderMap;

use super::delay_in_message::delay_in_message;
use super::error_codes::{kind_of_code, kind_of_reason};

/// The longest provider error text kept, in bytes: enough for any real message, bounded for an
/// HTML error page from a proxy.
const MAX_BODY: usize = 2000;

/// The error a provider's server reported: the [`source`](std::error::Error::source) of a
/// [`ModelError`] that came from an error status or an error event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    status: Option<u16>,
    error_type: Option<String>,
    code: Option<String>,
    reason: Option<String>,
    message: String,
}

impl ApiError {
    /// The HTTP status, if the error came with one (not for an error event inside a stream).
    #[must_use]
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    /// The provider's error type (`invalid_request_error`, `overloaded_error`, …), if given.
    #[must_use]
    pub fn error_type(&self) -> Option<&str> {
        self.error_type.as_deref()
    }

    /// The provider's error code (`context_length_exceeded`, `rate_limit_exceeded`, …), if given.
    #[must_use]
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// The `reason` of a Google `ErrorInfo` detail (`API_KEY_INVALID`, …), if given (Gemini).
    #[must_use]
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// The provider's message, or the raw body (shortened) when it was not the usual JSON.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Reads an error body leniently: `{"error": {"message", "type", "code"}}` (OpenAI and
    /// most compatible servers), `{"type": "error", "error": {...}}` (Anthropic),
    /// `{"error": {"code": 429, "message", "status": "RESOURCE_EXHAUSTED"}}` (Gemini: its
    /// `status` is the type, and an `ErrorInfo` among its `details` may give a `reason`),
    /// `{"error": "text"}` (Ollama), or any other text as the message.
    pub(crate) fn parse(status: Option<u16>, body: &str, secrets: &[String]) -> Self {
        let mut error = ApiError {
            status,
            error_type: None,
            code: None,
            reason: None,
            message: String::new(),
        };
        match serde_json::from_str::<serde_json::Value>(body) {
            Ok(value) => {
                let inner = value.get("error").unwrap_or(&value);
                if let Some(text) = inner.as_str() {
                    error.message = text.to_owned();
                } else {
                    error.message = text_field(inner, "message")
                        .or_else(|| text_field(inner, "detail"))
                        .unwrap_or_else(|| shorten(body));
                    // A textual `status` only: Azure sends the HTTP status as a number there.
                    error.error_type = text_field(inner, "type").or_else(|| {
                        inner
                            .get("status")
                            .and_then(serde_json::Value::as_str)
                            .map(str::to_owned)
                    });
                    error.code = text_field(inner, "code");
                    error.reason = error_info_reason(inner);
                }
            }
            Err(_) => error.message = shorten(body),
        }
        for secret in secrets.iter().filter(|secret| !secret.is_empty()) {
            error.message = error.message.replace(secret.as_str(), "[redacted]");
        }
        error
    }
}

impl ApiError {
    /// The error with `error_type` as its type (an AWS exception's name, from a header or an
    /// event stream's message).
    #[cfg(feature = "bedrock")]
    pub(crate) fn with_type(mut self, error_type: &str) -> Self {
        self.error_type = Some(error_type.to_owned());
        self
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = if self.message.is_empty() {
            "(no error message)"
        } else {
            &self.message
        };
        match &self.error_type {
            Some(kind) => write!(f, "{kind}: {message}"),
            None => f.write_str(message),
        }
    }
}

impl std::error::Error for ApiError {}

/// A string field, or a number as text (llama.cpp sends numeric codes).
fn text_field(value: &serde_json::Value, key: &str) -> Option<String> {
    match value.get(key)? {
        serde_json::Value::String(text) => Some(text.clone()),
        serde_json::Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// The `reason` of the first `ErrorInfo` among Google's `details`
/// (`{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", …}`).
fn error_info_reason(error: &serde_json::Value) -> Option<String> {
    let details = error.get("details")?.as_array()?;
    details.iter().find_map(|detail| {
        let kind = detail.get("@type")?.as_str()?;
        if !kind.ends_with("google.rpc.ErrorInfo") {
            return None;
        }
        text_field(detail, "reason")
    })
}

fn shorten(body: &str) -> String {
    let body = body.trim();
    if body.len() <= MAX_BODY {
        return body.to_owned();
    }
    let mut end = MAX_BODY;
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &body[..end])
}

/// The kind of an error the server reported, from its status and what its body says. Where
/// the status blames the request (4xx), or there is none (an event of a stream), the
/// provider's own code or reason decides first if it names a kind (see `error_codes`): a 400
/// may be a flagged prompt or a wrong key. A 5xx is the server's failure whatever its code.
fn kind_of(status: Option<u16>, error: &ApiError) -> ModelErrorKind {
    if status.is_none_or(|status| (400..500).contains(&status))
        && let Some(kind) = named_kind(error)
    {
        return kind;
    }
    let said = format!(
        "{} {} {}",
        error.message,
        error.error_type.as_deref().unwrap_or(""),
        error.code.as_deref().unwrap_or("")
    )
    .to_lowercase();
    let says = |needles: &[&str]| needles.iter().any(|needle| said.contains(needle));
    if says(&["overloaded_error"]) || status == Some(529) {
        return ModelErrorKind::Overloaded;
    }
    let client_error = status.is_none_or(|status| (400..500).contains(&status) && status != 429);
    if client_error
        && says(&[
            "context_length_exceeded",
            "context length",
            "context window",
            "context size",
            "maximum context",
            "prompt is too long",
            "exceed_context_size",
            // Gemini: "The input token count (…) exceeds the maximum number of tokens allowed".
            "exceeds the maximum number of tokens",
            // Bedrock: "Input is too long for requested model."
            "input is too long",
        ])
    {
        return ModelErrorKind::ContextLengthExceeded;
    }
    if client_error
        && says(&[
            "content_filter",
            "content_policy",
            "content management policy",
        ])
    {
        return ModelErrorKind::ContentFiltered;
    }
    match status {
        Some(429) if says(&["insufficient_quota"]) => ModelErrorKind::Other,
        Some(429) => ModelErrorKind::RateLimited,
        Some(401 | 403) => ModelErrorKind::Authentication,
        Some(408 | 504) => ModelErrorKind::Timeout,
        Some(500..=599) => ModelErrorKind::Overloaded,
        Some(400..=499) => ModelErrorKind::InvalidRequest,
        Some(_) => ModelErrorKind::Other,
        // An error event inside a stream: its type is all there is (Gemini's are gRPC
        // statuses, Bedrock's AWS exceptions).
        None if says(&["rate_limit", "resource_exhausted", "throttlingexception"]) => {
            ModelErrorKind::RateLimited
        }
        None if says(&[
            "authentication_error",
            "permission_error",
            "unauthenticated",
            "permission_denied",
            "accessdeniedexception",
        ]) =>
        {
            ModelErrorKind::Authentication
        }
        None if says(&[
            "invalid_request",
            "invalid_argument",
            "failed_precondition",
            "validationexception",
        ]) =>
        {
            ModelErrorKind::InvalidRequest
        }
        None if says(&["deadline_exceeded", "modeltimeoutexception"]) => ModelErrorKind::Timeout,
        None if says(&[
            "api_error",
            "server_error",
            "unavailable",
            "internal",
            "modelstreamerrorexception",
        ]) =>
        {
            ModelErrorKind::Overloaded
        }
        None => ModelErrorKind::Other,
    }
}

/// The kind the error's code (or its type, where it has no code that names one) or its
/// Google `ErrorInfo` reason names, if any.
fn named_kind(error: &ApiError) -> Option<ModelErrorKind> {
    [error.code.as_deref(), error.error_type.as_deref()]
        .into_iter()
        .flatten()
        .find_map(|code| kind_of_code(code, &error.message))
        .or_else(|| error.reason.as_deref().and_then(kind_of_reason))
}

/// The error for an error the server reported, in a status or an event of a stream. A rate
/// limit that no header or field gave a delay for may give it in its message ("Please try
/// again in 2.6s.": OpenAI's stream errors and `response.failed` have no other).
pub(crate) fn classify_api_error(
    provider: &str,
    error: ApiError,
    retry_after: Option<Duration>,
) -> ModelError {
    let kind = kind_of(error.status, &error);
    let retry_after = retry_after.or_else(|| {
        (kind == ModelErrorKind::RateLimited)
            .then(|| delay_in_message(&error.message))
            .flatten()
    });
    let message = match error.status {
        Some(status) => {
            let status = StatusCode::from_u16(status)
                .map(|status| status.to_string())
                .unwrap_or_else(|_| status.to_string());
            format!("{provider} request failed: {kind} (HTTP {status})")
        }
        None => format!("{provider} request failed: {kind} (an error event in the stream)"),
    };
    let mut model_error = ModelError::new(kind, message);
    if let Some(status) = error.status {
        model_error = model_error.with_status(status);
    }
    if let Some(delay) = retry_after {
        model_error = model_error.with_retry_after(delay);
    }
    model_error.with_source(error)
}

/// The error for a non-success HTTP status.
pub(crate) fn classify_status(
    provider: &str,
    status: StatusCode,
    headers: &HeaderMap,
    body: &str,
    secrets: &[String],
) -> ModelError {
    let mut error = ApiError::parse(Some(status.as_u16()), body, secrets);
    // AWS names the error in a header (`ThrottlingException:http://internal.amazon.com/…`).
    if error.error_type.is_none()
        && let Some(name) = headers
            .get("x-amzn-errortype")
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split(':').next())
            .filter(|name| !name.is_empty())
    {
        error.error_type = Some(name.to_owned());
    }
    let delay = retry_after(headers, SystemTime::now()).or_else(|| retry_delay_in_body(body));
    classify_api_error(provider, error, delay)
}

/// The delay an error body asks for when no header does: Google's `RetryInfo` detail
/// (`{"error": {"details": [{"@type": "…RetryInfo", "retryDelay": "37s"}]}}`, Gemini's 429).
fn retry_delay_in_body(body: &str) -> Option<Duration> {
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    let details = value.get("error")?.get("details")?.as_array()?;
    details.iter().find_map(|detail| {
        let delay = detail
            .get("retryDelay")?
            .as_str()?
            .trim()
            .strip_suffix('s')?;
        Duration::try_from_secs_f64(delay.parse().ok()?).ok()
    })
}

/// How long the server asked to wait: `retry-after-ms` (OpenAI), or `retry-after` in seconds or
/// as an HTTP date (RFC 9110); a date in the past means no wait.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name)?.to_str().ok().map(str::trim);
    if let Some(millis) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return Duration::try_from_secs_f64(millis / 1000.0).ok();
    }
    let value = header("retry-after")?;
    if let Ok(seconds) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds).ok();
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The error for a failure to send the request or read the answer.
pub(crate) fn classify_transport(provider: &str, error: reqwest::Error) -> ModelError {
    let model_error = if error.is_timeout() {
        ModelError::timeout(format!("{provider} request failed: timed out"))
    } else if error.is_connect() {
        ModelError::connection(format!(
            "{provider} request failed: could not connect to the server"
        ))
    } else if error.is_body() || error.is_decode() || error.is_request() {
        ModelError::connection(format!(
            "{provider} request failed: the connection broke before the answer was complete"
        ))
    } else {
        ModelError::other(format!("{provider} request failed"))
    };
    // reqwest's message names the URL, whose query may hold a key.
    model_error.with_source(error.without_url())
}

/// A `MalformedResponse` error: the answer arrived but cannot be understood.
pub(crate) fn malformed(provider: &str, what: &str) -> ModelError {
    ModelError::malformed_response(format!("{provider} request failed: {what}"))
}

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderValue;

    use super::*;

    fn classify(status: u16, body: &str) -> ModelError {
        let status = StatusCode::from_u16(status).unwrap();
        classify_status("openai", status, &HeaderMap::new(), body, &[])
    }

    #[test]
    fn statuses_map_to_kinds() {
        use ModelErrorKind::*;
        for (status, kind) in [
            (429, RateLimited),
            (500, Overloaded),
            (502, Overloaded),
            (503, Overloaded),
            (529, Overloaded),
            (504, Timeout),
            (408, Timeout),
            (401, Authentication),
            (403, Authentication),
            (400, InvalidRequest),
            (404, InvalidRequest),
            (422, InvalidRequest),
        ] {
            let error = classify(status, "");
            assert_eq!(error.kind(), kind, "HTTP {status}");
            assert_eq!(error.status(), Some(status));
        }
    }

    #[test]
    fn context_length_is_recognised_in_every_dialect() {
        for body in [
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens","type":"BadRequestError","param":null,"code":400}"#,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}"#,
        ] {
            let error = classify(400, body);
            assert_eq!(
                error.kind(),
                ModelErrorKind::ContextLengthExceeded,
                "{body}"
            );
        }
    }

    #[test]
    fn the_provider_text_is_the_source_not_the_message() {
        let error = classify(
            400,
            r#"{"error":{"message":"Unknown parameter: 'foo'.","type":"invalid_request_error","code":"unknown_parameter"}}"#,
        );
        assert_eq!(
            error.to_string(),
            "openai request failed: invalid request (HTTP 400 Bad Request)"
        );
        let source = std::error::Error::source(&error).unwrap();
        assert_eq!(
            source.to_string(),
            "invalid_request_error: Unknown parameter: 'foo'."
        );
        let api = source.downcast_ref::<ApiError>().unwrap();
        assert_eq!(api.code(), Some("unknown_parameter"));
    }

    #[test]
    fn odd_bodies_are_kept_as_text() {
        let api = ApiError::parse(Some(502), "<html>Bad gateway</html>", &[]);
        assert_eq!(api.message(), "<html>Bad gateway</html>");
        let api = ApiError::parse(Some(404), r#"{"error":"model 'x' not found"}"#, &[]);
        assert_eq!(api.message(), "model 'x' not found");
        let long = "é".repeat(3000);
        assert!(ApiError::parse(Some(500), &long, &[]).message().len() <= MAX_BODY + 3);
    }

    #[test]
    fn secrets_are_redacted_from_error_bodies() {
        let secrets = ["sk-secret-123".to_owned()];
        let api = ApiError::parse(Some(401), r#"{"error":"bad key sk-secret-123"}"#, &secrets);
        assert_eq!(api.message(), "bad key [redacted]");
    }

    #[test]
    fn overloaded_and_content_filter_bodies() {
        let overloaded =
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(classify(529, overloaded).kind(), ModelErrorKind::Overloaded);
        let api = ApiError::parse(None, overloaded, &[]);
        assert_eq!(
            classify_api_error("anthropic", api, None).kind(),
            ModelErrorKind::Overloaded
        );
        let filtered = r#"{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","type":null,"param":"prompt","code":"content_filter","status":400}}"#;
        assert_eq!(
            classify(400, filtered).kind(),
            ModelErrorKind::ContentFiltered
        );
        let quota = r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#;
        assert!(!classify(429, quota).is_retryable());
    }

    #[test]
    fn gemini_errors_keep_their_status_as_type_and_their_retry_delay() {
        let body = r#"{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}"#;
        let error = classify(429, body);
        assert_eq!(error.kind(), ModelErrorKind::RateLimited);
        assert_eq!(error.retry_after(), Some(Duration::from_secs(37)));
        let api = std::error::Error::source(&error)
            .unwrap()
            .downcast_ref::<ApiError>()
            .unwrap();
        assert_eq!(api.error_type(), Some("RESOURCE_EXHAUSTED"));
        assert_eq!(api.code(), Some("429"));
        let long = r#"{"error":{"code":400,"message":"The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#;
        assert_eq!(
            classify(400, long).kind(),
            ModelErrorKind::ContextLengthExceeded
        );
        for (status, kind) in [
            ("RESOURCE_EXHAUSTED", ModelErrorKind::RateLimited),
            ("UNAVAILABLE", ModelErrorKind::Overloaded),
            ("INTERNAL", ModelErrorKind::Overloaded),
            ("INVALID_ARGUMENT", ModelErrorKind::InvalidRequest),
            ("PERMISSION_DENIED", ModelErrorKind::Authentication),
            ("DEADLINE_EXCEEDED", ModelErrorKind::Timeout),
        ] {
            let body = format!(r#"{{"error":{{"code":1,"message":"m","status":"{status}"}}}}"#);
            let api = ApiError::parse(None, &body, &[]);
            assert_eq!(classify_api_error("g", api, None).kind(), kind, "{status}");
        }
    }

    #[test]
    fn an_error_info_reason_is_kept_and_a_refused_key_is_authentication() {
        let body = r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]}}"#;
        let error = classify(400, body);
        assert_eq!(error.kind(), ModelErrorKind::Authentication);
        let api = ApiError::parse(Some(400), body, &[]);
        assert_eq!(api.reason(), Some("API_KEY_INVALID"));
        // In a stream's error chunk, the same.
        let api = ApiError::parse(None, body, &[]);
        assert_eq!(
            classify_api_error("gemini", api, None).kind(),
            ModelErrorKind::Authentication
        );
        // Only an `ErrorInfo` gives a reason; odd details are ignored.
        for details in [
            r#"[{"@type":"type.googleapis.com/google.rpc.BadRequest","reason":"API_KEY_INVALID"}]"#,
            r#"[{"reason":"API_KEY_INVALID"}]"#,
            r#"[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":7}]"#,
            r#"[null, 3, "x", []]"#,
            r#"{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}"#,
        ] {
            let body = format!(
                r#"{{"error":{{"code":400,"message":"m","status":"INVALID_ARGUMENT","details":{details}}}}}"#
            );
            let error = classify(400, &body);
            assert_eq!(error.kind(), ModelErrorKind::InvalidRequest, "{details}");
        }
    }

    #[test]
    fn a_flagged_prompt_is_content_filtered_whatever_its_status() {
        let body = r#"{"error":{"message":"Invalid prompt: your prompt was flagged as potentially violating our usage policy. Please try again with a different prompt: https://platform.openai.com/docs/guides/reasoning#advice-on-prompting","type":"invalid_request_error","param":null,"code":"invalid_prompt"}}"#;
        let error = classify(400, body);
        assert_eq!(error.kind(), ModelErrorKind::ContentFiltered);
        assert_eq!(error.retry_after(), None, "\"try again with\" is no delay");
    }

    #[test]
    fn a_server_failure_keeps_its_status_kind_whatever_its_code() {
        let body = r#"{"error":{"message":"Gateway timeout.","type":"server_error","code":"rate_limit_exceeded"}}"#;
        assert_eq!(classify(504, body).kind(), ModelErrorKind::Timeout);
        assert_eq!(classify(502, body).kind(), ModelErrorKind::Overloaded);
        assert_eq!(classify(400, body).kind(), ModelErrorKind::RateLimited);
    }

    #[test]
    fn a_rate_limits_message_gives_the_delay_no_header_gave() {
        let body = r#"{"error":{"message":"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 28000, Requested 2600. Please try again in 1.2s.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#;
        assert_eq!(
            classify(429, body).retry_after(),
            Some(Duration::from_millis(1200))
        );
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("7"));
        let status = StatusCode::TOO_MANY_REQUESTS;
        let error = classify_status("openai", status, &headers, body, &[]);
        assert_eq!(error.retry_after(), Some(Duration::from_secs(7)));
        // A delay in the message of another kind of error is not a wait asked for.
        let body = r#"{"error":{"message":"The server is restarting: try again in 5s.","type":"server_error"}}"#;
        let error = classify(503, body);
        assert_eq!(error.kind(), ModelErrorKind::Overloaded);
        assert_eq!(error.retry_after(), None);
    }

    #[test]
    fn retry_after_in_seconds_milliseconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers, now), None);
        headers.insert("retry-after", HeaderValue::from_static("20"));
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(20)));
        let in_90s = httpdate::fmt_http_date(now + Duration::from_secs(90));
        headers.insert("retry-after", HeaderValue::from_str(&in_90s).unwrap());
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(90)));
        let past = httpdate::fmt_http_date(now - Duration::from_secs(90));
        headers.insert("retry-after", HeaderValue::from_str(&past).unwrap());
        assert_eq!(retry_after(&headers, now), Some(Duration::ZERO));
        headers.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&headers, now), None);
        headers.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(
            retry_after(&headers, now),
            Some(Duration::from_millis(1500))
        );
    }
}
