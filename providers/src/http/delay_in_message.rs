//! The wait a rate-limit message asks for in words, where no header or field gives it:
//! OpenAI's "Please try again in 2.6s." (also "in 120ms", "in 1m3s": Go's duration format,
//! which Groq writes too) and Azure's "Try again in 35 seconds.", as OpenAI's own Codex client
//! reads them.
//!
//! The message is the server's (or a proxy's) text: the parser reads each byte at most once,
//! reads a bounded number of parts, does its arithmetic checked, and gives up (`None`) on
//! anything it does not recognise rather than guess a wait.

use std::time::Duration;

/// What comes before the delay, in any case.
const PHRASE: &str = "try again in";

/// The most `<number><unit>` parts read: Go writes at most `1h2m3.5s`, and a longer run is not
/// a delay.
const MAX_PARTS: usize = 4;

/// The longest number read, in bytes (digits and one point): longer is not a delay either.
const MAX_NUMBER: usize = 24;

/// The most digits after the point that count: nanoseconds are the finest a `Duration` holds.
const MAX_FRACTION_DIGITS: u32 = 9;

const NANOS_PER_SECOND: u128 = 1_000_000_000;

/// The delay after the first "try again in" of `message`, or `None` without one, or when what
/// follows is not a delay (a negative or unit-less number, a word, one too large for a
/// `Duration`).
pub(crate) fn delay_in_message(message: &str) -> Option<Duration> {
    let start = find_ignoring_case(message.as_bytes(), PHRASE.as_bytes())? + PHRASE.len();
    let mut rest = message.as_bytes()[start..].trim_ascii_start();
    let mut nanos: u128 = 0;
    for _ in 0..MAX_PARTS {
        let (part, after) = part(rest)?;
        nanos = nanos.checked_add(part)?;
        rest = after;
        // `1m3s` goes on with a digit; anything else ends the delay ("2.6s." ends with a point).
        if !rest.first().is_some_and(u8::is_ascii_digit) {
            return duration_of(nanos);
        }
    }
    None
}

/// The position of `needle` in `haystack`, ASCII case ignored.
fn find_ignoring_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle))
}

/// One `<number>[spaces]<unit>` part at the start of `text`, in nanoseconds, and what follows.
fn part(text: &[u8]) -> Option<(u128, &[u8])> {
    let number_end = text
        .iter()
        .position(|byte| !byte.is_ascii_digit() && *byte != b'.')
        .unwrap_or(text.len());
    if number_end == 0 || number_end > MAX_NUMBER {
        return None;
    }
    let (number, rest) = text.split_at(number_end);
    let rest = rest.trim_ascii_start();
    let unit_end = rest
        .iter()
        .position(|byte| !byte.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    let (unit, rest) = rest.split_at(unit_end);
    let nanos = scaled(number, unit_nanos(unit)?)?;
    Some((nanos, rest))
}

/// How many nanoseconds a unit is: Go's `ms`, `s`, `m`, `h`, or the word.
fn unit_nanos(unit: &[u8]) -> Option<u128> {
    let unit = unit.to_ascii_lowercase();
    let nanos = match unit.as_slice() {
        b"ms" | b"millisecond" | b"milliseconds" => NANOS_PER_SECOND / 1000,
        b"s" | b"sec" | b"secs" | b"second" | b"seconds" => NANOS_PER_SECOND,
        b"m" | b"min" | b"mins" | b"minute" | b"minutes" => 60 * NANOS_PER_SECOND,
        b"h" | b"hr" | b"hrs" | b"hour" | b"hours" => 3600 * NANOS_PER_SECOND,
        _ => return None,
    };
    Some(nanos)
}

/// `number` (digits, at most one point) times `unit` nanoseconds, exactly: no float rounds
/// `2.6s` to 2.599999999 s.
fn scaled(number: &[u8], unit: u128) -> Option<u128> {
    let text = std::str::from_utf8(number).ok()?;
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() || fraction.contains('.') {
        return None;
    }
    let whole: u128 = whole.parse().ok()?;
    let mut nanos = whole.checked_mul(unit)?;
    let mut scale = 1;
    for digit in fraction.bytes().take(MAX_FRACTION_DIGITS as usize) {
        scale *= 10;
        nanos = nanos.checked_add(u128::from(digit - b'0') * unit / scale)?;
    }
    Some(nanos)
}

/// The `Duration` of `nanos`, if it holds one.
fn duration_of(nanos: u128) -> Option<Duration> {
    let seconds = u64::try_from(nanos / NANOS_PER_SECOND).ok()?;
    let nanos = u32::try_from(nanos % NANOS_PER_SECOND).ok()?;
    Some(Duration::new(seconds, nanos))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn ms(millis: u64) -> Option<Duration> {
        Some(Duration::from_millis(millis))
    }

    #[test]
    fn openai_groq_and_azure_messages_give_their_delay() {
        for (message, delay) in [
            (
                "Rate limit reached for o4-mini in organization org-abc on tokens per min (TPM): Limit 200000, Used 198000, Requested 4400. Please try again in 2.6s. Visit https://platform.openai.com/account/rate-limits to learn more.",
                ms(2600),
            ),
            (
                "Rate limit reached for gpt-4o on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms.",
                ms(120),
            ),
            (
                "Rate limit reached for model `llama-3.3-70b-versatile` on tokens per day (TPD). Please try again in 1m3s.",
                ms(63_000),
            ),
            ("Please try again in 7m12.48s.", ms(432_480)),
            ("Please try again in 1h2m3s.", ms(3_723_000)),
            ("Rate limit exceeded. Try again in 35 seconds.", ms(35_000)),
            ("try again in 1 minute", ms(60_000)),
            ("TRY AGAIN IN 45.175S", ms(45_175)),
            (
                "Please try again in 1.8981234567s.",
                Some(Duration::new(1, 898_123_456)),
            ),
        ] {
            assert_eq!(delay_in_message(message), delay, "{message}");
        }
    }

    #[test]
    fn what_is_not_a_delay_gives_none() {
        for message in [
            "",
            "Rate limit reached.",
            "Please try again later.",
            "Please try again in a few seconds.",
            "Please try again in -5s.",
            "Please try again in 5.",
            "Please try again in 5 parsecs.",
            "Please try again in .5s.",
            "Please try again in 1.2.3s.",
            "Please try again in 1m3",
            "Please try again in 1s2s3s4s5s6s",
            "Please try again in 99999999999999999999999h.",
            "Please try again in 340282366920938463463374607431768211456s.",
            "Please try again in 1234567890123456789012345s.",
            "try again in",
            "try again i",
            "Please try again in ٣s.",
            "Please try again in 5\u{0}s.",
        ] {
            assert_eq!(delay_in_message(message), None, "{message:?}");
        }
    }

    #[test]
    fn the_largest_delays_saturate_nothing_and_fit_a_duration() {
        // u64::MAX seconds is the largest `Duration`; one more second is none.
        let max = format!("try again in {}s", u64::MAX);
        assert_eq!(delay_in_message(&max), Some(Duration::from_secs(u64::MAX)));
        let over = format!("try again in {}s", u128::from(u64::MAX) + 1);
        assert_eq!(delay_in_message(&over), None);
        let hours = format!("try again in {}h", u64::MAX);
        assert_eq!(delay_in_message(&hours), None);
    }

    proptest! {
        /// "Parsing is bounded and panic-free": any text after the phrase gives a delay or none.
        #[test]
        fn any_text_after_the_phrase_never_panics(tail in any::<String>()) {
            let _ = delay_in_message(&format!("Please try again in {tail}"));
        }

        /// Digits, points, units and spaces in any order: the likeliest near-misses.
        #[test]
        fn near_miss_delays_never_panic(tail in "[0-9. smhinutecond-]{0,40}") {
            let _ = delay_in_message(&format!("try again in {tail}"));
        }

        /// A delay written in Go's format reads back as itself.
        #[test]
        fn a_go_duration_reads_back(minutes in 0_u64..10_000, millis in 0_u64..60_000) {
            let seconds = millis / 1000;
            let fraction = millis % 1000;
            let message = format!("Please try again in {minutes}m{seconds}.{fraction:03}s.");
            let expected = Duration::from_secs(minutes * 60) + Duration::from_millis(millis);
            prop_assert_eq!(delay_in_message(&message), Some(expected));
        }
    }
}
