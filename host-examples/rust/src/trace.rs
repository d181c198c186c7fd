//! Trace parsing (host-examples/REPLAY.md): JSON Lines of `tool`, `turn` and
//! `compaction` events; other types are ignored.

use crate::input::args_text;
use crate::wit::ToolOutcome;
use serde_json::{Map, Value};
use std::fmt;

/// A malformed trace line. Displays as `line N: reason`; the CLI exits with
/// status 2 on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// The 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for TraceError {}

/// What one trace line asks for.
#[derive(Clone, Debug)]
pub enum TraceEvent {
    /// A tool call and its outcome.
    Tool(ToolOutcome),
    /// A new agent turn begins.
    Turn,
    /// The agent's context was compacted.
    Compaction,
    /// A task begins: `{"type":"task","id":…,"summary":…}`. Used by
    /// `replay --memory`; ignored otherwise.
    Task {
        /// The task's id.
        id: String,
        /// What the task is.
        summary: String,
    },
    /// The task ends: `{"type":"task_end","status":"failed|succeeded","reason":…}`.
    TaskEnd {
        /// Whether the task succeeded.
        succeeded: bool,
        /// Why it failed, if the trace says.
        reason: Option<String>,
    },
}

/// One meaningful trace line: its 1-based number and its event.
#[derive(Clone, Debug)]
pub struct TraceLine {
    /// The 1-based line number in the trace.
    pub line: usize,
    /// The event.
    pub event: TraceEvent,
}

/// A trace `tool` line's fields as a WIT `tool-outcome`: `tool`, `args`,
/// `output`, `is_error`, `exit_code`. Missing strings are `""`, missing
/// `is_error` and `exit_code` (or `null`) are none; `args` is any JSON value.
pub fn tool_outcome(map: &Map<String, Value>) -> Result<ToolOutcome, String> {
    let string = |key: &str| match map.get(key) {
        None => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(format!("`{key}` must be a string, not {other}")),
    };
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
        tool: string("tool")?,
        args: args_text(map.get("args")).map_err(|e| format!("`args`: {e}"))?,
        output: string("output")?,
        exit_code,
        is_error,
    })
}

/// Parses one non-blank line into its event, or `None` for an ignored type.
///
/// With `tool_by_default`, an object without a `type` is a `tool` line (the
/// `classify` command's input); otherwise it is ignored.
pub fn parse_line(text: &str, tool_by_default: bool) -> Result<Option<TraceEvent>, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("expected a JSON object ({e})"))?;
    let Value::Object(map) = value else {
        return Err("expected a JSON object".to_string());
    };
    let kind = match map.get("type") {
        None if tool_by_default => "tool",
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
            let summary = match map.get("summary") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => return Err(format!("`summary` must be a string, not {other}")),
            };
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
            let reason = match map.get("reason") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(other) => return Err(format!("`reason` must be a string, not {other}")),
            };
            Some(TraceEvent::TaskEnd { succeeded, reason })
        }
        _ => None,
    })
}

/// Parses a whole trace. Blank lines and ignored types are skipped; the
/// first malformed line is the error.
pub fn parse_trace(text: &str) -> Result<Vec<TraceLine>, TraceError> {
    parse_lines(text, false)
}

/// Parses a trace, treating untyped objects as `tool` lines when
/// `tool_by_default` is set.
pub fn parse_lines(text: &str, tool_by_default: bool) -> Result<Vec<TraceLine>, TraceError> {
    let mut lines = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        if raw.trim().is_empty() {
            continue;
        }
        match parse_line(raw, tool_by_default) {
            Ok(Some(event)) => lines.push(TraceLine { line, event }),
            Ok(None) => {}
            Err(message) => return Err(TraceError { line, message }),
        }
    }
    Ok(lines)
}
