//! The trajectory importers (`failmem::trace::import`) on hand-written
//! fixtures, a few lines per format variant
//! (`conformance/trajectories/fixtures/<format>/…`): `detect` finds the
//! format, `import` gives exactly the expected events, and every error path
//! names a line or a byte offset, for every prefix of every fixture too.

use failmem::ToolOutcome;
use failmem::trace::{Format, TraceEvent, TraceLine, detect};

/// `failmem::trace::import` with its `invalid-trace` message as the error.
fn import(text: &str, format: Option<Format>) -> Result<Vec<TraceLine>, String> {
    failmem::trace::import(text, format).map_err(|e| match e {
        failmem::Error::InvalidTrace(message) => message,
        other => panic!("an importer returned {other:?}, not invalid-trace"),
    })
}

fn read(path: &str) -> String {
    let full = format!(
        "{}/../../conformance/trajectories/fixtures/{path}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

fn tool(
    line: u32,
    tool: &str,
    args: &str,
    output: &str,
    exit_code: Option<i32>,
    is_error: Option<bool>,
) -> TraceLine {
    TraceLine {
        line,
        event: TraceEvent::Tool(ToolOutcome {
            tool: tool.into(),
            args: args.into(),
            output: output.into(),
            exit_code,
            is_error,
            batch: None,
        }),
    }
}

/// `line` as a call of the model reply `batch`.
fn in_batch(mut line: TraceLine, batch: &str) -> TraceLine {
    if let TraceEvent::Tool(outcome) = &mut line.event {
        outcome.batch = Some(batch.into());
    }
    line
}

fn turn(line: u32) -> TraceLine {
    TraceLine {
        line,
        event: TraceEvent::Turn,
    }
}

fn compaction(line: u32) -> TraceLine {
    TraceLine {
        line,
        event: TraceEvent::Compaction,
    }
}

#[track_caller]
fn check(path: &str, format: Format, expected: &[TraceLine]) {
    let text = read(path);
    assert_eq!(detect(&text), Some(format), "{path}: detect");
    let got = import(&text, None).unwrap_or_else(|e| panic!("{path}: {e}"));
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        assert_eq!(g, e, "{path}: event {i}");
    }
    assert_eq!(got.len(), expected.len(), "{path}: {got:#?}");
}

#[test]
fn claude_code_session() {
    check(
        "claude-code/session.jsonl",
        Format::ClaudeCode,
        &[
            in_batch(
                tool(
                    5,
                    "Bash",
                    r#"{"command":"cargo test parser","description":"run tests"}"#,
                    "Exit code 101\nerror[E0425]: cannot find value `x`",
                    None,
                    Some(true),
                ),
                "msg_1",
            ),
            in_batch(
                tool(
                    8,
                    "Read",
                    r#"{"file_path":"src/parser.rs"}"#,
                    "1\tfn parse() {}",
                    None,
                    Some(false),
                ),
                "msg_2",
            ),
            in_batch(
                tool(
                    9,
                    "Grep",
                    r#"{"path":"src","pattern":"fn parse"}"#,
                    "src/parser.rs:3:fn parse\nsrc/lib.rs:9:fn parse_all",
                    None,
                    None,
                ),
                "msg_2",
            ),
            turn(15),
            in_batch(
                tool(
                    16,
                    "Edit",
                    r#"{"file_path":"src/parser.rs","new_string":"fn parse() { lex() }","old_string":"fn parse() {}"}"#,
                    "The file src/parser.rs has been updated.",
                    None,
                    None,
                ),
                "msg_3",
            ),
            compaction(18),
            compaction(20),
            turn(21),
            in_batch(
                tool(
                    22,
                    "Bash",
                    r#"{"command":"cargo test parser"}"#,
                    "",
                    None,
                    None,
                ),
                "msg_4",
            ),
        ],
    );
}

#[test]
fn claude_code_subagent_file() {
    check(
        "claude-code/subagent.jsonl",
        Format::ClaudeCode,
        &[
            in_batch(
                tool(
                    2,
                    "Glob",
                    r#"{"pattern":"**/config*"}"#,
                    "src/config.rs",
                    None,
                    None,
                ),
                "m1",
            ),
            in_batch(
                tool(
                    2,
                    "Grep",
                    r#"{"pattern":"load_config"}"#,
                    "src/main.rs:4: load_config()",
                    None,
                    None,
                ),
                "m1",
            ),
        ],
    );
}

#[test]
fn claude_code_resumed_duplicates_each_count() {
    check(
        "claude-code/resumed.jsonl",
        Format::ClaudeCode,
        &[
            tool(
                3,
                "Bash",
                r#"{"command":"make"}"#,
                "make: *** No rule to make target",
                None,
                Some(true),
            ),
            turn(6),
            tool(
                7,
                "Bash",
                r#"{"command":"make"}"#,
                "make: *** No rule to make target (again)",
                None,
                Some(true),
            ),
        ],
    );
}

#[test]
fn codex_rollout() {
    check(
        "codex/rollout.jsonl",
        Format::Codex,
        &[
            tool(
                8,
                "exec_command",
                r#"{"cmd":"make test","workdir":"/repo"}"#,
                "make: *** [test] Error 2\n",
                Some(2),
                None,
            ),
            tool(
                10,
                "exec_command",
                r#"{"cmd":"make serve","yield_time_ms":1000}"#,
                "listening\n",
                None,
                None,
            ),
            tool(
                12,
                "write_stdin",
                r#"{"chars":"","session_id":7}"#,
                "",
                Some(0),
                None,
            ),
            tool(
                14,
                "apply_patch",
                r#"{"input":"*** Begin Patch\n*** Update File: Makefile\n@@\n-test:\n+test: build\n*** End Patch\n"}"#,
                "Success. Updated the following files:\nM Makefile\n",
                Some(0),
                None,
            ),
            compaction(17),
            turn(21),
            tool(22, "exec_command", "not json {", "", None, None),
        ],
    );
}

#[test]
fn codex_web_search_calls() {
    check(
        "codex/web-search.jsonl",
        Format::Codex,
        &[
            tool(
                3,
                "web_search",
                r#"{"query":"widget --strict flag release notes","type":"search"}"#,
                "",
                None,
                None,
            ),
            tool(
                4,
                "web_search",
                r#"{"type":"open_page","url":"https://example.test/releases"}"#,
                "",
                None,
                None,
            ),
            tool(
                5,
                "web_search",
                r#"{"pattern":"--strict","type":"find_in_page","url":"https://example.test/releases"}"#,
                "",
                None,
                None,
            ),
            tool(
                6,
                "web_search",
                r#"{"queries":["widget strict","widget 2.3"],"type":"search"}"#,
                "",
                None,
                Some(true),
            ),
            tool(7, "web_search", "", "", None, None),
            tool(
                8,
                "exec_command",
                r#"{"cmd":"widget --version"}"#,
                "widget 2.3.1\n",
                Some(0),
                None,
            ),
        ],
    );
}

#[test]
fn codex_legacy_rollout() {
    check(
        "codex/legacy.jsonl",
        Format::Codex,
        &[
            tool(
                5,
                "local_shell",
                r#"{"command":["bash","-lc","ls"],"timeout_ms":10000,"type":"exec"}"#,
                "Makefile\nsrc\n",
                Some(0),
                None,
            ),
            turn(8),
            tool(
                9,
                "shell",
                r#"{"command":["cat","Makefile"]}"#,
                "cat: Makefile: Permission denied\n",
                Some(1),
                None,
            ),
        ],
    );
}

#[test]
fn swe_agent_before_1_0() {
    check(
        "swe-agent/pre1.traj",
        Format::SweAgent,
        &[
            tool(
                1,
                "find_file",
                r#"{"command":"find_file \"parser.py\"\n"}"#,
                "Found 1 matches for \"parser.py\" in /repo:\n/repo/src/parser.py",
                None,
                None,
            ),
            tool(
                2,
                "open",
                r#"{"command":"open src/parser.py 40"}"#,
                "[File: /repo/src/parser.py (120 lines total)]\n40:def parse(text):",
                None,
                None,
            ),
            tool(
                3,
                "edit",
                r#"{"command":"edit 41:41\n    return lex(text)\nend_of_edit"}"#,
                "Your proposed edit has introduced new syntax error(s).",
                None,
                None,
            ),
            tool(
                4,
                "submit",
                r#"{"command":"submit"}"#,
                "diff --git a/src/parser.py b/src/parser.py",
                None,
                None,
            ),
        ],
    );
}

#[test]
fn swe_agent_1_x_with_an_empty_action() {
    check(
        "swe-agent/v1.traj",
        Format::SweAgent,
        &[
            tool(
                1,
                "str_replace_editor",
                r#"{"command":"str_replace_editor view /testbed/app.py"}"#,
                "Here's the result of running `cat -n` on /testbed/app.py:\n     1\timport os",
                None,
                None,
            ),
            tool(
                2,
                "bash",
                r#"{"command":"cd /testbed && python -m pytest -q"}"#,
                "1 failed, 3 passed",
                None,
                None,
            ),
            tool(3, "", r#"{"command":""}"#, "", None, None),
        ],
    );
}

#[test]
fn mini_swe_agent_text_actions() {
    check(
        "mini-swe-agent/v1.traj.json",
        Format::MiniSweAgent,
        &[
            tool(
                3,
                "bash",
                r#"{"command":"ls -la"}"#,
                "cli.py\ntests\n",
                Some(0),
                None,
            ),
            tool(
                6,
                "",
                "",
                "Please always provide EXACTLY ONE action in triple backticks, found 0 actions.",
                None,
                Some(true),
            ),
            tool(
                8,
                "",
                "",
                "Please always provide EXACTLY ONE action in triple backticks, found 2 actions.",
                None,
                Some(true),
            ),
            tool(
                9,
                "bash",
                r#"{"command":"python cli.py ''"}"#,
                "IndexError: list index out of range\n",
                Some(1),
                None,
            ),
            tool(
                11,
                "bash",
                r#"{"command":"sed -i 's/args\\[0\\]/args[:1]/' cli.py"}"#,
                "Observation: {'output': '', 'returncode': 0}",
                Some(0),
                None,
            ),
            tool(
                13,
                "bash",
                r#"{"command":"echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}"#,
                "",
                None,
                None,
            ),
        ],
    );
}

#[test]
fn mini_swe_agent_file_of_the_function_call_text_protocol() {
    check(
        "mini-swe-agent/function-call-text.traj.json",
        Format::MiniSweAgent,
        &[
            tool(
                3,
                "run_bash_cmd",
                r#"{"command":"ls"}"#,
                "cli.py\ntests\n",
                None,
                None,
            ),
            tool(
                5,
                "show_file",
                r#"{"file_path":"cli.py","start_line":"1"}"#,
                "Error executing 'show_file': TypeError: show_file() got an unexpected keyword argument 'start_line'",
                None,
                Some(true),
            ),
            tool(
                7,
                "",
                "",
                "Error during function call: Missing BEGIN_FUNCTION_CALL marker",
                None,
                Some(true),
            ),
            tool(
                9,
                "finish",
                r#"{"result":"diff --git a/cli.py b/cli.py"}"#,
                "",
                None,
                None,
            ),
        ],
    );
}

#[test]
fn mini_swe_agent_file_with_the_run_in_a_context_string() {
    check(
        "mini-swe-agent/function-call-text-context.traj.json",
        Format::MiniSweAgent,
        &[tool(
            3,
            "run_bash_cmd",
            r#"{"command":"python cli.py ''"}"#,
            "IndexError: list index out of range\n",
            None,
            None,
        )],
    );
}

#[test]
fn mini_swe_agent_tool_calls() {
    check(
        "mini-swe-agent/v2.traj.json",
        Format::MiniSweAgent,
        &[
            tool(
                3,
                "bash",
                r#"{"command":"cat x.py"}"#,
                "for i in range(n + 1):\n",
                Some(0),
                None,
            ),
            tool(
                6,
                "",
                "",
                "No tool calls found in the response. Every response MUST include at least one tool call.",
                None,
                Some(true),
            ),
            tool(
                7,
                "bash",
                r#"{"command":"python -m pytest -q","timeout":120}"#,
                "<exception>Command timed out after 120 seconds</exception>\n\n<output>\n..F\n</output>",
                Some(-1),
                None,
            ),
            tool(
                7,
                "bash",
                r#"{"command":"git status"}"#,
                "modified: x.py\n",
                Some(0),
                None,
            ),
            turn(10),
            tool(
                11,
                "bash",
                r#"{"command":"echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"}"#,
                "diff --git a/x.py b/x.py",
                None,
                None,
            ),
        ],
    );
}

#[test]
fn openhands_output_jsonl_with_events_and_pairs() {
    check(
        "openhands/output.jsonl",
        Format::OpenHands,
        &[
            tool(
                4,
                "run",
                r#"{"blocking":false,"command":"cd /workspace && pytest -q tests/test_date.py","is_input":false}"#,
                "F\nAssertionError: 2024-02-30",
                Some(1),
                None,
            ),
            tool(
                6,
                "read",
                r#"{"end":-1,"impl_source":"oh_aci","path":"/workspace/date.py","start":0,"view_range":null}"#,
                "1\tdef days(m):\n2\t    return 30",
                None,
                None,
            ),
            tool(
                10,
                "edit",
                r#"{"command":"str_replace","new_str":"return 28 if m == 2 else 30","old_str":"return 30","path":"/workspace/date.py"}"#,
                "The file /workspace/date.py has been edited.",
                None,
                None,
            ),
            compaction(11),
            turn(13),
            tool(
                14,
                "run_ipython",
                r#"{"code":"import calendar; calendar.isleap(2024)","include_extra":true}"#,
                "True",
                None,
                None,
            ),
            tool(17, "run", r#"{"command":"ls"}"#, "a.txt", Some(0), None),
            tool(
                18,
                "browse",
                r#"{"url":"http://localhost:8000"}"#,
                "Connection refused",
                None,
                None,
            ),
        ],
    );
}

#[test]
fn openhands_web_ui_event_list() {
    check(
        "openhands/events.json",
        Format::OpenHands,
        &[
            tool(
                5,
                "run",
                r#"{"command":"mkdir -p /workspace/site","is_input":false}"#,
                "",
                Some(0),
                None,
            ),
            tool(
                7,
                "browse_interactive",
                r#"{"browser_actions":"goto(\"http://localhost:8000\")"}"#,
                "hello",
                None,
                None,
            ),
            tool(
                9,
                "run",
                r#"{"command":"python3 -m http.server","is_input":false}"#,
                "Command timed out after 10 seconds",
                None,
                None,
            ),
            turn(12),
            // The browser observation's own `error` flag.
            tool(
                13,
                "browse_interactive",
                r#"{"browser_actions":"click(\"57\")"}"#,
                "hello",
                None,
                Some(true),
            ),
        ],
    );
}

#[test]
fn openhands_resolver_output() {
    check(
        "openhands/resolver.jsonl",
        Format::OpenHands,
        &[
            tool(
                4,
                "run",
                r#"{"blocking":false,"command":"ls /workspace","confirmation_state":"confirmed","hidden":false,"is_input":false,"security_risk":null}"#,
                "README.md  src",
                Some(0),
                None,
            ),
            tool(
                6,
                "edit",
                r#"{"command":"create","file_text":"print('hi')","impl_source":"oh_aci","new_str":null,"old_str":null,"path":"/workspace/src/greet.py"}"#,
                "File created successfully at: /workspace/src/greet.py",
                None,
                None,
            ),
            tool(
                8,
                "run",
                r#"{"blocking":false,"command":"python /workspace/src/greet.py","confirmation_state":"confirmed","hidden":false,"is_input":false,"security_risk":null}"#,
                "python: can't open file",
                Some(2),
                None,
            ),
        ],
    );
}

/// An OpenHands SDK (V1) event list, as a harness saves it (`model_dump`,
/// nulls kept): terminal calls that succeed and fail, a file edit error, a
/// user rejection, a condensation, a second prompt, a parallel batch, a tool
/// the SDK could not run; `think` and `finish` are not calls.
#[test]
fn openhands_sdk_event_list() {
    let completed = |code: i32| format!("\n[The command completed with exit code {code}.]");
    check(
        "openhands/sdk-events.json",
        Format::OpenHands,
        &[
            tool(
                4,
                "terminal",
                r#"{"command":"ls /workspace/dates","is_input":false}"#,
                &format!("dates.py  tests{}", completed(0)),
                Some(0),
                Some(false),
            ),
            tool(
                6,
                "terminal",
                r#"{"command":"cd /workspace/dates && pytest -q","is_input":false}"#,
                &format!("F\nAssertionError: 2024-02-30{}", completed(1)),
                Some(1),
                Some(false),
            ),
            tool(
                8,
                "file_editor",
                r#"{"command":"str_replace","new_str":"return 28","old_str":"return 31","path":"/workspace/dates/dates.py"}"#,
                "No replacement was performed, old_str `return 31` did not appear verbatim in /workspace/dates/dates.py.",
                None,
                Some(true),
            ),
            tool(
                10,
                "terminal",
                r#"{"command":"rm -rf /workspace/dates/tests","is_input":false}"#,
                "User rejected the action",
                None,
                Some(true),
            ),
            compaction(12),
            turn(13),
            in_batch(
                tool(
                    14,
                    "file_editor",
                    r#"{"command":"view","path":"/workspace/dates/dates.py"}"#,
                    "     1\tdef days(m):\n     2\t    return 30",
                    None,
                    Some(false),
                ),
                "resp_5",
            ),
            in_batch(
                tool(
                    15,
                    "terminal",
                    r#"{"command":"cd /workspace/dates && git status --short","is_input":false}"#,
                    &completed(0),
                    Some(0),
                    Some(false),
                ),
                "resp_5",
            ),
            tool(
                18,
                "str_replace",
                r#"{"path":"/workspace/dates/dates.py"}"#,
                "Tool 'str_replace' not found. Available: ['terminal', 'file_editor', 'finish', 'think']",
                None,
                Some(true),
            ),
        ],
    );
}

/// The SDK's own event files (`exclude_none`) as JSON Lines: a soft timeout,
/// a result whose action is not in the file (skipped), a 1.0 alpha
/// observation (`output`, `error`), and a last action with no result.
#[test]
fn openhands_sdk_event_lines() {
    check(
        "openhands/sdk-events.jsonl",
        Format::OpenHands,
        &[
            tool(
                2,
                "terminal",
                r#"{"command":"python3 -m http.server 8000","is_input":false}"#,
                "Serving HTTP on 0.0.0.0 port 8000 ...\n[The command has no new output after 10 seconds. You may wait longer to see additional output by sending empty command '', send other commands to interact with the current process, send keys to interrupt/kill the command, or use the timeout parameter in terminal for future commands.]",
                Some(-1),
                Some(false),
            ),
            tool(
                6,
                "execute_bash",
                r#"{"command":"curl -s localhost:8000"}"#,
                "curl: (7) Failed to connect to localhost port 8000",
                Some(7),
                Some(false),
            ),
            tool(
                9,
                "file_editor",
                r#"{"command":"create","file_text":"<h1>hello</h1>","path":"/workspace/site/index.html"}"#,
                "",
                None,
                None,
            ),
        ],
    );
}

/// The tool lines of `lines`, without their line numbers.
fn outcomes(lines: &[TraceLine]) -> Vec<ToolOutcome> {
    lines
        .iter()
        .filter_map(|l| match &l.event {
            TraceEvent::Tool(o) => Some(o.clone()),
            _ => None,
        })
        .collect()
}

/// A conversation's `events/event-*.json` files concatenated (`cat`, each
/// file pretty-printed or compact, with no newline between) read as the
/// same events; an event's line is the line it begins on.
#[test]
fn openhands_sdk_concatenated_event_files() {
    let lines_text = read("openhands/sdk-events.jsonl");
    let events: Vec<serde_json::Value> = lines_text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let expected = outcomes(&import(&lines_text, None).unwrap());
    let compact: String = events.iter().map(|e| e.to_string()).collect();
    let pretty: Vec<String> = events
        .iter()
        .map(|e| serde_json::to_string_pretty(e).unwrap())
        .collect();
    // The action begins on the line the first file ends on: `}{`.
    let action_line = pretty[0].lines().count() as u32;
    for (text, line) in [(compact, 1), (pretty.concat(), action_line)] {
        assert_eq!(detect(&text), Some(Format::OpenHands));
        let got = import(&text, None).unwrap();
        assert_eq!(outcomes(&got), expected);
        assert_eq!(got[0].line, line);
    }
}

#[test]
fn failmem_trace() {
    check(
        "failmem/trace.jsonl",
        Format::Failmem,
        &[
            TraceLine {
                line: 2,
                event: TraceEvent::Task {
                    id: "T-1".into(),
                    summary: "fix the build".into(),
                },
            },
            tool(
                3,
                "bash",
                r#"{"command":"make"}"#,
                "error: missing ;",
                Some(2),
                None,
            ),
            turn(5),
            compaction(6),
            TraceLine {
                line: 7,
                event: TraceEvent::TaskEnd {
                    succeeded: false,
                    reason: Some("gave up".into()),
                },
            },
        ],
    );
}

#[test]
fn every_format_has_a_fixture() {
    let dir = format!(
        "{}/../../conformance/trajectories/fixtures",
        env!("CARGO_MANIFEST_DIR")
    );
    for format in Format::ALL {
        let sub = std::path::Path::new(&dir).join(format.name());
        let files = std::fs::read_dir(&sub).map(|d| d.count()).unwrap_or(0);
        assert!(files > 0, "no fixture for {}", format.name());
    }
}

/// Checks that `text` fails to import as `format` with an error that starts
/// with `prefix` (the line or offset) and contains `needle`.
#[track_caller]
fn fails_one(format: Format, text: &str, prefix: &str, needle: &str) {
    fails(format, &[(text, prefix, needle)]);
}

/// [`fails_one`] for each `(text, prefix, needle)` of a table.
#[track_caller]
fn fails(format: Format, cases: &[(&str, &str, &str)]) {
    for (text, prefix, needle) in cases {
        match import(text, Some(format)) {
            Ok(lines) => panic!("{format:?}: expected an error, got {} events", lines.len()),
            Err(m) => assert!(
                m.starts_with(prefix) && m.contains(needle),
                "{format:?}: expected `{prefix}…{needle}…`, got `{m}`"
            ),
        }
    }
}

const CLAUDE_OK: &str = r#"{"type":"user","message":{"role":"user","content":"hi"}}"#;

#[test]
fn claude_code_errors_name_the_line() {
    let not_json = format!("{CLAUDE_OK}\nnot json\n");
    let array = format!("{CLAUDE_OK}\n\n[1, 2]\n");
    // Truncated mid-line (mid-string).
    let truncated = format!("{CLAUDE_OK}\n{}", &CLAUDE_OK[..30]);
    #[rustfmt::skip]
    let cases: &[(&str, &str, &str)] = &[
        (&not_json, "line 2: ", "expected a JSON object"),
        (&array, "line 3: ", "expected a JSON object"),
        (&truncated, "line 2: ", "EOF while parsing"),
        (r#"{"type":"user","message":{"content":7}}"#, "line 1: ", "`user` line needs `message.content`"),
        (r#"{"type":"assistant"}"#, "line 1: ", "`assistant` line needs `message.content`"),
        (r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","input":{}}]}}"#, "line 1: ", "`tool_use` block needs a string `name`"),
        (r#"{"type":"user","message":{"content":[{"type":"tool_result","content":"x"}]}}"#, "line 1: ", "`tool_result` block needs a string `tool_use_id`"),
    ];
    fails(Format::ClaudeCode, cases);
}

#[test]
fn codex_errors_name_the_line() {
    let meta = r#"{"type":"session_meta","payload":{"id":"s"}}"#;
    let truncated = format!("{meta}\n{{\"type\":\"response_item\",");
    let text = format!("{meta}\n\"text\"");
    let output = format!(
        "{meta}\n{}",
        r#"{"type":"response_item","payload":{"type":"function_call_output","output":"x"}}"#
    );
    #[rustfmt::skip]
    let cases: &[(&str, &str, &str)] = &[
        (&truncated, "line 2: ", "expected a JSON object"),
        (&text, "line 2: ", "expected a JSON object"),
        (r#"{"type":"response_item","payload":[]}"#, "line 1: ", "`response_item` line needs an object `payload`"),
        (r#"{"type":"event_msg"}"#, "line 1: ", "`event_msg` line needs an object `payload`"),
        (r#"{"type":"response_item","payload":{"type":"function_call","arguments":"{}","call_id":"c"}}"#, "line 1: ", "`function_call` item needs a string `name`"),
        (r#"{"type":"response_item","payload":{"type":"custom_tool_call","input":"x","call_id":"c"}}"#, "line 1: ", "`custom_tool_call` item needs a string `name`"),
        (&output, "line 2: ", "`function_call_output` item needs a string `call_id`"),
        // A bare (early) item is checked the same way.
        (r#"{"type":"function_call","arguments":"{}"}"#, "line 1: ", "needs a string `name`"),
    ];
    fails(Format::Codex, cases);
}

#[test]
fn swe_agent_errors_name_the_offset() {
    let list = r#"{"trajectory": [{"action": "ls", "observation": "a"}"#;
    let at_end = format!("offset {}: ", list.len());
    #[rustfmt::skip]
    let cases: &[(&str, &str, &str)] = &[
        ("", "offset 0: ", "EOF while parsing"),
        ("not json", "offset 2: ", "expected ident"),
        (list, &at_end, "EOF while parsing a list"),
        (r#"{"info": {}}"#, "offset 12: ", "missing field `trajectory`"),
        (r#"{"trajectory": {}}"#, "offset 15: ", "invalid type: map, expected a sequence"),
        (r#"{"trajectory": [{"action": 5}]}"#, "offset 28: ", "invalid type: integer `5`, expected a string"),
        ("{\"trajectory\": [\n  {\"observation\": [1]}\n]}", "offset 35: ", "expected a string"),
        (r#"{"trajectory": []} x"#, "offset 20: ", "trailing characters"),
    ];
    fails(Format::SweAgent, cases);
}

#[test]
fn mini_swe_agent_errors_name_the_offset() {
    #[rustfmt::skip]
    let cases: &[(&str, &str, &str)] = &[
        ("[]", "offset 2: ", "expected struct Trajectory"),
        (r#"{"info": {}, "trajectory_format": "mini-swe-agent-1"}"#, "offset 53: ", "missing field `messages`"),
        (r#"{"messages": [{"content": "x"}]}"#, "offset 30: ", "missing field `role`"),
        (r#"{"messages": [{"role": 1}]}"#, "offset 24: ", "expected a string"),
        (r#"{"messages": [{"role": "assistant", "tool_calls": [{"id": "a", "function": {"arguments": "{}"}}]}]}"#, "offset 94: ", "missing field `name`"),
        (r#"{"messages": [{"role": "assistant", "tool_calls": {}}]}"#, "offset 50: ", "expected a sequence"),
        (r#"{"messages": [{"role": "user", "content": "abc"#, "offset 46: ", "EOF while parsing a string"),
        (r#"{"messages": [{"role": "system", "content": "s"}, {"role": "assistant", "content": "Action: ls"}, {"role": "user", "content": "a"}, {"role": "assistant", "content": "Action: pwd"}]}"#, "message 2: ", "none of the 2 assistant replies holds a ```bash action block"),
        (r#"{"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "I'll run the tests"}, {"role": "tool", "content": "run_bash_cmd(args={'command': 'pytest'})"}]}"#, "message 2: ", "1 `tool` results, but no assistant reply has `tool_calls`"),
    ];
    fails(Format::MiniSweAgent, cases);
}

#[test]
fn openhands_errors_name_the_line_or_offset() {
    // output.jsonl is JSON Lines.
    let run = r#"{"instance_id": "a", "history": []}"#;
    let second = format!("{run}\n{{\"instance_id\": \"b\"}}\n");
    let truncated = format!("{run}\n{run}\n{}", &run[..20]);
    #[rustfmt::skip]
    let cases: &[(&str, &str, &str)] = &[
        // A saved event list is a JSON document.
        (r#"[{"id": 0, "action": "run"}, 3]"#, "offset 30: ", "an event object or an [action, observation] pair"),
        (r#"[[{"action": "run"}]]"#, "offset 20: ", "invalid length 1"),
        (r#"[[{"action": "run"}, {"observation": "run"}, {}]]"#, "offset 48: ", "invalid length 3"),
        (r#"[{"id": 0, "action": "run", "args": {"command": "ls"#, "offset 51: ", "EOF while parsing"),
        // A pretty-printed single run is a JSON document too.
        ("{\n  \"instance_id\": \"x\"\n}", "offset 24: ", "missing field `history`"),
        (&second, "line 2: ", "missing field `history`"),
        (&truncated, "line 3: ", "EOF while parsing"),
        (r#"{"history": [1]}"#, "line 1: ", "an event object or an [action, observation] pair"),
    ];
    fails(Format::OpenHands, cases);
}

/// OpenHands SDK events: a damaged list or stream names the offset or line;
/// an event the importer cannot read is an error there; events none of which
/// is a tool call are an error saying what they were, never an empty run.
#[test]
fn openhands_sdk_errors_name_the_line_or_offset() {
    let f = Format::OpenHands;
    // Truncated JSON: the offset of a list, the line of JSON Lines.
    let list = read("openhands/sdk-events.json");
    let cut = &list[..list.len() / 2];
    fails_one(
        f,
        cut,
        &format!("offset {}: ", cut.len()),
        "EOF while parsing",
    );
    let lines = read("openhands/sdk-events.jsonl");
    let cut = &lines[..lines.len() - 40];
    fails_one(f, cut, "line 9: ", "EOF while parsing");
    fails_one(
        f,
        &lines.replacen("\"toolu_02\"", "\"toolu_02", 1),
        "line 6: ",
        "expected",
    );
    // Events the importer cannot read.
    fails_one(
        f,
        r#"[{"kind": "ActionEvent", "id": "a", "tool_call_id": "c"}]"#,
        "offset 56: ",
        "an ActionEvent needs a string `tool_name`",
    );
    fails_one(
        f,
        "{\"kind\": \"MessageEvent\", \"source\": \"user\"}\n{\"kind\": \"ObservationEvent\", \"tool_name\": \"terminal\", \"observation\": {}}\n",
        "line 2: ",
        "an ObservationEvent needs a string `tool_call_id`",
    );
    fails_one(
        f,
        r#"[{"kind": "ObservationEvent", "tool_call_id": "c", "observation": "done"}]"#,
        "offset ",
        "an ObservationEvent needs an object `observation`",
    );
    fails_one(
        f,
        "{\"kind\": \"MessageEvent\", \"source\": \"user\"}\n[{\"action\": \"run\"}, {\"observation\": \"run\"}]\n",
        "line 2: ",
        "expected an event object, not an [action, observation] pair",
    );
    fails_one(
        f,
        "{\"kind\": \"MessageEvent\", \"source\": \"user\"}\n7\n",
        "line 2: ",
        "expected an event object",
    );
    // Events, none of them a tool call.
    fails_one(
        f,
        r#"[{"kind": "SystemPromptEvent", "source": "agent"}, {"kind": "MessageEvent", "source": "user"}, {"kind": "MessageEvent", "source": "agent"}]"#,
        "offset 0: ",
        "no tool call among 3 OpenHands events (2 MessageEvent, 1 SystemPromptEvent): not an OpenHands trajectory, or its actions are missing",
    );
    fails_one(
        f,
        r#"[{"source": "agent", "note": "x"}]"#,
        "offset 0: ",
        "no tool call among 1 OpenHands event (1 object with no `action`, `observation` or `kind`)",
    );
    fails_one(
        f,
        r#"[{"id": 0, "source": "user", "action": "message", "args": {"content": "hi"}}]"#,
        "offset 0: ",
        "(1 `message` action)",
    );
    // Results whose actions are not in the file (a window of a conversation).
    let orphans = lines
        .lines()
        .filter(|l| l.contains("\"ObservationEvent\"") || l.contains("\"MessageEvent\""))
        .collect::<Vec<_>>()
        .join("\n");
    fails_one(
        f,
        &orphans,
        "line 1: ",
        "no tool call among 4 OpenHands events (3 ObservationEvent whose action is not in the file, 1 MessageEvent)",
    );
    // A `history` of nothing is an empty run, as before.
    assert_eq!(
        import(r#"{"instance_id": "a", "history": []}"#, Some(f)),
        Ok(Vec::new())
    );
}

/// SDK events are detected from the first object's `kind` (a list from any
/// event key); a `kind` that is no SDK event names no format; every other
/// format refuses them, and `--format openhands` reads them.
#[test]
fn openhands_sdk_detection_and_forcing() {
    let state = r#"{"id": "s", "timestamp": "t", "source": "environment", "key": "execution_status", "value": "running", "kind": "ConversationStateUpdateEvent"}"#;
    assert_eq!(detect(state), Some(Format::OpenHands));
    assert_eq!(detect(&format!("[{state}]")), Some(Format::OpenHands));
    assert_eq!(detect(r#"{"kind": "Widget", "name": "x"}"#), None);
    assert_eq!(detect(r#"[{"kind": "Widget"}]"#), Some(Format::OpenHands));
    for path in ["openhands/sdk-events.json", "openhands/sdk-events.jsonl"] {
        let text = read(path);
        assert_eq!(
            import(&text, Some(Format::OpenHands)),
            import(&text, None),
            "{path}"
        );
        for wanted in Format::ALL.into_iter().filter(|f| *f != Format::OpenHands) {
            fails_one(
                wanted,
                &text,
                "offset 0: ",
                &format!(
                    "is a openhands trace (from its first object's keys), not a {} one",
                    wanted.name()
                ),
            );
        }
    }
    // Before this importer read them, SDK event lines were a failmem trace
    // of nothing.
    let lines = read("openhands/sdk-events.jsonl");
    assert_eq!(outcomes(&import(&lines, None).unwrap()).len(), 3);
}

/// An ACP agent's tool call is one call however many updates it gets, the
/// last deciding its outcome; a condensation summary right after its
/// condensation counts once; `think` and `finish` results are not orphans.
#[test]
fn openhands_sdk_acp_calls_and_condensation_summaries() {
    let text = r#"[
{"kind": "ACPToolCallEvent", "source": "agent", "tool_call_id": "t1", "title": "Run `make`", "status": "in_progress", "tool_kind": "execute", "raw_input": {"command": "make"}},
{"kind": "ACPToolCallEvent", "source": "agent", "tool_call_id": "t2", "title": "Read Makefile", "status": "completed", "tool_kind": "read", "raw_input": {"path": "Makefile"}, "content": [{"type": "content", "content": {"type": "text", "text": "all:"}}]},
{"kind": "ACPToolCallEvent", "source": "agent", "tool_call_id": "t1", "title": "Run `make`", "status": "failed", "tool_kind": "execute", "raw_input": {"command": "make"}, "raw_output": "make: *** No targets.  Stop.", "is_error": true},
{"kind": "Condensation", "source": "environment", "forgotten_event_ids": [], "llm_response_id": "r"},
{"kind": "CondensationSummaryEvent", "source": "environment", "summary": "s"},
{"kind": "ObservationEvent", "source": "environment", "tool_name": "finish", "tool_call_id": "f", "action_id": "f", "observation": {"content": [], "kind": "FinishObservation"}}
]"#;
    let got = import(text, None).unwrap();
    assert_eq!(
        got,
        [
            tool(
                1,
                "execute",
                r#"{"command":"make"}"#,
                "make: *** No targets.  Stop.",
                None,
                Some(true)
            ),
            tool(
                2,
                "read",
                r#"{"path":"Makefile"}"#,
                "all:",
                None,
                Some(false)
            ),
            compaction(4),
        ]
    );
}

/// What the classifier makes of the outcomes the SDK importer gives a user
/// rejection and a hook's block.
#[test]
fn openhands_sdk_rejections_read_as_cancellations() {
    let list = read("openhands/sdk-events.json");
    let rejected = outcomes(&import(&list, None).unwrap())
        .into_iter()
        .find(|o| o.args.contains("rm -rf"))
        .unwrap();
    let category = failmem::classify(&rejected).category;
    assert_eq!(category, Some(failmem::Category::Cancelled));
    let custom = list.replace(
        r#""rejection_reason": "User rejected the action""#,
        r#""rejection_reason": "not the tests""#,
    );
    let rejected = outcomes(&import(&custom, None).unwrap())
        .into_iter()
        .find(|o| o.args.contains("rm -rf"))
        .unwrap();
    assert_eq!(rejected.output, "User rejected the action: not the tests");
    assert_eq!(
        failmem::classify(&rejected).category,
        Some(failmem::Category::Cancelled)
    );
    let hook = list.replace(
        r#""rejection_source": "user""#,
        r#""rejection_source": "hook""#,
    );
    let blocked = outcomes(&import(&hook, None).unwrap())
        .into_iter()
        .find(|o| o.args.contains("rm -rf"))
        .unwrap();
    assert_eq!(blocked.output, "Action rejected: User rejected the action");
}

#[test]
fn failmem_errors_name_the_line() {
    #[rustfmt::skip]
    let cases: &[(&str, &str, &str)] = &[
        ("{\"type\":\"turn\"}\nnot json\n", "line 2: ", "expected a JSON object"),
        (r#"{"type":"tool","exit_code":"1"}"#, "line 1: ", "`exit_code` must be"),
        (r#"{"type":"tool","is_error":1}"#, "line 1: ", "`is_error` must be"),
        (r#"{"type":"tool","tool":1}"#, "line 1: ", "`tool` must be a string"),
        (r#"{"type":"task","id":" "}"#, "line 1: ", "non-empty string `id`"),
        (r#"{"type":"task_end","status":"done"}"#, "line 1: ", "`task_end` line needs `status`"),
    ];
    fails(Format::Failmem, cases);
}

#[test]
fn text_of_no_known_format_is_read_as_a_failmem_trace() {
    for text in ["", "   ", "{\"foo\": 1}"] {
        assert_eq!(import(text, None), Ok(Vec::new()), "{text:?}");
    }
    for text in ["hello", "[1, 2]", "[{\"foo\": 1}]"] {
        let m = import(text, None).unwrap_err();
        assert!(
            m.starts_with("line 1: expected a JSON object"),
            "{text:?}: {m}"
        );
    }
}

/// Whether `text` is valid input: one JSON document, or JSON Lines.
fn valid(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text).is_ok()
        || text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok())
}

/// Every prefix of every fixture (each a truncation, many mid-string):
/// `detect` and `import` never panic, and errors name a line or offset.
#[test]
fn every_prefix_of_every_fixture_fails_cleanly() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/trajectories/fixtures");
    for format in Format::ALL {
        for entry in std::fs::read_dir(dir.join(format.name()))
            .unwrap()
            .flatten()
        {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            for at in (0..=text.len()).filter(|&at| text.is_char_boundary(at)) {
                let prefix = &text[..at];
                let _ = detect(prefix);
                match import(prefix, Some(format)) {
                    Err(m) => assert!(
                        m.starts_with("line ") || m.starts_with("offset "),
                        "{}: cut at {at}: {m}",
                        entry.path().display()
                    ),
                    Ok(_) => assert!(
                        valid(prefix),
                        "{}: cut at {at}: Ok on invalid input",
                        entry.path().display()
                    ),
                }
            }
        }
    }
}

/// A format given for text that is plainly another format's is an error at
/// offset 0 naming both; text whose format is not detected is read in the
/// given one.
#[test]
fn a_forced_format_reads_only_that_format() {
    let session = read("claude-code/session.jsonl");
    for wanted in Format::ALL.into_iter().filter(|f| *f != Format::ClaudeCode) {
        fails_one(
            wanted,
            &session,
            "offset 0: ",
            &format!(
                "is a claude-code trace (from its first object's keys), not a {} one",
                wanted.name()
            ),
        );
    }
    assert!(import(&session, Some(Format::ClaudeCode)).is_ok());
    // The first object has no key that names a format: detection reads it as
    // failmem's trace (no tool lines), the forced format as mini-swe-agent.
    let text = r#"{"note": "no format key first", "info": {}}"#;
    assert_eq!(detect(text), None);
    fails_one(
        Format::MiniSweAgent,
        text,
        "offset ",
        "missing field `messages`",
    );
    assert_eq!(import(text, None), Ok(Vec::new()));
}

/// SWE-agent actions that are not one of its tools are shell commands.
#[test]
fn swe_agent_shell_commands_are_bash_calls() {
    let text = r#"{"trajectory": [{"action": "python reproduce.py", "observation": "bash: line 1: python: command not found"}, {"action": "open src/a.py 10", "observation": "[File: src/a.py]"}]}"#;
    let lines = import(text, Some(Format::SweAgent)).unwrap();
    let tools: Vec<&str> = lines
        .iter()
        .filter_map(|l| match &l.event {
            TraceEvent::Tool(o) => Some(o.tool.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(tools, ["bash", "open"]);
}

/// A damaged file (a stray byte, a cut in the middle) is an error naming
/// where, and nothing of it is returned.
#[test]
fn damaged_trajectories_name_the_place() {
    let session = read("claude-code/session.jsonl");
    let mut damaged = session.clone();
    let at = damaged.find("\"tool_use\"").unwrap();
    damaged.replace_range(at..at + 1, "#");
    let m = import(&damaged, None).unwrap_err();
    assert!(m.starts_with("line "), "{m}");
    let swe = read("swe-agent/v1.traj");
    let cut = &swe[..swe.len() / 2];
    let m = import(cut, Some(Format::SweAgent)).unwrap_err();
    assert!(m.starts_with("offset "), "{m}");
}
