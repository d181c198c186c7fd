//! OpenHands trajectories, in these shapes:
//! - an evaluation or resolver `output.jsonl`: one JSON object per line (a
//!   run) whose `history` lists the events (or, before mid-2024,
//!   `[action, observation]` pairs); a pretty-printed single run object is
//!   read too;
//! - a saved event list (the web UI's export, an SDK harness's): one JSON
//!   array of events;
//! - the events of an OpenHands Software Agent SDK (V1) conversation one
//!   after another: JSON Lines, or the SDK's `events/event-*.json` files
//!   concatenated (`cat`); the text is this shape when its first object has
//!   a `kind`.
//!
//! An event with a string `kind` is an SDK event, read as
//! [`super::openhands_sdk`] says. Any other event is a V0 action (`action`:
//! `run`, `run_ipython`, `read`, `edit`, `write`, `browse`,
//! `browse_interactive`, `call_tool_mcp`, …, with its arguments in `args` or,
//! in resolver output, flat on the event) or an observation (`observation`,
//! `content`, and `extras`, or flat fields).
//!
//! - Each action that runs something is one tool call: every action but
//!   `message`, `system`, `think`, `finish`, `recall`, `change_agent_state`,
//!   `null`, `reject`, `condensation` and `condensation_request`, and none
//!   whose `source` is `user` or `environment`. `tool` is the action type,
//!   `args` its arguments (without `thought`) as canonical JSON.
//! - An observation whose `cause` is the action's `id` is its result; without
//!   ids, the oldest waiting action of the same type (any type for an
//!   `error` observation). `output` is its `content`, `exit_code`
//!   `metadata.exit_code` (in `extras` or flat), `is_error` true when the
//!   observation's own `error` flag is (a browser action that failed);
//!   OpenHands records no other error flag.
//! - A `message` action from the `user` after the first is a turn (events
//!   without `source`, as in resolver output, give no turns); a
//!   `condensation` action is a compaction.
//! - A trace line is the 1-based position of the event (or pair) across all
//!   histories of the file (in a sequence of SDK events, the line the event
//!   begins on); errors name the JSON Lines line or, for a JSON document,
//!   the byte offset.
//! - Events none of which is a tool call are an error that says what they
//!   were (a file of another format, or one whose actions are missing), not
//!   an empty trajectory.

use super::common::{
    Calls, canonical, exit_code_of, json_document, jsonl, line_number, offset_error, str_field,
    text_of,
};
use super::openhands_sdk::{self as sdk, Read};
use crate::trace::{TraceEvent, TraceLine};
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;

/// Action types that run nothing.
const NOT_CALLS: &[&str] = &[
    "message",
    "system",
    "think",
    "finish",
    "recall",
    "change_agent_state",
    "null",
    "reject",
    "condensation",
    "condensation_request",
];

/// Event fields that are bookkeeping, not arguments, on a flat action.
const NOT_ARGS: &[&str] = &[
    "id",
    "timestamp",
    "source",
    "message",
    "cause",
    "action",
    "observation",
    "tool_call_metadata",
    "llm_metrics",
    "thought",
];

/// One evaluation or resolver run.
#[derive(Deserialize)]
struct Run {
    history: Vec<Entry>,
}

/// One history entry.
enum Entry {
    Event(Map<String, Value>),
    Pair(Map<String, Value>, Map<String, Value>),
}

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(EntryVisitor)
    }
}

struct EntryVisitor;

impl<'de> Visitor<'de> for EntryVisitor {
    type Value = Entry;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an event object or an [action, observation] pair")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Entry, A::Error> {
        let event = Map::deserialize(de::value::MapAccessDeserializer::new(map))?;
        match sdk::problem(&event) {
            Some(problem) => Err(de::Error::custom(problem)),
            None => Ok(Entry::Event(event)),
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Entry, A::Error> {
        let action = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let observation = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(1, &self))?;
        if seq.next_element::<IgnoredAny>()?.is_some() {
            return Err(de::Error::invalid_length(3, &self));
        }
        Ok(Entry::Pair(action, observation))
    }
}

/// Reads an OpenHands trajectory.
pub fn import(text: &str) -> Result<Vec<TraceLine>, String> {
    let body = text.trim_start_matches('\u{feff}').trim_start();
    let mut reader = Reader::default();
    let whole = "offset 0".to_string();
    let first = super::sniff(text);
    let has = |key: &str| first.keys.iter().any(|(k, _)| k == key);
    let place = if body.starts_with('[') {
        let entries: Vec<Entry> = json_document(text)?;
        reader.entries(entries);
        whole
    } else if has("kind") && !has("history") {
        events(text, &mut reader)?
    } else if body.lines().next().is_some_and(|l| l.trim() == "{") {
        let run: Run = json_document(text)?;
        reader.entries(run.history);
        whole
    } else {
        let mut place = None;
        for (line, raw) in jsonl(text) {
            let run: Run = serde_json::from_str(raw).map_err(|e| {
                let inner = offset_error(raw, &e);
                format!("line {line}: expected a run with a `history` ({inner})")
            })?;
            place.get_or_insert(line);
            reader.entries(run.history);
        }
        format!("line {}", place.unwrap_or(1))
    };
    reader.finish(&place)
}

/// Reads SDK events one after another (JSON Lines, or concatenated
/// objects); returns where the first one begins.
fn events(text: &str, reader: &mut Reader) -> Result<String, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Entry>();
    let (mut counted, mut line) = (0, 1u32);
    let mut first = None;
    loop {
        let rest = &text[stream.byte_offset()..];
        let start = text.len() - rest.trim_start().len();
        let entry = match stream.next() {
            None => break,
            Some(Ok(entry)) => entry,
            Some(Err(e)) => {
                let line = u32::try_from(e.line()).unwrap_or(u32::MAX);
                let message = e.to_string();
                let suffix = format!(" at line {} column {}", e.line(), e.column());
                let message = message.strip_suffix(&suffix).unwrap_or(&message);
                return Err(format!("line {line}: {message}"));
            }
        };
        line = line.saturating_add(newlines(&text[counted..start]));
        counted = start;
        first.get_or_insert(line);
        match entry {
            Entry::Event(event) => reader.event(line, &event),
            Entry::Pair(..) => {
                return Err(format!(
                    "line {line}: expected an event object, not an [action, observation] pair"
                ));
            }
        }
    }
    Ok(format!("line {}", first.unwrap_or(1)))
}

fn newlines(text: &str) -> u32 {
    u32::try_from(text.bytes().filter(|&b| b == b'\n').count()).unwrap_or(u32::MAX)
}

#[derive(Default)]
struct Reader {
    calls: Calls,
    /// Entries read so far: the next one's position.
    position: usize,
    seen_prompt: bool,
    /// Calls waiting for an observation: (index, action type, event id).
    waiting: Vec<(usize, String, Option<i64>)>,
    /// The SDK events' state.
    sdk: sdk::Reader,
    /// What the events read were (SDK tool calls aside), and how many: the
    /// message of a trajectory with no call.
    seen: BTreeMap<String, usize>,
}

impl Reader {
    /// The events read; an error if there were some and none was a call.
    fn finish(self, place: &str) -> Result<Vec<TraceLine>, String> {
        if self.seen.is_empty() || self.calls.has_tool() {
            return Ok(self.calls.finish());
        }
        let total: usize = self.seen.values().sum();
        let mut seen: Vec<(&String, &usize)> = self.seen.iter().collect();
        seen.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let mut list: Vec<String> = seen
            .iter()
            .take(6)
            .map(|(what, n)| format!("{n} {what}"))
            .collect();
        if seen.len() > 6 {
            list.push("…".to_string());
        }
        let events = if total == 1 { "event" } else { "events" };
        Err(format!(
            "{place}: no tool call among {total} OpenHands {events} ({}): not an OpenHands trajectory, or its actions are missing",
            list.join(", ")
        ))
    }

    /// Counts an event.
    fn saw(&mut self, what: String) {
        *self.seen.entry(what).or_default() += 1;
    }

    fn entries(&mut self, entries: Vec<Entry>) {
        for entry in entries {
            let line = line_number(self.position);
            self.position += 1;
            match entry {
                Entry::Event(event) => self.event(line, &event),
                Entry::Pair(action, observation) => {
                    self.event(line, &action);
                    self.event(line, &observation);
                }
            }
        }
    }

    fn event(&mut self, line: u32, event: &Map<String, Value>) {
        if let Some(kind) = sdk::kind(event) {
            let read = self
                .sdk
                .event(&mut self.calls, &mut self.seen_prompt, line, event);
            match read {
                Read::Call => {}
                Read::Orphan => self.saw(format!("{kind} whose action is not in the file")),
                Read::Other => self.saw(kind.to_string()),
            }
            return;
        }
        match (str_field(event, "action"), str_field(event, "observation")) {
            (Some(action), _) => self.saw(format!("`{action}` action")),
            (None, Some(kind)) => self.saw(format!("`{kind}` observation")),
            (None, None) => self.saw("object with no `action`, `observation` or `kind`".into()),
        }
        let source = str_field(event, "source");
        if let Some(action) = str_field(event, "action") {
            if action == "message" && source == Some("user") {
                if self.seen_prompt {
                    self.calls.push(line, TraceEvent::Turn);
                }
                self.seen_prompt = true;
            } else if action == "condensation" {
                self.calls.push(line, TraceEvent::Compaction);
            } else if !NOT_CALLS.contains(&action)
                && !matches!(source, Some("user" | "environment"))
            {
                let index = self.calls.call(line, None, action, args(event));
                let id = event.get("id").and_then(Value::as_i64);
                self.waiting.push((index, action.to_string(), id));
            }
        } else if let Some(kind) = str_field(event, "observation") {
            let cause = event.get("cause").and_then(Value::as_i64);
            let found = match cause {
                Some(cause) => self
                    .waiting
                    .iter()
                    .position(|(_, _, id)| *id == Some(cause)),
                None => self
                    .waiting
                    .iter()
                    .position(|(_, action, _)| answers(action, kind)),
            };
            let Some(found) = found else {
                return;
            };
            let (index, _, _) = self.waiting.remove(found);
            if let Some(outcome) = self.calls.outcome(index) {
                outcome.output = text_of(event.get("content"));
                let extras = event
                    .get("extras")
                    .and_then(Value::as_object)
                    .unwrap_or(event);
                outcome.exit_code = exit_code_of(
                    extras
                        .get("metadata")
                        .and_then(|m| m.get("exit_code"))
                        .or_else(|| extras.get("exit_code")),
                );
                // A browser observation's own flag: the action failed.
                if extras.get("error").and_then(Value::as_bool) == Some(true) {
                    outcome.is_error = Some(true);
                }
            }
        }
    }
}

/// Whether an observation of type `kind` can be the result of `action`
/// when the events carry no ids.
fn answers(action: &str, kind: &str) -> bool {
    kind == action
        || kind == "error"
        || (action.starts_with("browse") && kind == "browse")
        || (action == "call_tool_mcp" && kind == "mcp")
}

/// An action's arguments: `args` or the flat event's own fields, without
/// bookkeeping and `thought`.
fn args(event: &Map<String, Value>) -> String {
    let mut args = match event.get("args") {
        Some(Value::Object(args)) => args.clone(),
        _ => event
            .iter()
            .filter(|(k, _)| !NOT_ARGS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    };
    args.remove("thought");
    canonical(&Value::Object(args))
}
