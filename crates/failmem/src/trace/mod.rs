//! Traces: failmem's own format, JSON Lines of `tool`, `turn`,
//! `compaction`, `task` and `task_end` events (docs/replay.md; lines of any
//! other type, and blank lines, are skipped), and the saved trajectories of
//! common coding agents, read as the same events ([`import`]).
//!
//! Every importer makes each tool call the agent executed exactly one
//! [`TraceEvent::Tool`], in execution order, with its outcome; adds a
//! [`TraceEvent::Turn`] for each new user prompt after the first and a
//! [`TraceEvent::Compaction`] where the format marks one; and fails on the
//! first malformed part with [`Error::InvalidTrace`] naming the line (`line
//! 12: …`, JSON Lines) or the byte offset (`offset 4096: …`, JSON
//! documents), returning nothing of the trajectory.

mod claude_code;
mod codex;
mod common;
mod function_call_text;
mod mini_swe_agent;
mod openhands;
mod openhands_sdk;
mod swe_agent;

use crate::classify::ToolOutcome;
use crate::error::Error;
use crate::tools::write_canonical;
use serde_json::{Map, Value};

/// What one trace line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceEvent {
    /// A tool call and its outcome.
    Tool(ToolOutcome),
    /// A new agent turn begins.
    Turn,
    /// The agent's context was compacted.
    Compaction,
    /// A task begins: the retry brief of the project memory applies to it.
    Task {
        /// The task's id; never empty.
        id: String,
        /// What the task is.
        summary: String,
    },
    /// The task ends; with a memory, the session becomes an attempt.
    TaskEnd {
        /// Whether the task succeeded.
        succeeded: bool,
        /// Why it failed, when the trace says.
        reason: Option<String>,
    },
}

/// One meaningful line of a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceLine {
    /// Its 1-based line number.
    pub line: u32,
    /// What it asks for.
    pub event: TraceEvent,
}

/// A trajectory format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// failmem's own trace (docs/replay.md).
    Failmem,
    /// A Claude Code session JSONL.
    ClaudeCode,
    /// A Codex CLI rollout JSONL.
    Codex,
    /// A SWE-agent `.traj`.
    SweAgent,
    /// A mini-swe-agent `.traj.json`.
    MiniSweAgent,
    /// OpenHands `output.jsonl`, a saved event list, or the events of an
    /// OpenHands Software Agent SDK (V1) conversation.
    OpenHands,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 6] = [
        Format::Failmem,
        Format::ClaudeCode,
        Format::Codex,
        Format::SweAgent,
        Format::MiniSweAgent,
        Format::OpenHands,
    ];

    /// The format named `name` (kebab-case, as [`Format::name`] gives it).
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The format's name, kebab-case.
    pub fn name(self) -> &'static str {
        match self {
            Format::Failmem => "failmem",
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
            Format::SweAgent => "swe-agent",
            Format::MiniSweAgent => "mini-swe-agent",
            Format::OpenHands => "openhands",
        }
    }
}

/// Reads a trace or a saved trajectory: in `format`, or in the format
/// [`detect`] finds; text that looks like no known format is read as
/// failmem's own trace, whose errors name the line. A `format` given for
/// text whose first object is plainly another format's is an error at
/// offset 0 that names both.
pub fn import(text: &str, format: Option<Format>) -> Result<Vec<TraceLine>, Error> {
    let detected = detect(text);
    if let (Some(wanted), Some(found)) = (format, detected)
        && wanted != found
    {
        return Err(Error::InvalidTrace(format!(
            "offset 0: the text is a {} trace (from its first object's keys), not a {} one; leave the format out to read it as {}",
            found.name(),
            wanted.name(),
            found.name()
        )));
    }
    let imported = match format.or(detected).unwrap_or(Format::Failmem) {
        Format::Failmem => return parse(text, false),
        Format::ClaudeCode => claude_code::import(text),
        Format::Codex => codex::import(text),
        Format::SweAgent => swe_agent::import(text),
        Format::MiniSweAgent => mini_swe_agent::import(text),
        Format::OpenHands => openhands::import(text),
    };
    imported.map_err(Error::InvalidTrace)
}

/// The format of a trajectory, from the top-level keys of its first JSON
/// object (the first line of JSON Lines, the document's own object, or the
/// first element of a JSON array); `None` when nothing fits. Reads no more
/// than it needs and tolerates damaged or truncated input.
pub fn detect(text: &str) -> Option<Format> {
    let sniff = sniff(text);
    let has = |key: &str| sniff.keys.iter().any(|(k, _)| k == key);
    if sniff.array {
        let event = ["action", "observation", "source", "cause", "kind"];
        return event.iter().any(|k| has(k)).then_some(Format::OpenHands);
    }
    let sdk_event = sniff
        .keys
        .iter()
        .any(|(k, v)| k == "kind" && v.as_deref().is_some_and(openhands_sdk::is_kind));
    if sdk_event {
        return Some(Format::OpenHands);
    }
    let kind = sniff
        .keys
        .iter()
        .find(|(k, _)| k == "type")
        .and_then(|(_, v)| v.as_deref());
    match kind {
        Some("tool" | "turn" | "compaction" | "task" | "task_end" | "meta") => {
            return Some(Format::Failmem);
        }
        Some("session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted") => {
            return Some(Format::Codex);
        }
        Some(
            "user"
            | "assistant"
            | "system"
            | "summary"
            | "progress"
            | "file-history-snapshot"
            | "queue-operation",
        ) => return Some(Format::ClaudeCode),
        _ => {}
    }
    if has("trajectory") {
        Some(Format::SweAgent)
    } else if has("history") {
        Some(Format::OpenHands)
    } else if has("messages") {
        Some(Format::MiniSweAgent)
    } else if has("parentUuid") || has("sessionId") || has("leafUuid") {
        Some(Format::ClaudeCode)
    } else if has("record_type")
        || (has("instructions") && has("id"))
        || kind.is_some_and(codex::is_bare_item)
    {
        Some(Format::Codex)
    } else if has("tool") {
        Some(Format::Failmem)
    } else {
        None
    }
}

/// Parses a whole trace. With `untyped_as_tool`, an object without a `type`
/// is a `tool` line (the input of `failmem classify`); otherwise it is
/// skipped. The first malformed line is an [`Error::InvalidTrace`] naming
/// it, and nothing of the trace is returned.
pub fn parse(text: &str, untyped_as_tool: bool) -> Result<Vec<TraceLine>, Error> {
    let mut lines = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = u32::try_from(index + 1).unwrap_or(u32::MAX);
        if raw.trim().is_empty() {
            continue;
        }
        match parse_line(raw, untyped_as_tool) {
            Ok(Some(event)) => lines.push(TraceLine { line, event }),
            Ok(None) => {}
            Err(message) => return Err(Error::InvalidTrace(format!("line {line}: {message}"))),
        }
    }
    Ok(lines)
}

/// One tool outcome written as the one `tool` line of a trace (its `type`
/// may be left out): what `session.step-json` takes. Anything else, blank
/// lines aside, is an [`Error::InvalidTrace`].
pub fn parse_outcome(text: &str) -> Result<ToolOutcome, Error> {
    let mut lines = parse(text, true)?.into_iter();
    match (lines.next(), lines.next()) {
        (
            Some(TraceLine {
                event: TraceEvent::Tool(outcome),
                ..
            }),
            None,
        ) => Ok(outcome),
        _ => Err(Error::InvalidTrace(
            "expected one `tool` line: a JSON object with the outcome's fields".to_string(),
        )),
    }
}

/// Parses one non-blank line; `None` for a line of a type that is skipped.
fn parse_line(text: &str, untyped_as_tool: bool) -> Result<Option<TraceEvent>, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("expected a JSON object ({e})"))?;
    let Value::Object(map) = value else {
        return Err("expected a JSON object".to_string());
    };
    let kind = match map.get("type") {
        None if untyped_as_tool => "tool",
        Some(Value::String(kind)) => kind.as_str(),
        _ => return Ok(None),
    };
    Ok(match kind {
        "tool" => Some(TraceEvent::Tool(tool_outcome(&map)?)),
        "turn" => Some(TraceEvent::Turn),
        "compaction" => Some(TraceEvent::Compaction),
        "task" => {
            let id = match map.get("id") {
                Some(Value::String(id)) if !id.trim().is_empty() => id.clone(),
                _ => return Err("a `task` line needs a non-empty string `id`".to_string()),
            };
            let summary = optional_string(&map, "summary")?.unwrap_or_default();
            Some(TraceEvent::Task { id, summary })
        }
        "task_end" => {
            let succeeded = match map.get("status") {
                Some(Value::String(s)) if s == "failed" => false,
                Some(Value::String(s)) if s == "succeeded" => true,
                _ => {
                    return Err(
                        "a `task_end` line needs `status`: \"failed\" or \"succeeded\"".to_string(),
                    );
                }
            };
            let reason = optional_string(&map, "reason")?;
            Some(TraceEvent::TaskEnd { succeeded, reason })
        }
        _ => None,
    })
}

/// A `tool` line's fields as a [`ToolOutcome`]: missing strings are `""`,
/// missing or `null` `is_error`, `exit_code` and `batch` are none, and
/// `args` is any JSON value (a string as is, anything else as canonical
/// JSON).
pub fn tool_outcome(map: &Map<String, Value>) -> Result<ToolOutcome, String> {
    let is_error = match map.get("is_error") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(other) => return Err(format!("`is_error` must be a boolean or null, not {other}")),
    };
    let exit_code = match map.get("exit_code") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_i64()
                .and_then(|n| i32::try_from(n).ok())
                .ok_or_else(|| format!("`exit_code` must be a 32-bit integer or null, not {v}"))?,
        ),
    };
    Ok(ToolOutcome {
        tool: optional_string(map, "tool")?.unwrap_or_default(),
        args: args_text(map.get("args")),
        output: optional_string(map, "output")?.unwrap_or_default(),
        exit_code,
        is_error,
        batch: optional_string(map, "batch")?,
    })
}

/// A JSON `args` value as the text a [`ToolOutcome`] holds.
pub fn args_text(args: Option<&Value>) -> String {
    match args {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            let mut out = String::new();
            write_canonical(other, &mut out);
            out
        }
    }
}

fn optional_string(map: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("`{key}` must be a string, not {other}")),
    }
}

/// What [`detect`] saw.
#[derive(Default)]
pub(super) struct Sniff {
    /// The text is a JSON array.
    pub(super) array: bool,
    /// The first object's top-level keys, with their values when strings
    /// (raw, escapes kept).
    pub(super) keys: Vec<(String, Option<String>)>,
}

/// Scans the top-level keys of the first JSON object of `text`, skipping
/// values without building them.
pub(super) fn sniff(text: &str) -> Sniff {
    let bytes = text.as_bytes();
    let mut s = Sniff::default();
    let mut i = 0;
    if text.starts_with('\u{feff}') {
        i = '\u{feff}'.len_utf8();
    }
    i = skip_ws(bytes, i);
    if bytes.get(i) == Some(&b'[') {
        s.array = true;
        i = skip_ws(bytes, i + 1);
    }
    if bytes.get(i) != Some(&b'{') {
        return s;
    }
    i += 1;
    while s.keys.len() < crate::limits::MAX_SNIFF_KEYS {
        i = skip_ws(bytes, i);
        if bytes.get(i) != Some(&b'"') {
            break;
        }
        let Some(end) = string_end(bytes, i) else {
            break;
        };
        let key = text.get(i + 1..end).unwrap_or_default().to_string();
        i = skip_ws(bytes, end + 1);
        if bytes.get(i) != Some(&b':') {
            break;
        }
        i = skip_ws(bytes, i + 1);
        let value = if bytes.get(i) == Some(&b'"') {
            match string_end(bytes, i) {
                Some(end) => {
                    let v = text.get(i + 1..end).map(str::to_string);
                    i = end + 1;
                    v
                }
                None => {
                    s.keys.push((key, None));
                    break;
                }
            }
        } else {
            i = skip_value(bytes, i);
            None
        };
        s.keys.push((key, value));
        i = skip_ws(bytes, i);
        if bytes.get(i) != Some(&b',') {
            break;
        }
        i += 1;
    }
    s
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// The index of the quote closing the string that opens at `start`.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    loop {
        match bytes.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
}

/// The index just past the value (not a string) that starts at `i`.
fn skip_value(bytes: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => match string_end(bytes, i) {
                Some(end) => i = end,
                None => return bytes.len(),
            },
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                if depth == 0 {
                    return i;
                }
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            b',' if depth == 0 => return i,
            _ => {}
        }
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_is_one_tool_line() {
        let line = r#"{"tool":"bash","args":"{\"b\":1,\"a\":2}","output":"é\n","exit_code":-1,"is_error":null}"#;
        let outcome = parse_outcome(line).unwrap();
        assert_eq!(
            outcome.args, r#"{"b":1,"a":2}"#,
            "a string `args` is kept as is"
        );
        assert_eq!(outcome.output, "é\n");
        assert_eq!((outcome.exit_code, outcome.is_error), (Some(-1), None));
        assert_eq!(
            parse_outcome(r#"{"type":"tool","tool":"x"}"#).unwrap().tool,
            "x"
        );
        for bad in [
            "",
            "not json",
            r#"{"type":"turn"}"#,
            "{\"tool\":\"a\"}\n{\"tool\":\"b\"}",
            r#"{"is_error":"yes"}"#,
        ] {
            let e = parse_outcome(bad).expect_err(bad);
            assert_eq!(e.case(), "invalid-trace", "{bad:?}: {e}");
        }
    }

    #[test]
    fn parses_every_event_and_skips_the_rest() {
        let text = "{\"type\":\"meta\"}\n\n{\"type\":\"tool\",\"tool\":\"bash\",\"args\":{\"b\":1,\"a\":2},\"exit_code\":1}\n{\"type\":\"turn\"}\n{\"type\":\"compaction\"}\n{\"type\":\"task\",\"id\":\"t\"}\n{\"type\":\"task_end\",\"status\":\"failed\",\"reason\":\"r\"}\n";
        let lines = parse(text, false).unwrap();
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[0].line, 3);
        let TraceEvent::Tool(outcome) = &lines[0].event else {
            panic!("not a tool line")
        };
        assert_eq!(outcome.args, r#"{"a":2,"b":1}"#);
        assert_eq!(outcome.exit_code, Some(1));
        assert_eq!(
            lines[4].event,
            TraceEvent::TaskEnd {
                succeeded: false,
                reason: Some("r".into())
            }
        );
    }

    #[test]
    fn a_bad_line_is_named_and_nothing_is_returned() {
        let err = parse("{\"type\":\"turn\"}\nnot json\n", false).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidTrace(m) if m.starts_with("line 2: expected a JSON object"))
        );
        let err = parse("{\"type\":\"tool\",\"exit_code\":\"1\"}", false).unwrap_err();
        assert!(matches!(&err, Error::InvalidTrace(m) if m.contains("`exit_code` must be")));
        let err = parse("{\"type\":\"task\",\"id\":\" \"}", false).unwrap_err();
        assert!(matches!(&err, Error::InvalidTrace(m) if m.contains("non-empty string `id`")));
    }

    #[test]
    fn untyped_lines_are_tools_only_when_asked() {
        assert!(parse("{\"tool\":\"bash\"}", false).unwrap().is_empty());
        assert_eq!(parse("{\"tool\":\"bash\"}", true).unwrap().len(), 1);
    }
}
