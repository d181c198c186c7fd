//! The conformance runner (tests/README.md): runs every case of every vector
//! file against the component, checks the expectations and writes the
//! transcript.

use crate::canonical::{Canonical, ToCanonical, compare};
use crate::engine::{Failmem, GuestError, Session};
use crate::input::{config_from_json, default_config, outcome_from_json};
use crate::wit::RenderOptions;
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One vector file: its path relative to `tests/vectors/` (with `/`
/// separators) and its path on disk.
#[derive(Clone, Debug)]
pub struct VectorFile {
    /// The relative path, e.g. `detector/breaker.json`.
    pub name: String,
    /// The file on disk.
    pub path: PathBuf,
}

/// Every `*.json` file under `dir`, recursively, in sorted relative-path
/// order.
pub fn vector_files(dir: &Path) -> Result<Vec<VectorFile>> {
    fn walk(dir: &Path, prefix: &str, out: &mut Vec<VectorFile>) -> Result<()> {
        let entries = std::fs::read_dir(dir)
            .with_context(|| format!("reading directory {}", dir.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("reading directory {}", dir.display()))?;
            let path = entry.path();
            let file_name = entry.file_name().to_string_lossy().into_owned();
            let name = format!("{prefix}{file_name}");
            let file_type = entry
                .file_type()
                .with_context(|| format!("reading the type of {}", path.display()))?;
            if file_type.is_dir() {
                walk(&path, &format!("{name}/"), out)?;
            } else if file_name.ends_with(".json") {
                out.push(VectorFile { name, path });
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(dir, "", &mut files)?;
    files.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(files)
}

/// A case that did not conform.
#[derive(Clone, Debug)]
pub struct CaseFailure {
    /// `file#index`, as in the transcript.
    pub case: String,
    /// The case's description.
    pub description: String,
    /// The first difference: the step, the key path, expected vs actual.
    pub detail: String,
}

impl std::fmt::Display for CaseFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.case, self.description, self.detail)
    }
}

/// What a suite run found.
#[derive(Clone, Debug, Default)]
pub struct SuiteReport {
    /// Vector files run.
    pub files: usize,
    /// Cases run.
    pub cases: usize,
    /// Steps run.
    pub steps: usize,
    /// Every case that failed, in suite order.
    pub failures: Vec<CaseFailure>,
    /// The transcript: one canonical JSON line per step, each ending in
    /// `\n`.
    pub transcript: String,
}

/// Runs every case of `files` in order.
///
/// A trap fails its case and the component is loaded again from
/// `failmem.path()` for the next one, since a trapped instance may not be
/// entered again.
pub fn run_suite(failmem: &Failmem, files: &[VectorFile]) -> Result<SuiteReport> {
    let mut report = SuiteReport {
        files: files.len(),
        ..SuiteReport::default()
    };
    let mut failmem = failmem.clone();
    for file in files {
        let text = std::fs::read_to_string(&file.path)
            .with_context(|| format!("reading vector file {}", file.path.display()))?;
        let cases: Vec<Value> = serde_json::from_str(&text)
            .with_context(|| format!("{}: expected a JSON array of cases", file.name))?;
        for (index, case) in cases.iter().enumerate() {
            let name = format!("{}#{index}", file.name);
            let description = case
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("(no description)")
                .to_string();
            report.cases += 1;
            let mut runner = CaseRunner {
                failmem: &failmem,
                name: &name,
                transcript: &mut report.transcript,
                steps: 0,
                first_failure: None,
            };
            let outcome = runner.run(case);
            report.steps += runner.steps;
            let detail = match outcome {
                Ok(()) => runner.first_failure,
                Err(trap) => {
                    failmem = Failmem::load(failmem.path())
                        .context("loading the component again after a trap")?;
                    Some(format!("{trap:#}"))
                }
            };
            if let Some(detail) = detail {
                report.failures.push(CaseFailure {
                    case: name.clone(),
                    description,
                    detail,
                });
            }
        }
    }
    Ok(report)
}

/// Runs one case; `Err` is a trap or a malformed vector.
struct CaseRunner<'a> {
    failmem: &'a Failmem,
    name: &'a str,
    transcript: &'a mut String,
    steps: usize,
    first_failure: Option<String>,
}

/// A step's result: a value, or an error the guest returned.
type StepResult = Result<Canonical, GuestError>;

impl CaseRunner<'_> {
    fn record(&mut self, step: i64, op: &str, result: Canonical) {
        let line = Canonical::object([
            ("case", Canonical::Str(self.name.to_string())),
            ("step", Canonical::Int(step)),
            ("op", Canonical::Str(op.to_string())),
            ("result", result),
        ]);
        self.transcript.push_str(&line.to_string());
        self.transcript.push('\n');
    }

    fn fail(&mut self, detail: String) {
        if self.first_failure.is_none() {
            self.first_failure = Some(detail);
        }
    }

    fn run(&mut self, case: &Value) -> Result<()> {
        let config = match case.get("config") {
            Some(value) => config_from_json(value).context("reading the case's config")?,
            None => default_config(),
        };
        let create_error = case.get("expect-create-error");
        let created = Session::create(self.failmem, &config)?;
        let mut session = match (created, create_error) {
            (Err(e), Some(expected)) => {
                let result = if expected.as_str() == Some(e.case()) {
                    Canonical::Null
                } else {
                    self.fail(format!(
                        "create: expected error {expected}, actual {}",
                        e.to_canonical()
                    ));
                    e.to_canonical()
                };
                self.record(-1, "create", result);
                return Ok(());
            }
            (Ok(session), Some(expected)) => {
                self.record(-1, "create", Canonical::Null);
                self.fail(format!(
                    "create: expected error {expected}, actual a session"
                ));
                session.close()?;
                return Ok(());
            }
            (Err(e), None) => {
                self.record(-1, "create", e.to_canonical());
                self.fail(format!("create: unexpected error {}", e.to_canonical()));
                return Ok(());
            }
            (Ok(session), None) => session,
        };
        let steps = case
            .get("steps")
            .and_then(Value::as_array)
            .context("the case has no `steps` array")?;
        for (index, step) in steps.iter().enumerate() {
            let op = step
                .get("op")
                .and_then(Value::as_str)
                .with_context(|| format!("step {index} has no `op` string"))?;
            // A failed call must leave the session as it was: compare
            // snapshots around the steps that expect one.
            let before = match step.get("expect-error") {
                Some(_) => Some(session.snapshot()?),
                None => None,
            };
            let result = self
                .call(&mut session, op, step)
                .with_context(|| format!("step {index} ({op})"))?;
            self.steps += 1;
            let index = i64::try_from(index).unwrap_or(i64::MAX);
            self.record(index, op, result.to_canonical());
            if let Some(detail) = check(step, &result) {
                self.fail(format!("step {index} ({op}) {detail}"));
            }
            if let (Some(before), Err(_)) = (before, &result)
                && session.snapshot()? != before
            {
                self.fail(format!(
                    "step {index} ({op}) a failed call changed the session"
                ));
            }
        }
        session.close()
    }

    /// Makes the call `op` asks for. `snapshot` and a successful `restore`
    /// replace `session`.
    fn call(&self, session: &mut Session, op: &str, step: &Value) -> Result<StepResult> {
        let field = |key: &str| {
            step.get(key)
                .with_context(|| format!("`{op}` step needs `{key}`"))
        };
        Ok(match op {
            "observe" => {
                let outcome = outcome_from_json(field("outcome")?)?;
                Ok(session.observe(&outcome)?.to_canonical())
            }
            "turn" => Ok(session.turn()?.to_canonical()),
            "compacted" => Ok(session.compacted()?.to_canonical()),
            "resolve" => {
                let id = field("id")?;
                let id = id
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .with_context(|| format!("`id` must be a u32, not {id}"))?;
                session.resolve(id)?.map(|()| Canonical::Null)
            }
            "failures" => Ok(session.failures()?.to_canonical()),
            "patterns" => Ok(session.patterns()?.to_canonical()),
            "ledger" => Ok(session.ledger()?.to_canonical()),
            "stats" => Ok(session.stats()?.to_canonical()),
            "render" => {
                let template = field("template")?;
                let template = template
                    .as_str()
                    .with_context(|| format!("`template` must be a string, not {template}"))?;
                let token_budget = match step.get("token-budget") {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(
                        v.as_u64()
                            .and_then(|n| u32::try_from(n).ok())
                            .with_context(|| format!("`token-budget` must be a u32, not {v}"))?,
                    ),
                };
                let options = RenderOptions { token_budget };
                session
                    .render(template, options)?
                    .map(|text| text.to_canonical())
            }
            "snapshot" => {
                let snapshot = session.snapshot()?;
                match Session::restore(self.failmem, &snapshot)? {
                    Ok(restored) => {
                        std::mem::replace(session, restored).close()?;
                        Ok(Canonical::Str(snapshot))
                    }
                    Err(e) => Err(e),
                }
            }
            "restore" => {
                let snapshot = field("snapshot")?;
                let snapshot = snapshot
                    .as_str()
                    .with_context(|| format!("`snapshot` must be a string, not {snapshot}"))?;
                match Session::restore(self.failmem, snapshot)? {
                    Ok(restored) => {
                        std::mem::replace(session, restored).close()?;
                        Ok(Canonical::Null)
                    }
                    Err(e) => Err(e),
                }
            }
            "classify" => {
                let outcome = outcome_from_json(field("outcome")?)?;
                Ok(self.failmem.classify(&outcome)?.to_canonical())
            }
            other => bail!(
                "unknown op `{other}` (the ops are observe, turn, compacted, resolve, \
                 failures, patterns, ledger, stats, render, snapshot, restore, classify)"
            ),
        })
    }
}

/// Checks a step's expectation; `Some` describes the first difference.
fn check(step: &Value, result: &StepResult) -> Option<String> {
    let actual = result.to_canonical();
    match (step.get("expect-error"), result) {
        (Some(expected), Err(e)) if expected.as_str() == Some(e.case()) => {}
        (Some(expected), _) => return Some(format!("expected error {expected}, actual {actual}")),
        (None, Err(_)) => return Some(format!("unexpected error {actual}")),
        (None, Ok(_)) => {}
    }
    if let Some(expected) = step.get("expect")
        && let Some(d) = compare(expected, &actual, false)
    {
        return Some(d);
    }
    if let Some(expected) = step.get("expect-partial")
        && let Some(d) = compare(expected, &actual, true)
    {
        return Some(d);
    }
    None
}
