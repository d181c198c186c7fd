//! The conformance vectors, run against the native core (no wasm).
//!
//! This runner is the reference for the vector format (`tests/README.md`):
//! every host's runner must agree with it. With `FAILMEM_BLESS=1` it writes
//! the actual results into the vectors' `expect` fields.

use failmem::{Config, Error, Session, ToolOutcome};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    description: String,
    #[serde(default)]
    config: Option<Value>,
    #[serde(rename = "expect-create-error", default)]
    expect_create_error: Option<String>,
    #[serde(default)]
    steps: Vec<Step>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    op: String,
    #[serde(default)]
    outcome: Option<Value>,
    #[serde(default)]
    id: Option<u32>,
    #[serde(default)]
    template: Option<String>,
    #[serde(rename = "token-budget", default)]
    token_budget: Option<u32>,
    #[serde(default)]
    snapshot: Option<String>,
    #[serde(default)]
    expect: Option<Value>,
    #[serde(rename = "expect-partial", default)]
    expect_partial: Option<Value>,
    #[serde(rename = "expect-error", default)]
    expect_error: Option<String>,
}

fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("vectors")
}

fn vector_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "json") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&vectors_dir(), &mut files);
    files.sort();
    files
}

fn error_json(e: &Error) -> Value {
    let payload = match e {
        Error::UnknownFailure(id) => json!(id),
        Error::InvalidConfig(m)
        | Error::InvalidSnapshot(m)
        | Error::UnsupportedVersion(m)
        | Error::UnknownTemplate(m)
        | Error::InvalidTemplate(m)
        | Error::RenderFailed(m)
        | Error::TooLarge(m)
        | Error::Other(m) => json!(m),
    };
    json!({ "error": e.case(), "payload": payload })
}

fn outcome(v: &Value) -> ToolOutcome {
    // Absent means empty; any other non-string is its compact JSON text.
    let s = |k: &str| match v.get(k) {
        Some(Value::String(s)) => s.clone(),
        None => String::new(),
        Some(other) => other.to_string(),
    };
    ToolOutcome {
        tool: s("tool"),
        args: s("args"),
        output: s("output"),
        exit_code: v.get("exit-code").and_then(Value::as_i64).map(|c| c as i32),
        is_error: v.get("is-error").and_then(Value::as_bool),
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("core types serialize")
}

/// Runs one step; the result as canonical JSON, or the error.
fn run_step(session: &mut Session, step: &Step) -> Result<Value, Error> {
    let need = |what: &str| -> ! { panic!("step op {:?} needs {what}", step.op) };
    Ok(match step.op.as_str() {
        "observe" => to_json(&session.observe(&outcome(
            step.outcome.as_ref().unwrap_or_else(|| need("outcome")),
        ))),
        "classify" => to_json(&failmem::classify(&outcome(
            step.outcome.as_ref().unwrap_or_else(|| need("outcome")),
        ))),
        "turn" => json!(session.turn()),
        "compacted" => json!(session.compacted()),
        "resolve" => {
            session.resolve(step.id.unwrap_or_else(|| need("id")))?;
            Value::Null
        }
        "failures" => {
            let mut v = to_json(&session.failures());
            for r in v.as_array_mut().into_iter().flatten() {
                r.as_object_mut().map(|o| o.remove("target"));
            }
            v
        }
        "patterns" => to_json(&session.patterns()),
        "ledger" => {
            let (read, modified) = session.ledger();
            json!({ "files-read": read, "files-modified": modified })
        }
        "stats" => to_json(&session.stats()),
        "render" => json!(session.render(
            step.template.as_deref().unwrap_or_else(|| need("template")),
            step.token_budget
        )?),
        "snapshot" => {
            let text = session.snapshot();
            *session = Session::restore(&text)?;
            assert_eq!(
                session.snapshot(),
                text,
                "a restored session snapshots to the same bytes"
            );
            json!(text)
        }
        "restore" => {
            *session =
                Session::restore(step.snapshot.as_deref().unwrap_or_else(|| need("snapshot")))?;
            Value::Null
        }
        other => panic!("unknown op {other:?}"),
    })
}

/// The first key path where `actual` differs from `expected`; with
/// `partial`, keys absent from `expected` are not compared.
fn diff(expected: &Value, actual: &Value, partial: bool, path: &str) -> Option<String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                let p = format!("{path}.{k}");
                match a.get(k) {
                    Some(av) => {
                        if let Some(d) = diff(ev, av, partial, &p) {
                            return Some(d);
                        }
                    }
                    None => return Some(format!("{p}: missing in actual")),
                }
            }
            if !partial && let Some(k) = a.keys().find(|k| !e.contains_key(*k)) {
                return Some(format!("{path}.{k}: unexpected in actual"));
            }
            None
        }
        (Value::Array(e), Value::Array(a)) if !partial || e.len() == a.len() => {
            if e.len() != a.len() {
                return Some(format!(
                    "{path}: expected {} items, got {}",
                    e.len(),
                    a.len()
                ));
            }
            e.iter()
                .zip(a)
                .enumerate()
                .find_map(|(i, (ev, av))| diff(ev, av, partial, &format!("{path}[{i}]")))
        }
        _ if expected == actual => None,
        _ => Some(format!("{path}: expected {expected}, got {actual}")),
    }
}

#[test]
fn conformance_vectors_pass_natively() {
    let bless = std::env::var_os("FAILMEM_BLESS").is_some();
    let files = vector_files();
    assert!(
        !files.is_empty(),
        "no vectors under {}",
        vectors_dir().display()
    );
    let mut failures = Vec::new();
    let mut descriptions = BTreeSet::new();
    let mut total = 0;
    for file in &files {
        let rel = file
            .strip_prefix(vectors_dir())
            .unwrap()
            .display()
            .to_string();
        let text = std::fs::read_to_string(file).unwrap();
        let mut raw: Vec<Value> =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{rel}: not JSON: {e}"));
        let mut changed = false;
        for (index, raw_case) in raw.iter_mut().enumerate() {
            total += 1;
            let case: Case = serde_json::from_value(raw_case.clone())
                .unwrap_or_else(|e| panic!("{rel}#{index}: {e}"));
            let name = format!("{rel}#{index} {:?}", case.description);
            assert!(
                descriptions.insert(case.description.clone()),
                "{name}: description used twice"
            );
            let config: Config = serde_json::from_value(case.config.clone().unwrap_or(json!({})))
                .unwrap_or_else(|e| panic!("{name}: config: {e}"));
            let mut session = match (Session::new(config), &case.expect_create_error) {
                (Err(e), Some(want)) if e.case() == want => continue,
                (Err(e), _) => {
                    failures.push(format!("{name}: create failed: {e}"));
                    continue;
                }
                (Ok(_), Some(want)) => {
                    failures.push(format!("{name}: create succeeded, expected {want}"));
                    continue;
                }
                (Ok(s), None) => s,
            };
            for (i, step) in case.steps.iter().enumerate() {
                let at = format!("{name} step {i} ({})", step.op);
                let before = session.snapshot();
                match (run_step(&mut session, step), &step.expect_error) {
                    (Err(e), Some(want)) => {
                        if e.case() != want {
                            failures.push(format!(
                                "{at}: expected error {want}, got {}",
                                error_json(&e)
                            ));
                        }
                        if session.snapshot() != before {
                            failures.push(format!("{at}: a failed call changed the session"));
                        }
                    }
                    (Err(e), None) => failures.push(format!("{at}: failed: {}", error_json(&e))),
                    (Ok(v), Some(want)) => {
                        failures.push(format!("{at}: expected error {want}, got {v}"))
                    }
                    (Ok(actual), None) => {
                        if bless && step.expect_partial.is_none() {
                            let obj: &mut Map<String, Value> =
                                raw_case["steps"][i].as_object_mut().unwrap();
                            if obj.get("expect") != Some(&actual) {
                                obj.insert("expect".into(), actual.clone());
                                changed = true;
                            }
                            continue;
                        }
                        if let Some(e) = &step.expect
                            && let Some(d) = diff(e, &actual, false, "$")
                        {
                            failures.push(format!("{at}: {d}"));
                        }
                        if let Some(e) = &step.expect_partial
                            && let Some(d) = diff(e, &actual, true, "$")
                        {
                            failures.push(format!("{at}: {d}"));
                        }
                    }
                }
            }
        }
        if changed {
            std::fs::write(file, serde_json::to_string_pretty(&raw).unwrap() + "\n").unwrap();
            eprintln!("blessed {rel}");
        }
    }
    assert!(
        failures.is_empty(),
        "{} of the steps in {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{total} cases in {} files passed", files.len());
}
