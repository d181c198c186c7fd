//! Claude Code session files: JSON Lines under `~/.claude/projects/<project>/`,
//! one object per line with a `type` (`user`, `assistant`, `system`,
//! `summary`, `progress`, `file-history-snapshot`, `queue-operation`, …).
//!
//! - Each `tool_use` block of an `assistant` line is one tool call, in file
//!   order (parallel calls each count; an assistant message split over several
//!   lines is read line by line). `tool` is the block's `name`, `args` its
//!   `input` as canonical JSON, `batch` the assistant message's `id` (the
//!   calls of one reply share it).
//! - A `tool_result` block of a `user` line gives the oldest call with its
//!   `tool_use_id` still waiting its `output` (the text blocks joined) and
//!   `is_error`. A resumed session that logs its history again repeats
//!   tool_use ids: every copy is a call, each gets the next result.
//! - Sidechain lines (Task subagents, `isSidechain`) and subagent files
//!   (`agent-<id>.jsonl`) are read the same way.
//! - A user prompt (a `user` line that is not a tool result, meta line,
//!   interruption notice or local-command output) after the first is a turn;
//!   a sidechain prompt never is.
//! - `compact_boundary` system lines and `isCompactSummary` user lines are
//!   compactions; the summary that follows its boundary (its `parentUuid`)
//!   counts once. A `summary` line is not: it is a session title for
//!   `/resume` (`summary`, `leafUuid`), and Claude Code writes the titles of
//!   other sessions into the file it starts (anthropics/claude-code#2597).

use super::common::{Calls, canonical, jsonl, jsonl_object, str_field, text_of};
use crate::trace::{TraceEvent, TraceLine};
use serde_json::{Map, Value};
use std::collections::HashSet;

/// Texts that open a `user` line that is not a prompt to the agent.
const NOT_PROMPTS: &[&str] = &[
    "[Request interrupted by user",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-stdout>",
    "<bash-stderr>",
];

/// Reads a Claude Code session.
pub fn import(text: &str) -> Result<Vec<TraceLine>, String> {
    let mut calls = Calls::default();
    let mut seen_prompt = false;
    let mut boundaries: HashSet<String> = HashSet::new();
    for (line, raw) in jsonl(text) {
        let map = jsonl_object(line, raw)?;
        let kind = str_field(&map, "type").unwrap_or_default();
        match kind {
            "assistant" => {
                let message_id = map
                    .get("message")
                    .and_then(|m| m.get("id"))
                    .and_then(Value::as_str);
                if let Value::Array(blocks) = content(&map, line)? {
                    for block in blocks.iter().filter_map(Value::as_object) {
                        if str_field(block, "type") == Some("tool_use") {
                            let name = str_field(block, "name").ok_or_else(|| {
                                format!("line {line}: a `tool_use` block needs a string `name`")
                            })?;
                            let args = block.get("input").map(canonical).unwrap_or_default();
                            let index = calls.call(line, str_field(block, "id"), name, args);
                            if let Some(outcome) = calls.outcome(index) {
                                outcome.batch = message_id.map(str::to_string);
                            }
                        }
                    }
                }
            }
            "user" => {
                let content = content(&map, line)?;
                let results = tool_results(content);
                if !results.is_empty() {
                    for block in results {
                        let id = str_field(block, "tool_use_id").ok_or_else(|| {
                            format!(
                                "line {line}: a `tool_result` block needs a string `tool_use_id`"
                            )
                        })?;
                        if let Some(index) = calls.take_pending(id)
                            && let Some(outcome) = calls.outcome(index)
                        {
                            outcome.output = text_of(block.get("content"));
                            outcome.is_error = block.get("is_error").and_then(Value::as_bool);
                        }
                    }
                } else if flag(&map, "isCompactSummary") {
                    let parent = str_field(&map, "parentUuid").unwrap_or_default();
                    if !boundaries.contains(parent) {
                        calls.push(line, TraceEvent::Compaction);
                    }
                } else if is_prompt(&map, content) {
                    if seen_prompt && !flag(&map, "isSidechain") {
                        calls.push(line, TraceEvent::Turn);
                    }
                    seen_prompt = true;
                }
            }
            "system" if str_field(&map, "subtype") == Some("compact_boundary") => {
                if let Some(uuid) = str_field(&map, "uuid") {
                    boundaries.insert(uuid.to_string());
                }
                calls.push(line, TraceEvent::Compaction);
            }
            _ => {}
        }
    }
    Ok(calls.finish())
}

/// The `message.content` of a `user` or `assistant` line: a string or a list
/// of blocks.
fn content(map: &Map<String, Value>, line: u32) -> Result<&Value, String> {
    match map.get("message").and_then(|m| m.get("content")) {
        Some(c @ (Value::String(_) | Value::Array(_))) => Ok(c),
        _ => Err(format!(
            "line {line}: a `{}` line needs `message.content`, a string or a list",
            str_field(map, "type").unwrap_or_default()
        )),
    }
}

/// The `tool_result` blocks of a content.
fn tool_results(content: &Value) -> Vec<&Map<String, Value>> {
    match content {
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(Value::as_object)
            .filter(|b| str_field(b, "type") == Some("tool_result"))
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether a `user` line without tool results is a prompt to the agent.
fn is_prompt(map: &Map<String, Value>, content: &Value) -> bool {
    if flag(map, "isMeta") || flag(map, "isVisibleInTranscriptOnly") {
        return false;
    }
    let text = text_of(Some(content));
    let text = text.trim_start();
    !text.is_empty() && !NOT_PROMPTS.iter().any(|p| text.starts_with(p))
}

fn flag(map: &Map<String, Value>, key: &str) -> bool {
    map.get(key).and_then(Value::as_bool).unwrap_or(false)
}
