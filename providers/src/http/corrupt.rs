//! Corrupted wire data for the decoders' property tests: recorded answers with nodes replaced,
//! copied or removed, and recorded streams with events dropped, repeated, reordered, corrupted
//! or cut. Shared by both providers, whose decoders must refuse all of it without a panic.

use std::collections::{BTreeMap, VecDeque};

use hookchain_core::model::{ModelEvent, ResponseAssembler};
use hookchain_core::{ModelErrorKind, ToolCall};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};

use super::{Decoder, Event};

/// `cases` cases, or as many as `PROPTEST_CASES` says (for a longer search than the default
/// run can afford).
pub(crate) fn config(cases: u32) -> ProptestConfig {
    if std::env::var_os("PROPTEST_CASES").is_some() {
        ProptestConfig::default()
    } else {
        ProptestConfig::with_cases(cases)
    }
}

/// One change to a JSON document: the node it picks (by its index among all nodes, modulo
/// their number) replaced by a value, by an extreme value of its own kind (which still fits
/// the wire type, so it reaches the decoder's logic), or by a copy of another node
/// (well-formed parts in the wrong place), or removed.
#[derive(Debug, Clone)]
pub(crate) enum Corruption {
    Replace(usize, Value),
    Extreme(usize, usize),
    Copy { from: usize, to: usize },
    Remove(usize),
}

/// The `pick`th extreme value of `value`'s own kind: edge numbers (a count or an index of
/// `u64::MAX`), empty, huge or half-JSON strings, emptied or repeated arrays.
fn extreme(value: &Value, pick: usize) -> Value {
    let pick_of = |choices: Vec<Value>| choices[pick % choices.len()].clone();
    match value {
        Value::Null | Value::Bool(_) => pick_of(vec![Value::Null, json!(false), json!(true)]),
        Value::Number(_) => pick_of(vec![
            json!(0),
            json!(1),
            json!(-1),
            json!(1.5),
            json!(u64::MAX),
            json!(u64::MAX - 1),
            json!(usize::MAX / 2),
            json!(i64::MIN),
        ]),
        Value::String(text) => pick_of(vec![
            json!(""),
            json!(" "),
            json!("{"),
            json!("}"),
            json!(format!("{text}{text}")),
            json!("x".repeat(1 << 16)),
        ]),
        Value::Array(items) => pick_of(vec![
            json!([]),
            Value::Array(items.iter().chain(items).cloned().collect()),
            Value::Array(items.iter().rev().cloned().collect()),
        ]),
        Value::Object(_) => json!({}),
    }
}

/// Values a broken server might put anywhere: wrong types, edge numbers (a count or an index of
/// `u64::MAX`), empty and huge strings, JSON text cut short.
fn any_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(json!(true)),
        Just(json!("")),
        Just(json!("{")),
        Just(json!("x".repeat(1 << 16))),
        Just(json!([])),
        Just(json!({})),
        Just(json!(-1)),
        Just(json!(1.5)),
        Just(json!(u64::MAX)),
        Just(json!(u64::MAX - 1)),
        Just(json!(usize::MAX / 2)),
        (0..8_u64).prop_map(Value::from),
    ]
}

pub(crate) fn any_corruption() -> impl Strategy<Value = Corruption> {
    prop_oneof![
        3 => (any::<usize>(), any_value()).prop_map(|(at, value)| Corruption::Replace(at, value)),
        4 => (any::<usize>(), any::<usize>()).prop_map(|(at, pick)| Corruption::Extreme(at, pick)),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(from, to)| Corruption::Copy { from, to }),
        1 => any::<usize>().prop_map(Corruption::Remove),
    ]
}

/// The JSON pointers of every node below the root, parents before children.
fn pointers(value: &Value, at: &str, out: &mut Vec<String>) {
    let children: Vec<(String, &Value)> = match value {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| (k.replace('~', "~0").replace('/', "~1"), v))
            .collect(),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (i.to_string(), v))
            .collect(),
        _ => Vec::new(),
    };
    for (key, child) in children {
        let pointer = format!("{at}/{key}");
        out.push(pointer.clone());
        pointers(child, &pointer, out);
    }
}

/// Applies `corruption` to `json`; a document without nodes below its root stays as it is.
pub(crate) fn corrupt(json: &mut Value, corruption: &Corruption) {
    let mut all = Vec::new();
    pointers(json, "", &mut all);
    if all.is_empty() {
        return;
    }
    let (Corruption::Replace(at, _)
    | Corruption::Extreme(at, _)
    | Corruption::Copy { to: at, .. }
    | Corruption::Remove(at)) = corruption;
    let pointer = &all[at % all.len()];
    match corruption {
        Corruption::Replace(_, value) => *json.pointer_mut(pointer).unwrap() = value.clone(),
        Corruption::Extreme(_, pick) => {
            let node = json.pointer_mut(pointer).unwrap();
            *node = extreme(node, *pick);
        }
        Corruption::Copy { from, .. } => {
            let copy = json.pointer(&all[from % all.len()]).unwrap().clone();
            *json.pointer_mut(pointer).unwrap() = copy;
        }
        Corruption::Remove(_) => {
            let (parent, key) = pointer.rsplit_once('/').unwrap();
            match json.pointer_mut(parent).unwrap() {
                Value::Object(map) => {
                    map.remove(&key.replace("~1", "/").replace("~0", "~"));
                }
                Value::Array(items) => {
                    items.remove(key.parse::<usize>().unwrap());
                }
                _ => unreachable!("a parent holds its children"),
            }
        }
    }
}

/// One change to the events of a stream, each picking its event(s) by index modulo their
/// number.
#[derive(Debug, Clone)]
pub(crate) enum StreamEdit {
    Drop(usize),
    Duplicate(usize),
    Swap(usize, usize),
    /// The event's data, if it is JSON, corrupted as an answer is.
    Corrupt(usize, Vec<Corruption>),
    /// The event's data cut short (at a char boundary): a chunk that is not whole JSON.
    CutData(usize, usize),
}

pub(crate) fn any_stream_edit() -> impl Strategy<Value = StreamEdit> {
    prop_oneof![
        2 => any::<usize>().prop_map(StreamEdit::Drop),
        2 => any::<usize>().prop_map(StreamEdit::Duplicate),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| StreamEdit::Swap(a, b)),
        6 => (any::<usize>(), vec(any_corruption(), 1..3))
            .prop_map(|(at, corruptions)| StreamEdit::Corrupt(at, corruptions)),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(at, cut)| StreamEdit::CutData(at, cut)),
    ]
}

/// Applies `edit` to `events`; an empty stream stays empty.
pub(crate) fn edit_stream(events: &mut Vec<Event>, edit: &StreamEdit) {
    let len = events.len();
    if len == 0 {
        return;
    }
    match edit {
        StreamEdit::Drop(at) => {
            events.remove(at % len);
        }
        StreamEdit::Duplicate(at) => events.insert(at % len, events[at % len].clone()),
        StreamEdit::Swap(a, b) => events.swap(a % len, b % len),
        StreamEdit::Corrupt(at, corruptions) => {
            let event = &mut events[at % len];
            if let Ok(mut json) = serde_json::from_str::<Value>(&event.data) {
                for corruption in corruptions {
                    corrupt(&mut json, corruption);
                }
                event.data = json.to_string();
            }
        }
        StreamEdit::CutData(at, cut) => {
            let data = &mut events[at % len].data;
            let mut cut = cut % (data.len() + 1);
            while !data.is_char_boundary(cut) {
                cut -= 1;
            }
            data.truncate(cut);
        }
    }
}

/// A stream corrupted by `edits`, then cut after `keep` events if given (modulo their number
/// plus one: anywhere, even before the first).
pub(crate) fn corrupt_stream(
    mut events: Vec<Event>,
    edits: &[StreamEdit],
    keep: Option<usize>,
) -> Vec<Event> {
    for edit in edits {
        edit_stream(&mut events, edit);
    }
    if let Some(keep) = keep {
        events.truncate(keep % (events.len() + 1));
    }
    events
}

/// Feeds `events` to `decoder` as a streamed call does (up to the first error or the closing
/// event) and checks what a decoder promises, returning the events it forwarded:
/// - an error is `MalformedResponse`, unless the server reported one (an error event, or
///   data naming an error);
/// - the forwarded events are a consistent stream: a fresh assembler takes every one of them,
///   and each tool call end carries the id and name of its start and its streamed arguments,
///   parsed (`{}` for none);
/// - the answer is complete exactly when the decoder can finish it, and then it is the answer
///   the forwarded events assemble to.
pub(crate) fn decode_checked<D: Decoder>(
    mut decoder: D,
    events: &[Event],
) -> Result<Vec<ModelEvent>, TestCaseError> {
    let mut forwarded = Vec::new();
    let mut closed = false;
    for event in events {
        let mut out = VecDeque::new();
        match decoder.decode(event, &mut out) {
            Ok(close) => {
                forwarded.extend(out);
                closed = close;
                if closed {
                    break;
                }
            }
            Err(error) => {
                prop_assert!(
                    error.kind() == ModelErrorKind::MalformedResponse
                        || event.data.contains("error")
                        // An event named `error` (the Responses API's), whatever its data.
                        || event.event == "error"
                        // An AWS exception in an event stream (Bedrock's).
                        || event.event.starts_with("exception:"),
                    "{error} on {}",
                    event.data
                );
                return Ok(forwarded);
            }
        }
    }
    let mut replay = ResponseAssembler::new();
    let mut calls: BTreeMap<usize, (String, String, String)> = BTreeMap::new();
    for event in &forwarded {
        if let Err(error) = replay.push(event) {
            return Err(TestCaseError::fail(format!(
                "a forwarded event contradicts the ones before: {error}\n{forwarded:#?}"
            )));
        }
        match event {
            ModelEvent::ToolCallStart { index, id, name } => {
                calls.insert(*index, (id.clone(), name.clone(), String::new()));
            }
            ModelEvent::ToolCallDelta { index, arguments } => {
                if let Some((_, _, text)) = calls.get_mut(index) {
                    text.push_str(arguments);
                }
            }
            ModelEvent::ToolCallEnd { index, call } => {
                let Some((id, name, text)) = calls.get(index).cloned() else {
                    return Err(TestCaseError::fail(format!(
                        "tool call #{index} ended without a start\n{forwarded:#?}"
                    )));
                };
                let arguments = if text.trim().is_empty() {
                    json!({})
                } else {
                    serde_json::from_str(&text).unwrap_or(Value::Null)
                };
                prop_assert_eq!(call, &ToolCall::new(id, name, arguments));
            }
            _ => {}
        }
    }
    let complete = if closed {
        Ok(())
    } else {
        decoder.end_of_body()
    };
    let answer = decoder.finish();
    prop_assert_eq!(complete.is_ok(), answer.is_ok(), "{:?}", answer);
    if let Ok(answer) = answer {
        prop_assert_eq!(Some(answer), replay.finish().ok());
    }
    Ok(forwarded)
}
