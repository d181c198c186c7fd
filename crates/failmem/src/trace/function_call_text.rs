//! The `----BEGIN_FUNCTION_CALL----` text protocol: the ReAct agent that
//! Berkeley's CS 294-264 homework has each student build, whose runs are
//! saved in mini-swe-agent's file format (`"trajectory_format":
//! "mini-swe-agent-1"`). A reply ends with one call, found from the last
//! begin marker as the course's parser does with `rfind`:
//!
//! ```text
//! thoughts …
//! ----BEGIN_FUNCTION_CALL----
//! run_bash_cmd
//! ----ARG----
//! command
//! ----VALUE----          (in some students' versions)
//! ls -la
//! ----END_FUNCTION_CALL----
//! ```
//!
//! The end marker is often missing: the harness stops the model on it.
//!
//! - Each reply with a call is one call: `tool` the function name, `args`
//!   its named arguments as a JSON object of strings.
//! - Every message after it up to the next reply (`user`, `system`, `tool`
//!   or `error`, as each student's harness names them) is its result. The
//!   harness's frame around the output is dropped: a `Result:` or `Tool 'x'
//!   returned:` first line, or `----TOOL RESULT BEGIN----` … `END----`.
//! - The result is an error when the harness says so: an `error` message,
//!   or a first line such as `Error executing 'x': …`, `Tool 'x' error: …`
//!   or `ParserError: …`.
//! - A reply with no call is a step with no tool, its result the
//!   harness's complaint.
//! - Some harnesses save no `messages` but the whole context in `context`:
//!   the messages as the model saw them, each under a
//!   `|MESSAGE(role="…", id=N)|` header line.
//!
//! A trace line is the 1-based message number (in `context`, the header's
//! position).

use super::common::{Calls, canonical, line_number};
use crate::classify::ToolOutcome;
use crate::trace::{TraceEvent, TraceLine};
use serde_json::{Map, Value};

const BEGIN: &str = "----BEGIN_FUNCTION_CALL----";
/// The end marker without its trailing dashes, which some versions omit.
const END: &str = "----END_FUNCTION_CALL";
const ARG: &str = "----ARG----";
const VALUE: &str = "----VALUE----";
/// The frame some harnesses put around a tool's output.
const RESULT_BEGIN: &str = "----TOOL RESULT BEGIN----";
const RESULT_END: &str = "----TOOL RESULT END----";

/// One message of the protocol: who sent it and its text.
pub(crate) struct Message<'a> {
    /// `assistant` for the model's replies; anything else is the harness.
    pub role: &'a str,
    /// The text.
    pub text: &'a str,
}

/// Whether a reply holds a call in this protocol.
pub(crate) fn holds_call(text: &str) -> bool {
    text.contains(BEGIN)
}

/// Reads the messages of a run in this protocol.
pub(crate) fn import(messages: &[Message<'_>]) -> Vec<TraceLine> {
    let mut calls = Calls::default();
    let mut index = 0;
    while index < messages.len() {
        let message = &messages[index];
        index += 1;
        if message.role != "assistant" {
            continue;
        }
        let line = line_number(index - 1);
        let first_result = index;
        while index < messages.len() && messages[index].role != "assistant" {
            index += 1;
        }
        let results = &messages[first_result..index];
        if results.is_empty() && index < messages.len() {
            // The model was asked again before anything ran: not a step.
            continue;
        }
        let output = results
            .iter()
            .map(|m| unframed(m.text))
            .collect::<Vec<_>>()
            .join("\n");
        let failed = results.iter().any(|m| is_error(m));
        let event = match parse(message.text) {
            Some((tool, args)) => TraceEvent::Tool(ToolOutcome {
                tool,
                args,
                output,
                exit_code: None,
                is_error: failed.then_some(true),
                batch: None,
            }),
            None if results.is_empty() => continue,
            None => TraceEvent::Tool(ToolOutcome {
                output,
                is_error: Some(true),
                ..ToolOutcome::default()
            }),
        };
        calls.push(line, event);
    }
    calls.finish()
}

/// The call at the end of a reply: its function name and its arguments as
/// canonical JSON; `None` when the reply holds none.
fn parse(text: &str) -> Option<(String, String)> {
    let body = &text[text.rfind(BEGIN)? + BEGIN.len()..];
    let body = body.find(END).map_or(body, |end| &body[..end]);
    let mut parts = body.split(ARG);
    let name = parts.next()?.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let mut args = Map::new();
    for part in parts {
        let part = part.strip_prefix('\n').unwrap_or(part);
        let (key, value) = part.split_once('\n').unwrap_or((part, ""));
        let value = value
            .strip_prefix(VALUE)
            .map_or(value, |v| v.strip_prefix('\n').unwrap_or(v));
        let value = value.strip_suffix('\n').unwrap_or(value);
        args.insert(key.trim().to_string(), Value::String(value.to_string()));
    }
    Some((name.to_string(), canonical(&Value::Object(args))))
}

/// A result without the harness's frame around the tool's output.
fn unframed(text: &str) -> &str {
    if let Some(start) = text.find(RESULT_BEGIN) {
        let inner = &text[start + RESULT_BEGIN.len()..];
        let inner = inner.find(RESULT_END).map_or(inner, |e| &inner[..e]);
        return inner.strip_prefix('\n').unwrap_or(inner);
    }
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let first = first.trim();
    let header =
        first == "Result:" || (first.starts_with("Tool '") && first.ends_with("' returned:"));
    if header { rest } else { text }
}

/// Whether the harness reports a result as an error.
fn is_error(message: &Message<'_>) -> bool {
    if message.role == "error" {
        return true;
    }
    let first = message.text.trim_start().lines().next().unwrap_or("");
    let word = first.split([' ', ':']).next().unwrap_or("");
    word == "Error"
        || (word.ends_with("Error") && first[word.len()..].starts_with(':'))
        || (first.starts_with("Tool '") && first.contains("' error:"))
}

/// The messages of a saved `context` string, in order, each the text under
/// its `|MESSAGE(role="…", id=N)|` header line; reading stops at a header
/// with no closing quote.
pub(crate) fn context_messages(context: &str) -> Vec<Message<'_>> {
    const HEAD: &str = "|MESSAGE(role=\"";
    context
        .split(HEAD)
        .skip(1)
        .map_while(|chunk| {
            let (role, header_rest) = chunk.split_once('"')?;
            let text = header_rest.split_once('\n').map_or("", |(_, b)| b);
            Some(Message {
                role,
                text: without_rule(text),
            })
        })
        .collect()
}

/// A context message without the next header's rule line (`-----…`) and
/// the list separator (`, `) some harnesses print before it.
fn without_rule(text: &str) -> &str {
    let text = text.trim_end();
    let text = match text.rsplit_once('\n') {
        Some((head, last))
            if last.len() >= 10 && last.trim_start_matches(", ").bytes().all(|b| b == b'-') =>
        {
            head
        }
        _ => text,
    };
    text.trim_end().trim_end_matches(',')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(line: &TraceLine) -> &ToolOutcome {
        match &line.event {
            TraceEvent::Tool(t) => t,
            other => panic!("not a tool call: {other:?}"),
        }
    }

    #[test]
    fn a_call_with_value_markers_or_without_and_with_no_end_marker() {
        let with_value = "I'll look.\n----BEGIN_FUNCTION_CALL----\nrun_bash_cmd\n----ARG----\ncommand\n----VALUE----\nls -la\n----END_FUNCTION_CALL----";
        let plain = "Look.\n----BEGIN_FUNCTION_CALL----\nshow_file\n----ARG----\nfile_path\na.py\n----ARG----\nstart_line\n1\n";
        assert_eq!(
            parse(with_value),
            Some(("run_bash_cmd".into(), r#"{"command":"ls -la"}"#.into()))
        );
        assert_eq!(
            parse(plain),
            Some((
                "show_file".into(),
                r#"{"file_path":"a.py","start_line":"1"}"#.into()
            ))
        );
        assert_eq!(parse("no call here"), None);
    }

    #[test]
    fn the_last_begin_marker_is_the_call() {
        let text = "Earlier I wrote ----BEGIN_FUNCTION_CALL---- by mistake.\n----BEGIN_FUNCTION_CALL----\nfinish\n----ARG----\nresult\ndone\n----END_FUNCTION_CALL";
        assert_eq!(
            parse(text),
            Some(("finish".into(), r#"{"result":"done"}"#.into()))
        );
    }

    #[test]
    fn results_lose_their_frame_and_errors_are_flagged() {
        let call = "----BEGIN_FUNCTION_CALL----\nrun_bash_cmd\n----ARG----\ncommand\nls\n----END_FUNCTION_CALL----";
        let messages = [
            Message {
                role: "system",
                text: "You are a Smart ReAct agent.",
            },
            Message {
                role: "user",
                text: "Fix it.",
            },
            Message {
                role: "assistant",
                text: call,
            },
            Message {
                role: "system",
                text: "Result:\na.py\n",
            },
            Message {
                role: "assistant",
                text: call,
            },
            Message {
                role: "tool",
                text: "run_bash_cmd(args={'command': 'ls'})\n----TOOL RESULT BEGIN----\na.py\n----TOOL RESULT END----",
            },
            Message {
                role: "assistant",
                text: call,
            },
            Message {
                role: "user",
                text: "Error executing 'run_bash_cmd': exit status 2",
            },
            Message {
                role: "assistant",
                text: "I am done.",
            },
            Message {
                role: "error",
                text: "ParserError: Missing BEGIN_FUNCTION_CALL marker",
            },
        ];
        let lines = import(&messages);
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0].line, 3);
        assert_eq!(tool(&lines[0]).output, "a.py\n");
        assert_eq!(tool(&lines[0]).is_error, None);
        assert_eq!(tool(&lines[1]).output, "a.py\n");
        assert_eq!(tool(&lines[2]).is_error, Some(true));
        assert_eq!(tool(&lines[3]).tool, "");
        assert_eq!(tool(&lines[3]).is_error, Some(true));
    }

    #[test]
    fn a_context_string_is_split_at_its_headers() {
        let context = "----------------------------\n|MESSAGE(role=\"system\", id=0)|\nYou are a Smart ReAct agent.\n, ----------------------------\n|MESSAGE(role=\"assistant\", id=3)|\nls\n----BEGIN_FUNCTION_CALL----\nrun_bash_cmd\n----ARG----\ncommand\nls\n----------------------------\n|MESSAGE(role=\"tool\", id=4)|\na.py\n";
        let messages = context_messages(context);
        let roles: Vec<&str> = messages.iter().map(|m| m.role).collect();
        assert_eq!(roles, ["system", "assistant", "tool"]);
        assert_eq!(messages[0].text, "You are a Smart ReAct agent.");
        assert_eq!(messages[2].text, "a.py");
        let lines = import(&messages);
        assert_eq!(tool(&lines[0]).args, r#"{"command":"ls"}"#);
        assert_eq!(tool(&lines[0]).output, "a.py");
    }
}
