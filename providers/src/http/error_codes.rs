//! What the providers' own error codes mean, whatever the HTTP status says (or where none is:
//! an error event in a stream): OpenAI's `code` (`invalid_prompt` is a 400 that is a content
//! filter; `too_many_requests` in a stream is a rate limit) and the `reason` of Google's
//! `ErrorInfo` (`API_KEY_INVALID` is a 400 that is a wrong key).
//!
//! Only codes whose meaning is plain are here; any other leaves the status and the text to
//! decide.

use hookchain_core::ModelErrorKind;

/// The kind an OpenAI-style error `code` names (the `code`, or where it has none, the `type`):
/// the Responses API's `ResponseError` codes, and those of its error events.
pub(super) fn kind_of_code(code: &str, message: &str) -> Option<ModelErrorKind> {
    let kind = match code.to_ascii_lowercase().as_str() {
        "rate_limit_exceeded" | "too_many_requests" => ModelErrorKind::RateLimited,
        "server_error" | "overloaded" | "server_is_overloaded" | "service_unavailable" => {
            ModelErrorKind::Overloaded
        }
        "vector_store_timeout" => ModelErrorKind::Timeout,
        "context_length_exceeded" => ModelErrorKind::ContextLengthExceeded,
        // "Invalid prompt: your prompt was flagged as potentially violating our usage policy",
        // or "…limited access to this content for safety reasons": the prompt is fine as a
        // request, the policy refused it.
        "invalid_prompt" if says_it_was_refused(message) => ModelErrorKind::ContentFiltered,
        "bio_policy"
        | "misalignment_policy_violation"
        | "image_content_policy_violation"
        | "content_policy_violation" => ModelErrorKind::ContentFiltered,
        "invalid_prompt"
        | "data_residency_mismatch"
        | "invalid_image"
        | "invalid_image_format"
        | "invalid_base64_image"
        | "invalid_image_url"
        | "image_too_large"
        | "image_too_small"
        | "image_parse_error"
        | "invalid_image_mode"
        | "image_file_too_large"
        | "unsupported_image_media_type"
        | "empty_image_file"
        | "failed_to_download_image"
        | "image_file_not_found" => ModelErrorKind::InvalidRequest,
        _ => return None,
    };
    Some(kind)
}

/// Whether an `invalid_prompt` message says a policy refused the prompt.
fn says_it_was_refused(message: &str) -> bool {
    let message = message.to_lowercase();
    ["flagged", "usage policy", "safety reasons"]
        .iter()
        .any(|needle| message.contains(needle))
}

/// The kind the `reason` of a Google `ErrorInfo` detail names: the key or the account behind
/// it is refused (Gemini answers a wrong key with `400 INVALID_ARGUMENT`, a blocked one with
/// `403`), or a rate limit.
pub(super) fn kind_of_reason(reason: &str) -> Option<ModelErrorKind> {
    let reason = reason.to_ascii_uppercase();
    if reason.starts_with("API_KEY_") {
        // API_KEY_INVALID, _EXPIRED, _SERVICE_BLOCKED, _HTTP_REFERRER_BLOCKED, _IP_ADDRESS_…
        return Some(ModelErrorKind::Authentication);
    }
    let kind = match reason.as_str() {
        "ACCESS_TOKEN_EXPIRED"
        | "ACCESS_TOKEN_SCOPE_INSUFFICIENT"
        | "ACCESS_TOKEN_TYPE_UNSUPPORTED"
        | "CREDENTIALS_MISSING"
        | "CONSUMER_INVALID"
        | "CONSUMER_SUSPENDED"
        | "USER_PROJECT_DENIED"
        | "SERVICE_DISABLED"
        | "IAM_PERMISSION_DENIED" => ModelErrorKind::Authentication,
        "RATE_LIMIT_EXCEEDED" => ModelErrorKind::RateLimited,
        _ => return None,
    };
    Some(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_codes_map_to_their_kinds() {
        use ModelErrorKind::*;
        for (code, kind) in [
            ("rate_limit_exceeded", Some(RateLimited)),
            ("too_many_requests", Some(RateLimited)),
            ("TOO_MANY_REQUESTS", Some(RateLimited)),
            ("server_error", Some(Overloaded)),
            ("server_is_overloaded", Some(Overloaded)),
            ("vector_store_timeout", Some(Timeout)),
            ("context_length_exceeded", Some(ContextLengthExceeded)),
            ("bio_policy", Some(ContentFiltered)),
            ("image_content_policy_violation", Some(ContentFiltered)),
            ("invalid_image_url", Some(InvalidRequest)),
            ("image_file_not_found", Some(InvalidRequest)),
            ("invalid_api_key", None),
            ("insufficient_quota", None),
            ("429", None),
            ("", None),
        ] {
            assert_eq!(kind_of_code(code, "m"), kind, "{code}");
        }
    }

    #[test]
    fn an_invalid_prompt_is_filtered_when_it_says_a_policy_refused_it() {
        let flagged = "Invalid prompt: your prompt was flagged as potentially violating our usage policy. Please try again with a different prompt: https://platform.openai.com/docs/guides/reasoning#advice-on-prompting";
        let safety = "Invalid prompt: we've limited access to this content for safety reasons. This type of information may be used to benefit or to harm people.";
        let other = "Invalid prompt: the 'input' must not be empty.";
        assert_eq!(
            kind_of_code("invalid_prompt", flagged),
            Some(ModelErrorKind::ContentFiltered)
        );
        assert_eq!(
            kind_of_code("invalid_prompt", safety),
            Some(ModelErrorKind::ContentFiltered)
        );
        assert_eq!(
            kind_of_code("invalid_prompt", other),
            Some(ModelErrorKind::InvalidRequest)
        );
    }

    #[test]
    fn google_reasons_name_a_refused_key_or_a_rate_limit() {
        use ModelErrorKind::*;
        for (reason, kind) in [
            ("API_KEY_INVALID", Some(Authentication)),
            ("API_KEY_EXPIRED", Some(Authentication)),
            ("API_KEY_SERVICE_BLOCKED", Some(Authentication)),
            ("API_KEY_HTTP_REFERRER_BLOCKED", Some(Authentication)),
            ("ACCESS_TOKEN_EXPIRED", Some(Authentication)),
            ("SERVICE_DISABLED", Some(Authentication)),
            ("RATE_LIMIT_EXCEEDED", Some(RateLimited)),
            ("BILLING_DISABLED", None),
            ("RESOURCE_QUOTA_EXCEEDED", None),
            ("", None),
        ] {
            assert_eq!(kind_of_reason(reason), kind, "{reason}");
        }
    }
}
