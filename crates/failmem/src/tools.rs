//! What failmem knows about tools: their families, and what their arguments
//! say (the target, the paths read or modified, the shell command).

use serde_json::Value;
use std::borrow::Cow;

/// The kind of tool, decided from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Tools that edit or write files.
    Edit,
    /// Tools that run a shell command.
    Shell,
    /// Tools that read a file.
    Read,
    /// Tools that search or list files.
    Search,
    /// Tools that fetch from or search the web.
    Web,
    /// Anything else.
    Other,
}

const EDIT_TOOLS: &[&str] = &[
    "edit",
    "editfile",
    "multiedit",
    "strreplace",
    "strreplaceeditor",
    "strreplacebasededittool",
    "applypatch",
    "applydiff",
    "patch",
    "replace",
    "replaceinfile",
    "searchreplace",
    "write",
    "writefile",
    "writetofile",
    "createfile",
    "create",
    "insert",
    "inserttext",
    "notebookedit",
    "editnotebook",
    "searchandreplace",
    "modifyfile",
    "updatefile",
];
const SHELL_TOOLS: &[&str] = &[
    "bash",
    "shell",
    "sh",
    "zsh",
    "powershell",
    "cmd",
    "terminal",
    "exec",
    "execute",
    "executecommand",
    "runcommand",
    "runterminalcmd",
    "runterminalcommand",
    "runshellcommand",
    "shellcommand",
    "localshell",
    "containerexec",
    "command",
    "run",
    "executebash",
    "bashtool",
    "runinterminal",
    "executeshell",
    "execcommand",
    "runshell",
    "shellexec",
];
const READ_TOOLS: &[&str] = &[
    "read",
    "readfile",
    "view",
    "viewfile",
    "cat",
    "open",
    "openfile",
    "notebookread",
    "readmanyfiles",
    "readfiles",
    "getfile",
    "fileread",
    "goto",
    "scrollup",
    "scrolldown",
    "filemap",
];
const SEARCH_TOOLS: &[&str] = &[
    "grep",
    "glob",
    "search",
    "find",
    "findfiles",
    "filesearch",
    "grepsearch",
    "codebasesearch",
    "listdir",
    "listdirectory",
    "ls",
    "list",
    "listfiles",
    "ripgrep",
    "rg",
    "searchfiles",
    "searchcode",
    "searchdir",
    "searchfile",
    "findfile",
    "searchfilecontent",
];
const WEB_TOOLS: &[&str] = &[
    "webfetch",
    "fetch",
    "websearch",
    "browse",
    "browser",
    "httprequest",
    "http",
    "curl",
    "fetchurl",
    "urlfetch",
    "googlesearch",
];

/// Lowercases a tool name and drops everything but letters and digits, so
/// `str_replace_editor`, `StrReplaceEditor` and `str-replace-editor` agree.
fn normalize(tool: &str) -> String {
    tool.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// The family of a tool, from its name. Namespaced names such as
/// `mcp__fs__read_file` or `functions.bash` are judged by their last part.
pub fn family(tool: &str) -> Family {
    let last = tool
        .rsplit(['.', '/', ':'])
        .next()
        .unwrap_or(tool)
        .rsplit("__")
        .next()
        .unwrap_or(tool);
    let n = normalize(last);
    let lists: [(&[&str], Family); 5] = [
        (EDIT_TOOLS, Family::Edit),
        (SHELL_TOOLS, Family::Shell),
        (READ_TOOLS, Family::Read),
        (SEARCH_TOOLS, Family::Search),
        (WEB_TOOLS, Family::Web),
    ];
    lists
        .iter()
        .find(|(names, _)| names.contains(&n.as_str()))
        .map_or(Family::Other, |(_, f)| *f)
}

/// Top-level argument fields that narrate a call rather than make it: they
/// change on every call, so two calls that differ only in them are the same
/// call.
pub const BOOKKEEPING_FIELDS: &[&str] = &[
    "task_progress",
    "reason",
    "reasoning",
    "thought",
    "thoughts",
    "explanation",
    "rationale",
    "intent",
    "justification",
    "description",
    "message_to_user",
];

/// Fields of a shell tool's arguments that set how long a command may run
/// or how much of its output comes back, not what runs: two calls that
/// differ only in them are the same call.
pub const RUN_KNOBS: &[&str] = &[
    "timeout",
    "timeout_ms",
    "yield_time_ms",
    "max_output_tokens",
];

/// The fields [`Args::command`] reads a shell command from.
const COMMAND_FIELDS: &[&str] = &[
    "command",
    "cmd",
    "script",
    "commandLine",
    "command_line",
    "input",
];

/// What decides whether two calls are the same call: the arguments without
/// the `ignored` (bookkeeping) fields ([`Args::call_text`]); for a shell
/// tool, also without the [`RUN_KNOBS`], and with its command's display
/// wrappers removed ([`command_core`]), also when it is the script of an
/// argument vector (`["bash", "-lc", "…"]`). `npx vitest run 2>&1 | tail -30`
/// with a timeout and `npx vitest run` are the same call: an agent that
/// reruns a command in new wrappers and gets the same output is repeating
/// itself. A call with no wrappers and no knobs keeps the text it always had.
pub fn call_identity(tool: &str, args: &Args, ignored: &[&str]) -> String {
    if family(tool) != Family::Shell {
        return args.call_text(ignored);
    }
    match args {
        Args::Text(t) => Args::Text(command_core(t)).call_text(ignored),
        Args::Json(Value::String(t)) => {
            Args::Json(Value::String(command_core(t))).call_text(ignored)
        }
        Args::Json(Value::Object(map)) => {
            let mut map = map.clone();
            map.retain(|k, _| !RUN_KNOBS.contains(&k.as_str()));
            if let Some(key) = COMMAND_FIELDS.iter().find(|k| map.contains_key(**k)) {
                match map.get_mut(*key) {
                    Some(Value::String(command)) => *command = command_core(command),
                    Some(Value::Array(argv)) if hands_to_shell(argv) => {
                        if let Some(Value::String(script)) = argv.last_mut() {
                            *script = command_core(script);
                        }
                    }
                    _ => {}
                }
            }
            Args::Json(Value::Object(map)).call_text(ignored)
        }
        _ => args.call_text(ignored),
    }
}

/// Whether a command given as an argument vector hands its last word to a
/// shell as a script: exactly three words, the second `-c` or `-lc`
/// (`["bash", "-lc", "go test 2>&1"]`, Codex's `shell` tool).
fn hands_to_shell(argv: &[Value]) -> bool {
    matches!(
        argv,
        [Value::String(_), Value::String(flag), Value::String(_)] if flag == "-c" || flag == "-lc"
    )
}

/// A shell command without the wrappers that change how its output is
/// shown but not what runs: a ` 2>&1` anywhere, and, from its end until
/// none is left, a `| head …` or `| tail …` whose words are only options
/// and counts, a `|| true`, `|| :` or `; true`, and a `; echo …` that
/// prints the status (`$?`). A command with none of them comes back as it
/// was.
pub fn command_core(command: &str) -> String {
    let mut c = command.to_string();
    while let Some(i) = c
        .find("2>&1")
        .filter(|&i| c[..i].ends_with(char::is_whitespace))
    {
        let start = c[..i].trim_end().len();
        c.replace_range(start..i + 4, "");
    }
    loop {
        let before = c.len();
        c.truncate(c.trim_end().len());
        for tail in ["|| true", "|| :", "; true"] {
            if c.ends_with(tail) {
                c.truncate(c.len() - tail.len());
                c.truncate(c.trim_end().len());
            }
        }
        if let Some(i) = c.rfind('|')
            && i > 0
            && !c[..i].ends_with('|')
        {
            let mut words = c[i + 1..].split_whitespace();
            if matches!(words.next(), Some("head" | "tail"))
                && words.all(|w| w.starts_with('-') || w.bytes().all(|b| b.is_ascii_digit()))
            {
                c.truncate(c[..i].trim_end().len());
            }
        }
        if let Some(i) = c.rfind(';')
            && c[i + 1..].trim_start().starts_with("echo ")
            && c[i + 1..].contains("$?")
        {
            c.truncate(c[..i].trim_end().len());
        }
        if c.len() == before {
            break;
        }
    }
    if c.trim_end() == command.trim_end() {
        command.to_string()
    } else {
        c
    }
}

/// Parsed tool arguments: JSON when the text is JSON, else the text itself.
#[derive(Debug, Clone)]
pub enum Args {
    /// No arguments.
    None,
    /// A JSON value.
    Json(Value),
    /// Text that is not JSON.
    Text(String),
}

impl Args {
    /// Parses args text. Text beyond the parse limit is kept as text.
    pub fn parse(text: &str) -> Args {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Args::None;
        }
        if trimmed.len() <= crate::limits::MAX_ARGS_PARSE_BYTES
            && let Ok(v) = serde_json::from_str::<Value>(trimmed)
        {
            return match v {
                Value::Null => Args::None,
                Value::Object(ref m) if m.is_empty() => Args::None,
                v => Args::Json(v),
            };
        }
        Args::Text(trimmed.to_string())
    }

    /// The args as canonical text: JSON with sorted keys and no spaces, or
    /// the trimmed text. Equal calls give equal canonical text.
    pub fn canonical(&self) -> String {
        match self {
            Args::None => String::new(),
            Args::Json(v) => {
                let mut out = String::new();
                write_canonical(v, &mut out);
                out
            }
            Args::Text(t) => t.clone(),
        }
    }

    /// The canonical text of the arguments without the top-level fields in
    /// `ignored`: what decides whether two calls are the same call.
    pub fn call_text(&self, ignored: &[&str]) -> String {
        match self {
            Args::Json(Value::Object(map)) if ignored.iter().any(|k| map.contains_key(*k)) => {
                let kept: serde_json::Map<String, Value> = map
                    .iter()
                    .filter(|(k, _)| !ignored.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let mut out = String::new();
                write_canonical(&Value::Object(kept), &mut out);
                out
            }
            _ => self.canonical(),
        }
    }

    /// The coarse shape of the arguments without the top-level fields in
    /// `ignored`: what decides whether two calls are the same kind of call
    /// when their details differ (see [`coarse_text`]). Object keys are
    /// sorted, numbers are `#`, and every string is coarsened.
    pub fn coarse_call_text(&self, ignored: &[&str]) -> String {
        let mut out = String::new();
        match self {
            Args::None => {}
            Args::Text(t) => out.push_str(&coarse_text(t)),
            Args::Json(Value::Object(map)) => {
                let mut keys: Vec<&String> = map
                    .keys()
                    .filter(|k| !ignored.contains(&k.as_str()))
                    .collect();
                keys.sort();
                out.push('{');
                for k in keys {
                    out.push_str(k);
                    out.push(':');
                    write_coarse(&map[k], &mut out);
                    out.push(',');
                }
                out.push('}');
            }
            Args::Json(v) => write_coarse(v, &mut out),
        }
        out
    }

    /// A string field of an object argument, by the first of `keys` present.
    pub fn string_field(&self, keys: &[&str]) -> Option<&str> {
        let Args::Json(Value::Object(map)) = self else {
            return None;
        };
        keys.iter()
            .find_map(|k| map.get(*k).and_then(Value::as_str))
            .map(str::trim)
            .filter(|s| !s.is_empty())
    }

    /// The shell command, for shell tools: a `command`/`cmd`/`script` field
    /// (a string, or an argv array joined by spaces), or plain-text args.
    pub fn command(&self) -> Option<String> {
        match self {
            Args::Text(t) => Some(t.clone()),
            Args::Json(Value::String(s)) => Some(s.clone()),
            Args::Json(Value::Object(map)) => {
                for key in COMMAND_FIELDS {
                    match map.get(*key) {
                        Some(Value::String(s)) => return Some(s.clone()),
                        Some(Value::Array(parts)) => {
                            let words: Vec<&str> = parts.iter().filter_map(Value::as_str).collect();
                            if !words.is_empty() {
                                return Some(words.join(" "));
                            }
                        }
                        _ => {}
                    }
                }
                None
            }
            _ => None,
        }
    }
}

/// Writes the coarse shape of `v`: object keys sorted, numbers `#`,
/// strings through [`coarse_text`].
fn write_coarse(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for k in keys {
                out.push_str(k);
                out.push(':');
                write_coarse(&map[k], out);
                out.push(',');
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for item in items {
                write_coarse(item, out);
                out.push(',');
            }
            out.push(']');
        }
        Value::Number(_) => out.push('#'),
        Value::String(s) => {
            out.push('"');
            out.push_str(&coarse_text(s));
            out.push('"');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// A quoted word longer than this is free text.
const COARSE_QUOTED_BYTES: usize = 40;
/// Coarse text longer than this is free text, kept as its start.
const COARSE_MAX_BYTES: usize = 300;
/// Bytes kept of the start of long free text.
const COARSE_KEPT_BYTES: usize = 40;

/// The coarse shape of a text (a shell command, a path, a message): the
/// bodies of here-documents are `⟨text⟩`, and so is every quoted word
/// longer than 40 bytes or spanning lines; runs of digits are `#`
/// (line numbers, ranges, counters, `fix2.py`); whitespace is one space.
/// Paths and program names are kept. A result longer than 300 bytes is
/// free text, kept as `⟨text:` and its first 40 bytes `⟩`.
pub fn coarse_text(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() && out.len() <= COARSE_MAX_BYTES {
        let (word, after) = shell_word(rest);
        rest = after;
        if word.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        if let Some(op) = word.find("<<")
            && !word[op + 2..].starts_with('<')
        {
            // `<<EOF`, `<< 'EOF'`, `<<-"EOF"`: the body, up to the
            // delimiter line, is free text.
            let mut delimiter = word[op + 2..].trim_start_matches('-');
            let mut after = rest;
            if delimiter.is_empty() {
                (delimiter, after) = shell_word(rest);
            }
            let delimiter = delimiter.trim_matches(['\'', '"']);
            if is_delimiter(delimiter) {
                out.push_str(&word[..op]);
                out.push_str("<<⟨text⟩");
                rest = skip_heredoc(after, delimiter);
                continue;
            }
        }
        let quoted = word.contains(['\'', '"']);
        if (quoted && word.len() > COARSE_QUOTED_BYTES) || word.contains('\n') {
            out.push_str("⟨text⟩");
            continue;
        }
        let mut in_digits = false;
        for c in word.chars() {
            if c.is_ascii_digit() {
                if !in_digits {
                    out.push('#');
                }
                in_digits = true;
            } else {
                out.push(c);
                in_digits = false;
            }
        }
    }
    if out.len() > COARSE_MAX_BYTES {
        let kept = crate::text::cut_bytes(&out, COARSE_KEPT_BYTES).to_string();
        return format!("⟨text:{kept}⟩");
    }
    out
}

/// The first shell word of `text` (quotes kept, a backslash escaping the
/// next character) and the text after it; leading whitespace is skipped.
fn shell_word(text: &str) -> (&str, &str) {
    let text = text.trim_start();
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) if b == q => quote = None,
            Some(b'"') if b == b'\\' => i += 1,
            Some(_) => {}
            None if b.is_ascii_whitespace() => break,
            None if b == b'\'' || b == b'"' => quote = Some(b),
            None if b == b'\\' => i += 1,
            None => {}
        }
        i += 1;
    }
    let i = crate::text::floor_boundary(text, i.min(text.len()));
    (&text[..i], &text[i..])
}

/// Whether a word can end a here-document: letters, digits and `_`.
fn is_delimiter(word: &str) -> bool {
    !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// `rest` after a here-document's body: the rest of the operator's line
/// and the lines up to the delimiter line, inclusive, are dropped; all of
/// it when no line is the delimiter.
fn skip_heredoc<'t>(rest: &'t str, delimiter: &str) -> &'t str {
    let Some(newline) = rest.find('\n') else {
        return "";
    };
    let mut at = newline + 1;
    while at < rest.len() {
        let end = rest[at..].find('\n').map_or(rest.len(), |i| at + i);
        if rest[at..end].trim() == delimiter {
            return &rest[end..];
        }
        at = end + 1;
    }
    ""
}

/// Writes `v` as compact JSON with object keys sorted, whatever the map
/// implementation's order.
pub fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

const PATH_KEYS: &[&str] = &[
    "file_path",
    "path",
    "filePath",
    "file",
    "filename",
    "target_file",
    "targetFile",
    "notebook_path",
    "absolute_path",
    "relative_path",
    "target",
    "uri",
    "dir_path",
    "directory",
];

/// Paths named by `*** Add/Update/Delete File:` headers of an apply_patch body.
fn patch_paths(patch: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in patch.lines() {
        let line = line.trim();
        for prefix in [
            "*** Update File:",
            "*** Add File:",
            "*** Delete File:",
            "*** Move to:",
            "+++ b/",
        ] {
            if let Some(rest) = line.strip_prefix(prefix) {
                let p = rest.trim();
                if !p.is_empty() && p != "/dev/null" {
                    out.push(p.to_string());
                }
            }
        }
    }
    out
}

/// Normalizes a path for the ledger: trimmed, `./` dropped, bounded.
pub fn clean_path(p: &str) -> String {
    let p = p.trim();
    let p = p.strip_prefix("./").unwrap_or(p);
    crate::text::cut_bytes(p, crate::limits::MAX_PATH_BYTES).to_string()
}

/// The file paths a call's arguments name, in argument order.
pub fn paths(args: &Args) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(p) = args.string_field(PATH_KEYS) {
        out.push(clean_path(p));
    }
    if let Args::Json(Value::Object(map)) = args {
        for key in ["paths", "file_paths", "files"] {
            if let Some(Value::Array(items)) = map.get(key) {
                out.extend(items.iter().filter_map(Value::as_str).map(clean_path));
            }
        }
        for key in ["patch", "input", "diff"] {
            if let Some(Value::String(body)) = map.get(key) {
                out.extend(patch_paths(body).iter().map(|p| clean_path(p)));
            }
        }
    }
    if let Args::Text(t) = args {
        out.extend(patch_paths(t).iter().map(|p| clean_path(p)));
    }
    out.retain(|p| !p.is_empty());
    out
}

/// Whether a `str_replace_editor`-style call only reads (its `command` is `view`).
pub fn is_view_command(args: &Args) -> bool {
    matches!(args.string_field(&["command"]), Some("view"))
}

/// Whether a call only blocks on a process already running, waiting for it
/// to print more or to end: Codex's `write_stdin` with empty `chars` (it
/// waits up to `yield_time_ms`), Claude Code's `TaskOutput` with `block`, or
/// a lone `sleep 30`. Such a call asks for nothing new and spends time doing
/// so: the same result again means "still running", not "stuck". A read
/// that returns at once (`BashOutput`) is not a wait: repeating it gets
/// nothing new.
pub fn is_wait(tool: &str, args: &Args) -> bool {
    let name = normalize(tool.rsplit(['.', '/', ':']).next().unwrap_or(tool));
    let field = |key: &str| match args {
        Args::Json(Value::Object(map)) => map.get(key),
        _ => None,
    };
    match name.as_str() {
        "writestdin" => field("chars").is_none_or(|c| c.as_str().is_some_and(str::is_empty)),
        "taskoutput" => field("block").and_then(Value::as_bool) == Some(true),
        _ => {
            family(tool) == Family::Shell
                && args.command().is_some_and(|c| {
                    let mut words = core_command(&c).split_whitespace();
                    words.next() == Some("sleep")
                        && words
                            .next()
                            .is_some_and(|n| n.trim_end_matches(['s', 'm']).parse::<f64>().is_ok())
                        && words.next().is_none()
                })
        }
    }
}

/// Whether a shell call does nothing and asks for nothing: its script only
/// prints literal text (`echo`, `printf` with no `$`, backtick or
/// redirection), or is `true`, `:`, `exit 0` or comments. An agent that
/// has run out of things to do says so this way ("Standing by", `true`,
/// `# waiting for the next task`); such a call brings nothing new whatever
/// it prints. `family` is the tool's ([`family`]).
pub fn is_idle(family: Family, args: &Args) -> bool {
    if family != Family::Shell {
        return false;
    }
    let script: Option<Cow<'_, str>> = match args {
        Args::Json(Value::Object(map)) => {
            COMMAND_FIELDS.iter().find_map(|key| match map.get(*key) {
                Some(Value::String(s)) => Some(Cow::Borrowed(s.as_str())),
                Some(Value::Array(argv)) => hands_to_shell(argv)
                    .then(|| argv.last().and_then(Value::as_str).map(Cow::Borrowed))
                    .flatten(),
                _ => None,
            })
        }
        _ => args.command().map(Cow::Owned),
    };
    let Some(script) = script else {
        return false;
    };
    if script.contains(['$', '`', '>', '<', '|']) {
        return false;
    }
    script
        .split(['\n', ';'])
        .flat_map(|part| part.split("&&"))
        .map(str::trim)
        .filter(|part| !part.is_empty() && !part.starts_with('#'))
        .all(|part| {
            let mut words = part.split_whitespace();
            match words.next() {
                Some("echo" | "printf") => true,
                Some("true" | ":") => words.next().is_none(),
                Some("exit") => matches!(words.next(), None | Some("0")) && words.next().is_none(),
                _ => false,
            }
        })
}

/// Strips leading `cd DIR &&` and environment assignments from a shell
/// command, leaving the command that matters.
pub fn core_command(command: &str) -> &str {
    let mut rest = command.trim();
    loop {
        if let Some(after_cd) = rest.strip_prefix("cd ")
            && let Some(idx) = after_cd.find("&&")
        {
            rest = after_cd[idx + 2..].trim_start();
            continue;
        }
        let first = rest.split_whitespace().next().unwrap_or("");
        if first.contains('=') && !first.starts_with('=') && !first.starts_with('-') {
            rest = rest[first.len()..].trim_start();
            continue;
        }
        return rest;
    }
}

/// The program run by the last stage of a shell pipeline, without its
/// directory: `git`, `grep`, `cargo`…
pub fn last_program(command: &str) -> Option<String> {
    let last_stage = command.rsplit(['|', ';']).next()?.rsplit("&&").next()?;
    let core = core_command(last_stage);
    let word = core
        .split_whitespace()
        .find(|w| *w != "sudo" && *w != "env" && *w != "time")?;
    Some(word.rsplit('/').next().unwrap_or(word).to_string())
}

/// Programs that only pass on or trim what comes into them: as the last
/// stage of a pipeline, their exit status is theirs, not the program's
/// before them (bash without `pipefail`).
const FILTERS: &[&str] = &[
    "head", "tail", "less", "more", "tee", "cat", "sort", "uniq", "cut", "tr", "nl", "column",
    "fold", "fmt", "wc", "grep", "egrep", "fgrep", "sed", "awk",
];

/// Programs that read or list rather than run something: a pipeline of
/// them only shows text.
const READERS: &[&str] = &[
    "cat", "echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "find", "ls", "tree", "git",
    "head", "tail", "sed", "awk", "nl", "less", "more", "diff", "jq", "sort", "uniq", "wc", "cut",
    "tr", "xargs", "stat", "file", "du", "df", "env", "printenv", "history",
];

fn program_of(stage: &str) -> Option<&str> {
    let word = core_command(stage)
        .split_whitespace()
        .find(|w| *w != "sudo" && *w != "env" && *w != "time")?;
    Some(word.rsplit('/').next().unwrap_or(word))
}

/// Whether the exit status of a shell command says nothing about the
/// program that matters: its last command ends with `|| fallback`, or pipes
/// a program that runs something into a filter (`pytest | tail -20`,
/// `python x.py 2>&1 | head`), whose status is the filter's.
pub fn status_masked(command: &str) -> bool {
    let last = command
        .rsplit(['\n', ';'])
        .map(str::trim)
        .find(|c| !c.is_empty())
        .unwrap_or("");
    let last = last.rsplit("&&").next().unwrap_or(last);
    if last.contains("||") {
        return true;
    }
    let stages: Vec<&str> = last.split('|').collect();
    let Some((filter, before)) = stages.split_last() else {
        return false;
    };
    !before.is_empty()
        && program_of(filter).is_some_and(|p| FILTERS.contains(&p))
        && before
            .iter()
            .any(|s| program_of(s).is_some_and(|p| !READERS.contains(&p)))
}

/// What a call acts on, for auto-resolution: the first path, else the shell
/// command (whitespace squashed), else the canonical args.
pub fn target(family: Family, args: &Args) -> String {
    if let Some(p) = paths(args).into_iter().next() {
        return p;
    }
    if family == Family::Shell
        && let Some(c) = args.command()
    {
        return crate::text::squash_whitespace(core_command(&c));
    }
    args.canonical()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_from_names() {
        assert_eq!(family("str_replace_based_edit_tool"), Family::Edit);
        assert_eq!(family("Edit"), Family::Edit);
        assert_eq!(family("apply_patch"), Family::Edit);
        assert_eq!(family("bash"), Family::Shell);
        assert_eq!(family("run_terminal_cmd"), Family::Shell);
        assert_eq!(family("read_file"), Family::Read);
        assert_eq!(family("mcp__filesystem__read_file"), Family::Read);
        assert_eq!(family("Glob"), Family::Search);
        assert_eq!(family("web_fetch"), Family::Web);
        assert_eq!(family("todo_write"), Family::Other);
    }

    #[test]
    fn display_wrappers_leave_the_command() {
        for wrapped in [
            "npx vitest run",
            "npx vitest run  2>&1",
            "npx vitest run 2>&1 | tail -30",
            "npx vitest run 2>&1 | head -n 50 || true",
            "npx vitest run; echo \"EXIT: $?\"",
            "npx vitest run 2>&1 ; true",
        ] {
            assert_eq!(command_core(wrapped), "npx vitest run", "{wrapped}");
        }
        // Filters that choose what is shown, and other commands, stay.
        assert_eq!(
            command_core("pytest | tail -5 | grep FAIL"),
            "pytest | tail -5 | grep FAIL"
        );
        assert_eq!(
            command_core("make | head -20 file.txt"),
            "make | head -20 file.txt"
        );
        assert_eq!(command_core("make; echo done"), "make; echo done");
        assert_eq!(command_core("a || b"), "a || b");
        assert_eq!(command_core("  cargo  build "), "  cargo  build ");
        assert_eq!(command_core("echo x>&2 2>&1|tail -3"), "echo x>&2");
    }

    #[test]
    fn shell_calls_are_the_same_call_in_new_wrappers() {
        let id = |tool: &str, args: &str| call_identity(tool, &Args::parse(args), &["description"]);
        let plain = id(
            "Bash",
            r#"{"command":"python run.py --rules r.json","description":"Run"}"#,
        );
        assert_eq!(
            plain,
            id(
                "Bash",
                r#"{"command":"python run.py --rules r.json 2>&1 | head -50","description":"Again","timeout":30000}"#
            )
        );
        // A plain call keeps the text it always had.
        assert_eq!(plain, r#"{"command":"python run.py --rules r.json"}"#);
        assert_eq!(
            id("exec_command", r#"{"cmd":"make test"}"#),
            id(
                "exec_command",
                r#"{"cmd":"make test 2>&1; echo EXIT=$?","yield_time_ms":1000,"max_output_tokens":4000}"#
            )
        );
        assert_eq!(id("shell", "make 2>&1 | tail -n 20"), "make");
        // A command given as an argument vector for a shell: its script.
        assert_eq!(
            id(
                "shell",
                r#"{"command":["bash","-lc","go test ./... 2>&1 | tail -40"],"timeout_ms":120000}"#
            ),
            id("shell", r#"{"command":["bash","-lc","go test ./..."]}"#)
        );
        // Any other vector is compared as it is.
        assert_ne!(
            id("shell", r#"{"command":["go","test","2>&1"]}"#),
            id("shell", r#"{"command":["go","test"]}"#)
        );
        // Other fields still count: another working directory is another call.
        assert_ne!(
            id("exec_command", r#"{"cmd":"make","workdir":"/a"}"#),
            id("exec_command", r#"{"cmd":"make","workdir":"/b"}"#)
        );
        // Not a shell tool: a `timeout` field is an argument like any other.
        assert_ne!(
            id("web_fetch", r#"{"url":"https://x","timeout":5}"#),
            id("web_fetch", r#"{"url":"https://x","timeout":50}"#)
        );
    }

    #[test]
    fn canonical_args_sort_keys() {
        let a = Args::parse(r#"{"b":1,"a":{"d":2,"c":3}}"#);
        let b = Args::parse(r#"{ "a": {"c":3, "d":2}, "b": 1 }"#);
        assert_eq!(a.canonical(), b.canonical());
        assert_eq!(Args::parse("not json").canonical(), "not json");
        assert!(matches!(Args::parse("  "), Args::None));
        assert!(matches!(Args::parse("{}"), Args::None));
    }

    #[test]
    fn paths_from_fields_and_patches() {
        let a = Args::parse(r#"{"file_path":"./src/main.rs","old_string":"x"}"#);
        assert_eq!(paths(&a), ["src/main.rs"]);
        let p = Args::parse(
            r#"{"input":"*** Begin Patch\n*** Update File: src/a.rs\n@@\n*** Add File: b.txt\n*** End Patch"}"#,
        );
        assert_eq!(paths(&p), ["src/a.rs", "b.txt"]);
    }

    #[test]
    fn commands_and_programs() {
        let a = Args::parse(r#"{"command":"cd /repo && RUST_LOG=1 cargo test -q"}"#);
        let c = a.command().unwrap();
        assert_eq!(core_command(&c), "cargo test -q");
        assert_eq!(last_program(&c).as_deref(), Some("cargo"));
        assert_eq!(
            last_program("cat x | /usr/bin/grep foo").as_deref(),
            Some("grep")
        );
        assert!(status_masked("cd /t && python x.py 2>&1 | tail -20"));
        assert!(status_masked("echo 'q;;' | sqlfluff lint - | head -5"));
        assert!(status_masked("git checkout a.py 2>/dev/null || true"));
        assert!(!status_masked("cat log.txt | tail -20"));
        assert!(!status_masked("git log --oneline | head"));
        assert!(!status_masked("pytest -q"));
        assert!(!status_masked("pytest -q | tee out.txt && echo done"));
        let argv = Args::parse(r#"{"command":["bash","-lc","ls"]}"#);
        assert_eq!(argv.command().as_deref(), Some("bash -lc ls"));
        assert_eq!(target(Family::Shell, &a), "cargo test -q");
    }

    #[test]
    fn waits_are_calls_that_only_block_on_a_running_process() {
        let wait = |tool: &str, args: &str| is_wait(tool, &Args::parse(args));
        assert!(wait(
            "write_stdin",
            r#"{"session_id":7,"chars":"","yield_time_ms":30000}"#
        ));
        assert!(wait("write_stdin", r#"{"session_id":7}"#));
        assert!(!wait("write_stdin", r#"{"session_id":7,"chars":"y\n"}"#));
        assert!(wait(
            "TaskOutput",
            r#"{"task_id":"b1","block":true,"timeout":30000}"#
        ));
        assert!(!wait("TaskOutput", r#"{"task_id":"b1","block":false}"#));
        assert!(!wait("BashOutput", r#"{"bash_id":"b1"}"#));
        assert!(wait("bash", r#"{"command":"sleep 30"}"#));
        assert!(wait("shell", r#"{"cmd":"cd /repo && sleep 2.5s"}"#));
        assert!(!wait(
            "bash",
            r#"{"command":"sleep 30 && tail -5 build.log"}"#
        ));
        assert!(!wait("read_file", r#"{"path":"sleep"}"#));
    }

    #[test]
    fn idle_calls_only_print_literal_text_or_do_nothing() {
        let idle = |tool: &str, args: &str| is_idle(family(tool), &Args::parse(args));
        assert!(idle(
            "bash",
            r#"{"command":"echo \"Standing by for instructions\""}"#
        ));
        assert!(idle("bash", r#"{"command":"true"}"#));
        assert!(idle("bash", r#"{"command":":"}"#));
        assert!(idle("bash", r#"{"command":"exit 0"}"#));
        assert!(idle("bash", r##"{"command":"# Waiting for next task"}"##));
        assert!(idle("bash", r#"{"command":"echo Done && printf 'ok\\n'"}"#));
        assert!(idle(
            "shell",
            r#"{"command":["bash","-lc","echo ready; true"]}"#
        ));
        assert!(idle("exec_command", r#"{"cmd":"echo COMPLETE"}"#));
        // Printing state, writing a file or running anything else is not idle.
        assert!(!idle("bash", r#"{"command":"echo $PATH"}"#));
        assert!(!idle("bash", r#"{"command":"echo `date`"}"#));
        assert!(!idle("bash", r#"{"command":"echo hi > notes.txt"}"#));
        assert!(!idle("bash", r#"{"command":"echo hi | wc -c"}"#));
        assert!(!idle("bash", r#"{"command":"echo start && pytest -q"}"#));
        assert!(!idle("bash", r#"{"command":"exit 1"}"#));
        assert!(!idle("bash", r#"{"command":"pwd"}"#));
        assert!(!idle("bash", r#"{"command":"sleep 5"}"#));
        assert!(!idle("shell", r#"{"command":["bash","-lc","ls"]}"#));
        assert!(!idle(
            "Write",
            r#"{"file_path":"a.txt","content":"echo hi"}"#
        ));
    }
}
