//! The replay printer (host-examples/REPLAY.md): runs a parsed trace through
//! one session and prints what every host prints, human or `--json`.

use crate::canonical::{Canonical, ToCanonical, action_name, category_name};
use crate::engine::{Failmem, Session};
use crate::trace::{TraceEvent, TraceLine};
use crate::wit::{Action, Config, RenderOptions, StepReport};
use anyhow::{Context, Result};
use std::io::Write;

/// The replay `--json` object for the step of trace line `line`, keys in
/// the order REPLAY.md gives.
pub fn step_json(line: usize, tool: &str, report: &StepReport) -> Canonical {
    let c = &report.classification;
    let v = &report.verdict;
    let line = i64::try_from(line).unwrap_or(i64::MAX);
    Canonical::object([
        ("line", Canonical::Int(line)),
        ("step", report.step.to_canonical()),
        ("turn", report.turn.to_canonical()),
        ("tool", tool.to_canonical()),
        (
            "category",
            Canonical::Str(c.category.map_or("none", category_name).into()),
        ),
        ("verdict", v.action.to_canonical()),
        ("description", c.description.to_canonical()),
        ("fingerprint", c.fingerprint.to_canonical()),
        ("rule", c.rule.to_canonical()),
        ("tracked", c.tracked.to_canonical()),
        ("terminal", c.terminal.to_canonical()),
        ("failure-id", report.failure_id.to_canonical()),
        ("reason", v.reason.to_canonical()),
        ("can-continue", v.can_continue.to_canonical()),
        ("sentinel", v.sentinel.to_canonical()),
        ("events", report.events.to_canonical()),
    ])
}

/// The human step line: step, tool, category (`ok` for a success), verdict
/// and description, padded by characters, trailing spaces removed.
pub fn step_line(tool: &str, report: &StepReport) -> String {
    let step = report.step;
    let category = report.classification.category.map_or("ok", category_name);
    let verdict = action_name(report.verdict.action);
    let description = &report.classification.description;
    let line = format!("{step:>4}  {tool:<16} {category:<18} {verdict:<8}  {description}");
    line.trim_end().to_string()
}

/// A rendered block: `      ┌ name`, each line of `text` as `      │ line`
/// (`      │` for an empty one), then `      └`. Empty text prints nothing.
pub fn write_block(out: &mut impl Write, name: &str, text: &str) -> std::io::Result<()> {
    if text.is_empty() {
        return Ok(());
    }
    writeln!(out, "      ┌ {name}")?;
    for line in text.split('\n') {
        if line.is_empty() {
            writeln!(out, "      │")?;
        } else {
            writeln!(out, "      │ {line}")?;
        }
    }
    writeln!(out, "      └")
}

/// Replays `trace` through a new session created with `config`, writing
/// the human output, or one JSON object per tool line with `json`.
pub fn replay(
    failmem: &Failmem,
    config: &Config,
    trace: &[TraceLine],
    json: bool,
    out: &mut impl Write,
) -> Result<()> {
    replay_with_memory(failmem, config, trace, json, None, out)
}

/// [`replay`] with a project memory: a `task` line prints the retry brief
/// for the task (human output only), and a `task_end` line records the
/// session's attempt in the memory. Without a memory both are ignored.
pub fn replay_with_memory(
    failmem: &Failmem,
    config: &Config,
    trace: &[TraceLine],
    json: bool,
    memory: Option<&crate::storage::Storage>,
    out: &mut impl Write,
) -> Result<()> {
    let mut task: Option<(String, String)> = None;
    let session = Session::create(failmem, config)?.context("creating the replay session")?;
    let mut printer = Printer {
        session: &session,
        last_recent: String::new(),
    };
    for line in trace {
        let n = line.line;
        match &line.event {
            TraceEvent::Tool(outcome) => {
                let report = session
                    .observe(outcome)
                    .with_context(|| format!("line {n}: observing the tool outcome"))?;
                if json {
                    writeln!(out, "{}", step_json(n, &outcome.tool, &report))
                        .context("writing to stdout")?;
                } else {
                    printer
                        .tool(out, &outcome.tool, &report)
                        .with_context(|| format!("line {n}: printing the step"))?;
                }
            }
            TraceEvent::Turn => {
                let turn = session
                    .turn()
                    .with_context(|| format!("line {n}: starting a turn"))?;
                if !json {
                    writeln!(out, "── turn {turn} ──").context("writing to stdout")?;
                }
            }
            TraceEvent::Task { id, summary } => {
                let Some(storage) = memory else { continue };
                let store = storage
                    .load(failmem)
                    .with_context(|| format!("line {n}: loading the memory"))?;
                let query = crate::memory::Task {
                    id: id.clone(),
                    summary: summary.clone(),
                    paths: Vec::new(),
                    mentions: Vec::new(),
                    categories: Vec::new(),
                };
                let options = crate::memory::default_brief_options();
                let brief = store
                    .brief(&query, crate::storage::now_ms(), &options)?
                    .with_context(|| format!("line {n}: the retry brief"))?;
                if !json {
                    writeln!(out, "── task {id} ──").context("writing to stdout")?;
                    write_block(out, "previous-attempts", &brief).context("writing to stdout")?;
                }
                task = Some((id.clone(), summary.clone()));
            }
            TraceEvent::TaskEnd { succeeded, reason } => {
                let (Some(storage), Some((id, summary))) = (memory, task.take()) else {
                    continue;
                };
                let status = if *succeeded {
                    crate::memory::AttemptStatus::Succeeded
                } else {
                    crate::memory::AttemptStatus::Failed
                };
                let attempt = crate::memory::session_attempt(
                    &session,
                    &id,
                    &summary,
                    status,
                    reason.as_deref(),
                    crate::storage::now_ms(),
                )?;
                storage
                    .update(failmem, |store| {
                        store
                            .add_attempt(&attempt)?
                            .context("recording the attempt")
                    })
                    .with_context(|| {
                        format!(
                            "line {n}: recording the attempt in {}",
                            storage.file().display()
                        )
                    })?;
                if !json {
                    let word = if *succeeded { "succeeded" } else { "failed" };
                    writeln!(
                        out,
                        "── task {id} {word}: attempt recorded in {} ──",
                        storage.file().display()
                    )
                    .context("writing to stdout")?;
                }
            }
            TraceEvent::Compaction => {
                if json {
                    session
                        .compacted()
                        .with_context(|| format!("line {n}: marking the compaction"))?;
                } else {
                    printer
                        .compaction(out)
                        .with_context(|| format!("line {n}: printing the compaction"))?;
                }
            }
        }
    }
    if !json {
        let s = session.stats()?;
        writeln!(
            out,
            "summary: {} steps, {} turns, {} compactions, {} failures, {} tracked, \
             {} resolved, {} nudges, {} stops",
            s.steps, s.turns, s.compactions, s.failures, s.tracked, s.resolved, s.nudges, s.stops
        )
        .context("writing to stdout")?;
    }
    session.close()
}

/// The human printer's state: the last `recent-failures` text printed.
struct Printer<'a> {
    session: &'a Session,
    last_recent: String,
}

impl Printer<'_> {
    /// Renders `template` with the config's budget; a guest error is fatal.
    fn render(&self, template: &str) -> Result<String> {
        let options = RenderOptions { token_budget: None };
        let text = self.session.render(template, options)?;
        text.with_context(|| format!("rendering `{template}`"))
    }

    /// Prints `recent-failures` if its text differs from the last printed.
    fn recent(&mut self, out: &mut impl Write) -> Result<()> {
        let text = self.render("recent-failures")?;
        if !text.is_empty() && text != self.last_recent {
            write_block(out, "recent-failures", &text)?;
            self.last_recent = text;
        }
        Ok(())
    }

    fn tool(&mut self, out: &mut impl Write, tool: &str, report: &StepReport) -> Result<()> {
        writeln!(out, "{}", step_line(tool, report))?;
        if report.classification.category.is_some() {
            write_block(out, "recovery", &self.render("recovery")?)?;
        }
        let verdict = &report.verdict;
        let label = match verdict.action {
            Action::Continue => None,
            Action::Nudge => Some("NUDGE"),
            Action::Stop => Some("STOP"),
        };
        if let Some(label) = label {
            let resumable = if verdict.action == Action::Stop && verdict.can_continue {
                " (can continue)"
            } else {
                ""
            };
            writeln!(out, "      ↳ {label}: {}{resumable}", verdict.reason)?;
            write_block(out, "nudge", &self.render("nudge")?)?;
        }
        self.recent(out)
    }

    fn compaction(&mut self, out: &mut impl Write) -> Result<()> {
        let ledger = self.render("compaction-ledger")?;
        let n = self.session.compacted()?;
        writeln!(out, "── compaction {n} ──")?;
        write_block(out, "compaction-ledger", &ledger)?;
        self.recent(out)
    }
}
