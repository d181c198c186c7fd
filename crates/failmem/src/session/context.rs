//! What a template sees. Every built-in and host template gets the same
//! variables; the budget decides how many of the droppable entries stay.
//!
//! | variable | content |
//! |---|---|
//! | `failures` | the failure records in view, oldest first (for `failure-context`, `nudge` and `compaction-ledger`: unresolved only) |
//! | `unresolved` | the unresolved ones among `failures` |
//! | `last` | the last step's failure, or none when the last step did not fail |
//! | `verdict` | the last verdict: `action`, `reason`, `can_continue` |
//! | `patterns` | the active patterns |
//! | `streak` | the current failure run: `count`, `kinds` |
//! | `files_read`, `files_modified` | the ledger, sorted |
//! | `turn`, `step`, `compactions` | counters |
//! | `available_tools` | the config's list, or empty |

use super::{FailureRecord, State};
use crate::detect::verdict::Pattern;
use minijinja::value::{Serde, Value};
use serde::Serialize;
use std::collections::HashSet;

/// A failure as templates see it.
#[derive(Serialize)]
pub struct FailureView<'a> {
    id: u32,
    tool: &'a str,
    category: &'static str,
    description: &'a str,
    suggestion: &'a str,
    args: &'a str,
    fingerprint: &'a str,
    step: u32,
    turn: u32,
    first_turn: u32,
    occurrences: u32,
    resolved: bool,
}

impl<'a> From<&'a FailureRecord> for FailureView<'a> {
    fn from(r: &'a FailureRecord) -> Self {
        FailureView {
            id: r.id,
            tool: &r.tool,
            category: r.category.name(),
            description: &r.description,
            suggestion: &r.suggestion,
            args: &r.args,
            fingerprint: &r.fingerprint,
            step: r.step,
            turn: r.turn,
            first_turn: r.first_turn,
            occurrences: r.occurrences,
            resolved: r.resolved,
        }
    }
}

/// The last step's failure.
#[derive(Serialize)]
pub struct LastView<'a> {
    step: u32,
    turn: u32,
    tool: &'a str,
    args: &'a str,
    category: &'static str,
    description: &'a str,
    suggestion: &'a str,
    terminal: bool,
    failure_id: Option<u32>,
    occurrences: u32,
}

/// The last verdict.
#[derive(Serialize)]
pub struct VerdictView<'a> {
    action: &'static str,
    reason: &'a str,
    can_continue: bool,
}

/// The current failure run.
#[derive(Serialize)]
pub struct StreakView {
    count: usize,
    kinds: Vec<&'static str>,
}

/// Everything a template sees.
pub struct Context<'a> {
    failures: Vec<FailureView<'a>>,
    unresolved: Vec<FailureView<'a>>,
    last: Option<LastView<'a>>,
    verdict: VerdictView<'a>,
    patterns: &'a [Pattern],
    streak: StreakView,
    files_read: Vec<String>,
    files_modified: Vec<String>,
    turn: u32,
    step: u32,
    compactions: u32,
    available_tools: &'a [String],
}

impl Context<'_> {
    /// The context as a template value holding only the `wanted` variables
    /// (`Template::undeclared_variables`): the rest can't change the output,
    /// and converting them to template values is most of a render's cost.
    pub fn to_value(&self, wanted: &HashSet<String>) -> Value {
        let mut vars: Vec<(&'static str, Value)> = Vec::with_capacity(wanted.len());
        macro_rules! vars {
            ($($field:ident),*) => {$(
                if wanted.contains(stringify!($field)) {
                    vars.push((stringify!($field), Value::from(Serde(&self.$field))));
                }
            )*};
        }
        vars!(
            failures,
            unresolved,
            last,
            verdict,
            patterns,
            streak,
            files_read,
            files_modified,
            turn,
            step,
            compactions,
            available_tools
        );
        Value::from_pairs(vars)
    }
}

/// Which entries a template drops, oldest first, to fit its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropPlan {
    /// All failure records.
    Failures,
    /// Unresolved failure records only.
    Unresolved,
    /// Files read, then unresolved failures, then files modified.
    Ledger,
}

impl DropPlan {
    /// How many entries can be dropped.
    pub fn droppable(self, state: &State) -> usize {
        let unresolved = state.log.records.iter().filter(|r| !r.resolved).count();
        match self {
            DropPlan::Failures => state.log.records.len(),
            DropPlan::Unresolved => unresolved,
            DropPlan::Ledger => {
                state.ledger.files_read.len() + unresolved + state.ledger.files_modified.len()
            }
        }
    }
}

/// Builds the context with the `drop` oldest droppable entries left out.
pub fn build<'a>(
    state: &'a State,
    available_tools: &'a [String],
    plan: DropPlan,
    drop: usize,
) -> Context<'a> {
    let records = &state.log.records;
    let unresolved_all: Vec<&FailureRecord> = records.iter().filter(|r| !r.resolved).collect();
    let (read_len, mod_len) = (
        state.ledger.files_read.len(),
        state.ledger.files_modified.len(),
    );
    let (failures, read_drop, mod_drop): (Vec<&FailureRecord>, usize, usize) = match plan {
        DropPlan::Failures => (records.iter().skip(drop).collect(), 0, 0),
        DropPlan::Unresolved => (unresolved_all.iter().skip(drop).copied().collect(), 0, 0),
        DropPlan::Ledger => {
            let read_drop = drop.min(read_len);
            let rest = drop - read_drop;
            let fail_drop = rest.min(unresolved_all.len());
            let mod_drop = (rest - fail_drop).min(mod_len);
            (
                unresolved_all.iter().skip(fail_drop).copied().collect(),
                read_drop,
                mod_drop,
            )
        }
    };
    let last = state.last.as_ref().and_then(|l| {
        let category = l.classification.category?;
        let occurrences = l
            .failure_id
            .and_then(|id| records.iter().find(|r| r.id == id))
            .map_or(1, |r| r.occurrences);
        Some(LastView {
            step: l.step,
            turn: l.turn,
            tool: &l.tool,
            args: &l.args,
            category: category.name(),
            description: &l.classification.description,
            suggestion: &l.classification.suggestion,
            terminal: l.classification.terminal,
            failure_id: l.failure_id,
            occurrences,
        })
    });
    let verdict = state.last.as_ref().map_or(
        VerdictView {
            action: "continue",
            reason: "",
            can_continue: true,
        },
        |l| VerdictView {
            action: l.verdict.action.name(),
            reason: &l.verdict.reason,
            can_continue: l.verdict.can_continue,
        },
    );
    let streak = &state.detector.streak;
    Context {
        unresolved: failures
            .iter()
            .filter(|r| !r.resolved)
            .map(|r| FailureView::from(*r))
            .collect(),
        failures: failures.iter().map(|r| FailureView::from(*r)).collect(),
        last,
        verdict,
        patterns: &state.detector.patterns,
        streak: StreakView {
            count: streak.run.len(),
            kinds: streak.kinds().iter().map(|c| c.name()).collect(),
        },
        files_read: state.ledger.files_read.sorted_newest(read_len - read_drop),
        files_modified: state
            .ledger
            .files_modified
            .sorted_newest(mod_len - mod_drop),
        turn: state.turn,
        step: state.step,
        compactions: state.compactions,
        available_tools,
    }
}
