//! mini-swe-agent trajectories (`<instance>.traj.json`): one JSON object
//! with `messages` (chat messages with `role` and `content`), `info` and
//! `trajectory_format`.
//!
//! Two variants:
//! - Text actions (mini-swe-agent 1.x, `"mini-swe-agent-1"`, and text-based
//!   2.x configs): an assistant message with exactly one ```` ```bash ````
//!   (or ```` ```mswea_bash_command ````) block is one executed call; a reply
//!   with none or several was rejected as a format error: it is a step with
//!   no tool (`tool` empty, flagged as an error) whose output is the next
//!   `user` message, the harness's feedback.
//!   The next `user` message is its observation.
//! - Tool calls (mini-swe-agent 2.x, `"mini-swe-agent-1.1"`): each entry of an
//!   assistant message's `tool_calls` is one call (`bash` with its
//!   `arguments`); the `tool` message with its `tool_call_id` is the
//!   observation; the final submit, which has none, gets the `exit` message.
//!   `user` messages with `extra.interrupt_type` are not prompts; a
//!   `FormatError` one is a step with no tool, as above. Any other user
//!   message after the first is a turn.
//!
//! `tool` is `bash`, `args` `{"command": …}` (text actions) or the call's
//! arguments as canonical JSON. An observation's `<returncode>N</returncode>`
//! (or a `'returncode': N}` dict tail) is the exit code, and a lone
//! `<output>…</output>` is unwrapped. mini-swe-agent records no error flag.
//! A trace line is the 1-based message number.
//!
//! A run whose replies end in `----BEGIN_FUNCTION_CALL----` calls (the
//! ReAct agent of Berkeley's CS 294-264, in this file format) is read by
//! [`function_call_text`], from `messages` or from its `context` string.
//! Any other agent's action syntax written in this file format is an error,
//! not a trace: text actions where no reply (of two or more) holds an action
//! block, which would read as every reply rejected, or `tool` results where
//! no reply has `tool_calls`, which would read as no calls at all.

use super::common::{
    Calls, args_from_json_text, canonical, command_args, json_document, line_number, text_of,
};
use super::function_call_text;
use crate::classify::ToolOutcome;
use crate::trace::{TraceEvent, TraceLine};
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
struct Trajectory {
    messages: Vec<Message>,
    /// The whole run as one string, saved by some harnesses of the
    /// `----BEGIN_FUNCTION_CALL----` protocol instead of `messages`.
    #[serde(default)]
    context: Option<Value>,
}

#[derive(Deserialize)]
struct Message {
    role: String,
    #[serde(default)]
    content: Value,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCall>>,
    #[serde(default)]
    tool_call_id: Option<String>,
    #[serde(default)]
    extra: Option<Value>,
}

#[derive(Deserialize)]
struct ToolCall {
    #[serde(default)]
    id: Option<String>,
    function: Function,
}

#[derive(Deserialize)]
struct Function {
    name: String,
    #[serde(default)]
    arguments: Value,
}

/// Reads a mini-swe-agent trajectory.
pub fn import(text: &str) -> Result<Vec<TraceLine>, String> {
    let trajectory: Trajectory = json_document(text)?;
    let messages = trajectory.messages;
    if let Some(context) = trajectory.context.as_ref().and_then(Value::as_str)
        && messages.is_empty()
        && function_call_text::holds_call(context)
    {
        return Ok(function_call_text::import(
            &function_call_text::context_messages(context),
        ));
    }
    if let Some(texts) = function_call_text_run(&messages) {
        let protocol: Vec<function_call_text::Message<'_>> = messages
            .iter()
            .zip(&texts)
            .map(|(m, text)| function_call_text::Message {
                role: &m.role,
                text,
            })
            .collect();
        return Ok(function_call_text::import(&protocol));
    }
    let tool_calling = messages
        .iter()
        .any(|m| m.role == "tool" || m.tool_calls.as_ref().is_some_and(|c| !c.is_empty()));
    if tool_calling {
        results_without_calls(&messages)?;
        Ok(tool_calls(&messages))
    } else {
        text_actions(&messages)
    }
}

/// The texts of the messages when the run is in the
/// `----BEGIN_FUNCTION_CALL----` protocol: some reply holds such a call, and
/// none holds an action block or `tool_calls`. A mini-swe-agent run answers
/// no at its first action.
fn function_call_text_run(messages: &[Message]) -> Option<Vec<String>> {
    let mut holds_call = false;
    for reply in messages.iter().filter(|m| m.role == "assistant") {
        if reply.tool_calls.as_ref().is_some_and(|c| !c.is_empty()) {
            return None;
        }
        let text = text_of(Some(&reply.content));
        if !bash_blocks(&text).is_empty() {
            return None;
        }
        holds_call |= function_call_text::holds_call(&text);
    }
    holds_call.then(|| messages.iter().map(|m| text_of(Some(&m.content))).collect())
}

/// The end of the error for another agent's action syntax written in this
/// file format: read as mini-swe-agent, it would show a stuck agent that
/// never was (every reply rejected) or no calls at all.
const FOREIGN: &str =
    "not a mini-swe-agent trajectory (another agent's action syntax in its file format?)";

/// Refuses `tool` results when no assistant reply has `tool_calls`.
fn results_without_calls(messages: &[Message]) -> Result<(), String> {
    let calls = messages
        .iter()
        .any(|m| m.role == "assistant" && m.tool_calls.as_ref().is_some_and(|c| !c.is_empty()));
    let results = messages.iter().filter(|m| m.role == "tool").count();
    if calls || results == 0 {
        return Ok(());
    }
    let first = messages
        .iter()
        .position(|m| m.role == "assistant")
        .map_or(1, line_number);
    Err(format!(
        "message {first}: {results} `tool` results, but no assistant reply has `tool_calls`: {FOREIGN}"
    ))
}

/// The text-action variant; an error when none of two or more replies
/// holds an action block.
fn text_actions(messages: &[Message]) -> Result<Vec<TraceLine>, String> {
    let mut calls = Calls::default();
    let (mut replies, mut actions, mut first) = (0, 0, None);
    for (index, message) in messages.iter().enumerate() {
        if message.role != "assistant" {
            continue;
        }
        replies += 1;
        first.get_or_insert(line_number(index));
        let text = text_of(Some(&message.content));
        let blocks = bash_blocks(&text);
        let [command] = blocks.as_slice() else {
            // Rejected as a format error: the next user message says why.
            if let Some(next) = messages.get(index + 1).filter(|m| m.role == "user") {
                let feedback = text_of(Some(&next.content));
                calls.push(line_number(index + 1), no_tool_call(feedback));
            }
            continue;
        };
        actions += 1;
        let call = calls.call(line_number(index), None, "bash", command_args(command));
        if let Some(next) = messages.get(index + 1).filter(|m| m.role == "user")
            && let Some(outcome) = calls.outcome(call)
        {
            (outcome.output, outcome.exit_code) = observation(&text_of(Some(&next.content)));
        }
    }
    if replies >= 2 && actions == 0 {
        return Err(format!(
            "message {}: none of the {replies} assistant replies holds a ```bash action block: {FOREIGN}",
            first.unwrap_or(1)
        ));
    }
    Ok(calls.finish())
}

/// The tool-calling variant.
fn tool_calls(messages: &[Message]) -> Vec<TraceLine> {
    let mut calls = Calls::default();
    let mut seen_prompt = false;
    let mut unanswered: Option<usize> = None;
    for (index, message) in messages.iter().enumerate() {
        let line = line_number(index);
        match message.role.as_str() {
            "assistant" => {
                for call in message.tool_calls.iter().flatten() {
                    let args = match &call.function.arguments {
                        Value::String(s) => args_from_json_text(s),
                        Value::Null => String::new(),
                        other => canonical(other),
                    };
                    let id = call.id.as_deref();
                    unanswered = Some(calls.call(line, id, &call.function.name, args));
                }
            }
            "tool" => {
                let Some(id) = message.tool_call_id.as_deref() else {
                    continue;
                };
                if let Some(call) = calls.take_pending(id)
                    && let Some(outcome) = calls.outcome(call)
                {
                    (outcome.output, outcome.exit_code) =
                        observation(&text_of(Some(&message.content)));
                    if unanswered == Some(call) {
                        unanswered = None;
                    }
                }
            }
            "exit" => {
                if let Some(call) = unanswered.take()
                    && let Some(outcome) = calls.outcome(call)
                {
                    outcome.output = text_of(Some(&message.content));
                }
            }
            "user" => {
                let interrupt = message
                    .extra
                    .as_ref()
                    .and_then(|e| e.get("interrupt_type"))
                    .filter(|t| !t.is_null());
                if interrupt.and_then(Value::as_str) == Some("FormatError") {
                    calls.push(line, no_tool_call(text_of(Some(&message.content))));
                }
                if interrupt.is_none() {
                    if seen_prompt {
                        calls.push(line, TraceEvent::Turn);
                    }
                    seen_prompt = true;
                }
            }
            _ => {}
        }
    }
    calls.finish()
}

/// A reply the harness rejected because it held no valid action: a step
/// with no tool, the harness's message as its output, flagged as an error.
fn no_tool_call(feedback: String) -> TraceEvent {
    TraceEvent::Tool(ToolOutcome {
        tool: String::new(),
        args: String::new(),
        output: feedback,
        exit_code: None,
        is_error: Some(true),
        batch: None,
    })
}

/// The commands of a text's action blocks, as mini-swe-agent's default
/// `action_regex` ```` ```bash\s*\n(.*?)\n``` ```` finds them.
fn bash_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some((fence, at)) = ["```bash", "```mswea_bash_command"]
        .iter()
        .filter_map(|f| rest.find(f).map(|at| (*f, at)))
        .min_by_key(|(_, at)| *at)
    {
        let after = &rest[at + fence.len()..];
        let ws = after.len() - after.trim_start().len();
        // `\s*\n`: the whitespace run up to its last newline.
        let Some(newline) = after[..ws].rfind('\n') else {
            rest = after;
            continue;
        };
        let body = &after[newline + 1..];
        // `(.*?)\n```` lazily; an empty command may share the newline.
        let (command, end) = if body.starts_with("```") && newline > 0 {
            ("", 3)
        } else {
            match body.find("\n```") {
                Some(close) => (&body[..close], close + 4),
                None => {
                    rest = after;
                    continue;
                }
            }
        };
        blocks.push(command);
        rest = &body[end..];
    }
    blocks
}

/// An observation's output and exit code.
fn observation(text: &str) -> (String, Option<i32>) {
    if let Some(open) = text.find("<returncode>") {
        let after = &text[open + "<returncode>".len()..];
        if let Some(close) = after.find("</returncode>") {
            let code = after[..close].trim().parse::<i32>().ok();
            let rest = format!(
                "{}{}",
                &text[..open],
                &after[close + "</returncode>".len()..]
            );
            let trimmed = rest.trim();
            let output = match trimmed
                .strip_prefix("<output>")
                .and_then(|t| t.strip_suffix("</output>"))
            {
                Some(inner) if !inner.contains("<output>") => {
                    inner.strip_prefix('\n').unwrap_or(inner).to_string()
                }
                _ => trimmed.to_string(),
            };
            return (output, code);
        }
    }
    let code = text.trim_end().strip_suffix('}').and_then(|head| {
        let at = head.rfind("'returncode': ")?;
        head[at + "'returncode': ".len()..]
            .trim()
            .parse::<i32>()
            .ok()
    });
    (text.to_string(), code)
}
