//! Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): JSON
//! Lines of `{timestamp, type, payload}` with `type` `session_meta`,
//! `response_item`, `event_msg`, `turn_context` or `compacted`. Early
//! rollouts wrote the response items bare (`{"type":"function_call",…}`)
//! after a `{id, timestamp, instructions}` header; both are read.
//!
//! - Each `function_call`, `custom_tool_call` and `local_shell_call` item is
//!   one tool call, in file order: `tool` is its `name` (`exec_command`,
//!   `write_stdin`, `apply_patch`, `shell`, …; `local_shell` for a local
//!   shell call); `args` the `arguments` JSON made canonical, `{"input": …}`
//!   for a custom tool, the `action` for a local shell call. `write_stdin`
//!   polls are calls like any other.
//! - Each `web_search_call` item (Codex's built-in web search) is a call of
//!   `web_search` whose `args` is its `action` (`{"type":"search","query":…}`,
//!   `open_page`, `find_in_page`) made canonical. The rollout keeps no
//!   results, so its output is empty; a `failed` status is an error.
//! - The matching `*_output` item (by `call_id`) gives the `output`. A
//!   JSON envelope `{"output": …, "metadata": {"exit_code": N}}` is unwrapped;
//!   the unified-exec header (`Chunk ID:`, `Wall time:`, `Process exited with
//!   code N`, `Original token count:`, then `Output:`) is cut off and gives the
//!   exit code. Codex records no error flag.
//! - Each `user_message` event after the first is a turn (when a rollout has
//!   no such events, each user `message` item that is not injected context,
//!   i.e. does not open with `<` or `# AGENTS.md`).
//! - A `compacted` line or a `context_compacted` event is a compaction; the
//!   pair Codex writes for one compaction (no call between) counts once.

use super::common::{
    Calls, args_from_json_text, canonical, exit_code_of, jsonl, jsonl_object, str_field, text_of,
};
use crate::trace::{TraceEvent, TraceLine};
use serde_json::{Map, Value};

/// Response item types that early rollouts wrote without a wrapper.
const BARE_ITEMS: &[&str] = &[
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "local_shell_call_output",
];

/// Whether `kind` is a response item type early rollouts wrote bare.
pub(crate) fn is_bare_item(kind: &str) -> bool {
    BARE_ITEMS.contains(&kind)
}

/// Reads a Codex rollout.
pub fn import(text: &str) -> Result<Vec<TraceLine>, String> {
    let mut lines = Vec::new();
    for (line, raw) in jsonl(text) {
        lines.push((line, jsonl_object(line, raw)?));
    }
    let user_events = lines.iter().any(|(_, map)| {
        str_field(map, "type") == Some("event_msg")
            && map.get("payload").and_then(|p| p.get("type")) == Some(&Value::from("user_message"))
    });
    let mut calls = Calls::default();
    let mut seen_prompt = false;
    for (line, map) in &lines {
        let line = *line;
        let kind = str_field(map, "type").unwrap_or_default();
        let prompt = match kind {
            "response_item" => {
                let item = payload(map, line)?;
                response_item(&mut calls, line, item)? && !user_events
            }
            "event_msg" => match str_field(payload(map, line)?, "type") {
                Some("user_message") => true,
                Some("context_compacted") => {
                    compaction(&mut calls, line);
                    false
                }
                _ => false,
            },
            "compacted" => {
                compaction(&mut calls, line);
                false
            }
            bare if BARE_ITEMS.contains(&bare) => {
                response_item(&mut calls, line, map)? && !user_events
            }
            _ => false,
        };
        if prompt {
            if seen_prompt {
                calls.push(line, TraceEvent::Turn);
            }
            seen_prompt = true;
        }
    }
    Ok(calls.finish())
}

/// The `payload` object of a wrapped line.
fn payload(map: &Map<String, Value>, line: u32) -> Result<&Map<String, Value>, String> {
    map.get("payload")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            format!(
                "line {line}: a `{}` line needs an object `payload`",
                str_field(map, "type").unwrap_or_default()
            )
        })
}

/// Records one response item; true when it is a user message that may be a
/// prompt.
fn response_item(calls: &mut Calls, line: u32, item: &Map<String, Value>) -> Result<bool, String> {
    let kind = str_field(item, "type").unwrap_or_default();
    let id = str_field(item, "call_id").or_else(|| str_field(item, "id"));
    match kind {
        "function_call" | "custom_tool_call" => {
            let name = str_field(item, "name")
                .ok_or_else(|| format!("line {line}: a `{kind}` item needs a string `name`"))?;
            let args = if kind == "function_call" {
                match item.get("arguments") {
                    Some(Value::String(s)) => args_from_json_text(s),
                    Some(other) => canonical(other),
                    None => String::new(),
                }
            } else {
                let mut map = Map::new();
                map.insert(
                    "input".into(),
                    item.get("input").cloned().unwrap_or(Value::Null),
                );
                canonical(&Value::Object(map))
            };
            calls.call(line, id, name, args);
        }
        "local_shell_call" => {
            let args = item.get("action").map(canonical).unwrap_or_default();
            calls.call(line, id, "local_shell", args);
        }
        "web_search_call" => {
            let args = item.get("action").map(canonical).unwrap_or_default();
            let index = calls.call(line, None, "web_search", args);
            if str_field(item, "status") == Some("failed")
                && let Some(outcome) = calls.outcome(index)
            {
                outcome.is_error = Some(true);
            }
        }
        "function_call_output" | "custom_tool_call_output" | "local_shell_call_output" => {
            let id = str_field(item, "call_id")
                .ok_or_else(|| format!("line {line}: a `{kind}` item needs a string `call_id`"))?;
            if let Some(index) = calls.take_pending(id)
                && let Some(outcome) = calls.outcome(index)
            {
                let (output, exit_code) = decode_output(item.get("output"));
                outcome.output = output;
                outcome.exit_code = exit_code;
            }
        }
        "message" if str_field(item, "role") == Some("user") => {
            let text = text_of(item.get("content"));
            let text = text.trim_start();
            return Ok(!text.is_empty()
                && !text.starts_with('<')
                && !text.starts_with("# AGENTS.md"));
        }
        _ => {}
    }
    Ok(false)
}

/// A compaction, unless the last event already is one.
fn compaction(calls: &mut Calls, line: u32) {
    if calls.last() != Some(&TraceEvent::Compaction) {
        calls.push(line, TraceEvent::Compaction);
    }
}

/// Header lines the unified exec tool puts before `Output:`.
const HEADER: &[&str] = &[
    "Chunk ID:",
    "Wall time:",
    "Process exited with code ",
    "Process running with session ID ",
    "Original token count:",
    "Total output lines:",
    "Exit code:",
];

/// A call's output text and exit code.
fn decode_output(v: Option<&Value>) -> (String, Option<i32>) {
    let text = match v {
        Some(Value::Object(o)) => text_of(o.get("content")),
        other => text_of(other),
    };
    if text.starts_with('{')
        && let Ok(Value::Object(envelope)) = serde_json::from_str::<Value>(&text)
        && let Some(Value::String(output)) = envelope.get("output")
    {
        let code = exit_code_of(envelope.get("metadata").and_then(|m| m.get("exit_code")));
        return (output.clone(), code);
    }
    let (header, body) = if let Some(body) = text.strip_prefix("Output:\n") {
        ("", body)
    } else if let Some(at) = text.find("\nOutput:\n") {
        (&text[..at], &text[at + "\nOutput:\n".len()..])
    } else {
        return (text, None);
    };
    if !header
        .lines()
        .all(|l| HEADER.iter().any(|h| l.starts_with(h)))
    {
        return (text, None);
    }
    let code = header.lines().find_map(|l| {
        l.strip_prefix("Process exited with code ")
            .or_else(|| l.strip_prefix("Exit code:"))
            .and_then(|n| n.trim().parse::<i32>().ok())
    });
    (body.to_string(), code)
}
