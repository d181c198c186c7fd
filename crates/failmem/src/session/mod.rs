//! One agent session's failure memory: it observes every tool outcome,
//! tracks failures, keeps the ledger, runs the detectors and renders.

mod context;
mod guidance;
mod records;
mod snapshot;
mod templates;

pub use guidance::{Block, Compaction, Placement, Step};
pub use records::{Added, FailureLog, FailureRecord};
pub use templates::BUILTIN_TEMPLATES;

use crate::category::Category;
use crate::classify::{Classification, Classifier, Observation, ToolOutcome};
use crate::config::{Config, Settings};
use crate::detect::verdict::{Event, EventKind, Pattern, Verdict};
use crate::detect::{Detector, StepFacts};
use crate::error::Error;
use crate::ledger::Ledger;
use crate::limits;
use crate::tools::{self, Family};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The result of observing one tool outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct StepReport {
    /// This call's number in the session, from 1.
    pub step: u32,
    /// The turn, from 1.
    pub turn: u32,
    /// The classification.
    pub classification: Classification,
    /// The record created or repeated, if tracked.
    pub failure_id: Option<u32>,
    /// What to do next.
    pub verdict: Verdict,
    /// What happened, in order.
    pub events: Vec<Event>,
}

/// Counters over a whole session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Counters {
    /// Outcomes that were failures.
    pub failures: u32,
    /// Records resolved.
    pub resolved: u32,
    /// Records evicted.
    pub evicted: u32,
    /// Nudge verdicts.
    pub nudges: u32,
    /// Stop verdicts.
    pub stops: u32,
    /// Failures per category.
    pub by_category: BTreeMap<Category, u32>,
}

/// The session's statistics, as the WIT `stats` record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct Stats {
    /// Outcomes observed.
    pub steps: u32,
    /// The current turn.
    pub turns: u32,
    /// Compactions marked.
    pub compactions: u32,
    /// Outcomes that were failures.
    pub failures: u32,
    /// Records held now.
    pub tracked: u32,
    /// Records resolved.
    pub resolved: u32,
    /// Records evicted.
    pub evicted: u32,
    /// Nudge verdicts.
    pub nudges: u32,
    /// Stop verdicts.
    pub stops: u32,
    /// Failures per category, in category order.
    pub by_category: Vec<CategoryCount>,
}

/// How many failures of one category a session has seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CategoryCount {
    /// The category.
    pub category: Category,
    /// Failures of that category.
    pub count: u32,
}

/// The last step, for the `recovery` template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct LastStep {
    /// Its step number.
    pub step: u32,
    /// Its turn.
    pub turn: u32,
    /// The tool.
    pub tool: String,
    /// Canonical, redacted args, bounded.
    pub args: String,
    /// Its classification.
    pub classification: Classification,
    /// Its failure record, if tracked.
    pub failure_id: Option<u32>,
    /// Its verdict.
    pub verdict: Verdict,
}

/// Everything a session remembers; exactly what a snapshot holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[serde(deny_unknown_fields)]
pub struct State {
    /// Steps observed.
    pub step: u32,
    /// The current turn, from 1.
    pub turn: u32,
    /// Compactions marked.
    pub compactions: u32,
    /// Tracked failures.
    pub log: FailureLog,
    /// Files read and modified.
    pub ledger: Ledger,
    /// Detector state.
    pub detector: Detector,
    /// Counters.
    pub counters: Counters,
    /// The last step.
    pub last: Option<LastStep>,
    /// FNV-1a of the `recent-failures` text last shown by `step` or
    /// `compact`; 0 before any.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub shown_section: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Default for State {
    fn default() -> State {
        State {
            step: 0,
            turn: 1,
            compactions: 0,
            log: FailureLog {
                records: Vec::new(),
                next_id: 1,
            },
            ledger: Ledger::default(),
            detector: Detector::default(),
            counters: Counters::default(),
            last: None,
            shown_section: 0,
        }
    }
}

/// One agent session's failure memory.
pub struct Session {
    config: Config,
    settings: Settings,
    classifier: Classifier,
    state: State,
}

impl Session {
    /// Creates a session, validating every config field, rule and template.
    pub fn new(config: Config) -> Result<Session, Error> {
        Session::with_state(config, State::default())
    }

    fn with_state(config: Config, state: State) -> Result<Session, Error> {
        let settings = config.resolve()?;
        let classifier = Classifier::new(&settings.rules, settings.available_tools.as_deref())?;
        crate::render::check_templates(&settings.templates)?;
        Ok(Session {
            config,
            settings,
            classifier,
            state,
        })
    }

    /// The config the session was created with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The resolved settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The session's state.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// Observes one tool outcome and says what to do next. Never fails.
    pub fn observe(&mut self, outcome: &ToolOutcome) -> StepReport {
        let obs = Observation::new(outcome, self.settings.max_output_bytes);
        let classification = self.classifier.classify(&obs);
        let st = &mut self.state;
        st.step = st.step.saturating_add(1);
        let mut events = Vec::new();
        let canonical = obs.args.canonical();
        let args = crate::text::cut_bytes(&canonical, limits::MAX_RECORD_ARGS_BYTES).to_string();
        let target = tools::target(obs.family, &obs.args);
        let exploratory = classification.rule.starts_with("signal.search-")
            || classification.rule.starts_with("signal.answered-")
            || classification.rule == "signal.not-run";
        let success = classification.category.is_none() && !exploratory;
        let mut failure_id = None;

        if let Some(category) = classification.category {
            st.counters.failures = st.counters.failures.saturating_add(1);
            *st.counters.by_category.entry(category).or_default() += 1;
            if classification.tracked {
                let record = FailureRecord {
                    id: 0,
                    tool: obs.tool.clone(),
                    category,
                    description: classification.description.clone(),
                    suggestion: classification.suggestion.clone(),
                    args: args.clone(),
                    fingerprint: classification.fingerprint.clone(),
                    target: target.clone(),
                    step: st.step,
                    turn: st.turn,
                    first_turn: st.turn,
                    occurrences: 1,
                    resolved: false,
                };
                match st.log.add(record, self.settings.max_failures as usize) {
                    Added::New { id, evicted } => {
                        if let Some(old) = evicted {
                            st.counters.evicted = st.counters.evicted.saturating_add(1);
                            events.push(Event::about(
                                EventKind::FailureEvicted,
                                old,
                                format!("failure {old} evicted to make room"),
                            ));
                        }
                        events.push(Event::about(
                            EventKind::FailureRecorded,
                            id,
                            format!("[{category}] {}: {}", obs.tool, classification.description),
                        ));
                        failure_id = Some(id);
                    }
                    Added::Repeated { id, occurrences } => {
                        events.push(Event::about(
                            EventKind::FailureRepeated,
                            id,
                            format!("failure {id} happened again ({occurrences} times)"),
                        ));
                        failure_id = Some(id);
                    }
                }
            }
        }

        if success {
            let ids = st.log.resolve_matching(&obs.tool, &target);
            for id in &ids {
                events.push(Event::about(
                    EventKind::FailureResolved,
                    *id,
                    format!("failure {id} resolved by a later success"),
                ));
            }
            st.counters.resolved = st.counters.resolved.saturating_add(ids.len() as u32);
            st.detector.mark_resolved(&ids);
            let paths = tools::paths(&obs.args);
            let list = match obs.family {
                Family::Read | Family::Search => Some(&mut st.ledger.files_read),
                Family::Edit if tools::is_view_command(&obs.args) => {
                    Some(&mut st.ledger.files_read)
                }
                Family::Edit => Some(&mut st.ledger.files_modified),
                _ => None,
            };
            if let Some(list) = list {
                for p in &paths {
                    list.touch(p);
                }
            }
        }

        let exempt = self.settings.exempt_tools.iter().any(|t| t == &obs.tool);
        let bookkeeping = self.settings.bookkeeping();
        let call = tools::call_identity(&obs.tool, &obs.args, &bookkeeping);
        let call_key = crate::classify::fnv1a(&[&obs.tool, &call]);
        let coarse = obs.args.coarse_call_text(&bookkeeping);
        let facts = StepFacts {
            call_key: (!exempt && !obs.tool.is_empty()).then_some(call_key),
            coarse_key: crate::classify::fnv1a(&[&obs.tool, &coarse]),
            batch: outcome
                .batch
                .as_deref()
                .filter(|b| !b.is_empty())
                .map(|b| crate::classify::fnv1a(&[b])),
            outcome_key: outcome_key(call_key, &obs.output),
            category: classification.category,
            counted: classification.tracked,
            success,
            tool: &obs.tool,
            failure_id,
            fingerprint: &classification.fingerprint,
            description: &classification.description,
            waiting: tools::is_wait(&obs.tool, &obs.args),
            idle: tools::is_idle(obs.family, &obs.args),
        };
        let verdict = st.detector.step(&self.settings, &facts, &mut events);
        st.detector.refresh_patterns(&mut events);
        match verdict.action {
            crate::detect::verdict::Action::Nudge => {
                st.counters.nudges = st.counters.nudges.saturating_add(1)
            }
            crate::detect::verdict::Action::Stop => {
                st.counters.stops = st.counters.stops.saturating_add(1)
            }
            crate::detect::verdict::Action::Continue => {}
        }
        st.last = Some(LastStep {
            step: st.step,
            turn: st.turn,
            tool: obs.tool.clone(),
            args,
            classification: classification.clone(),
            failure_id,
            verdict: verdict.clone(),
        });
        StepReport {
            step: st.step,
            turn: st.turn,
            classification,
            failure_id,
            verdict,
            events,
        }
    }

    /// Marks a new turn; returns its number.
    pub fn turn(&mut self) -> u32 {
        self.state.turn = self.state.turn.saturating_add(1);
        self.state.turn
    }

    /// Marks a compaction; returns how many there have been.
    pub fn compacted(&mut self) -> u32 {
        self.state.detector.compacted(&self.settings);
        self.state.compactions = self.state.compactions.saturating_add(1);
        self.state.compactions
    }

    /// Marks a tracked failure resolved. Resolving twice is not an error.
    pub fn resolve(&mut self, id: u32) -> Result<(), Error> {
        let record = self
            .state
            .log
            .get_mut(id)
            .ok_or(Error::UnknownFailure(id))?;
        if !record.resolved {
            record.resolved = true;
            self.state.counters.resolved = self.state.counters.resolved.saturating_add(1);
            self.state.detector.mark_resolved(&[id]);
            self.state.detector.refresh_patterns(&mut Vec::new());
        }
        Ok(())
    }

    /// The tracked failures, oldest first.
    pub fn failures(&self) -> &[FailureRecord] {
        &self.state.log.records
    }

    /// The patterns active now.
    pub fn patterns(&self) -> &[Pattern] {
        &self.state.detector.patterns
    }

    /// The ledger, each list sorted.
    pub fn ledger(&self) -> (Vec<String>, Vec<String>) {
        let l = &self.state.ledger;
        (
            l.files_read.sorted_newest(usize::MAX),
            l.files_modified.sorted_newest(usize::MAX),
        )
    }

    /// Counters over the session.
    pub fn stats(&self) -> Stats {
        let st = &self.state;
        Stats {
            steps: st.step,
            turns: st.turn,
            compactions: st.compactions,
            failures: st.counters.failures,
            tracked: st.log.records.len() as u32,
            resolved: st.counters.resolved,
            evicted: st.counters.evicted,
            nudges: st.counters.nudges,
            stops: st.counters.stops,
            by_category: Category::ALL
                .iter()
                .filter_map(|c| {
                    st.counters.by_category.get(c).map(|n| CategoryCount {
                        category: *c,
                        count: *n,
                    })
                })
                .filter(|c| c.count > 0)
                .collect(),
        }
    }

    /// Closes a task: turns the session's tracked failures, ledger and
    /// verdicts into an [`Attempt`](crate::memory::Attempt) for the project
    /// memory. The approaches are the distinct failing calls (tool and
    /// target); the failure reason is `reason`, else the latest unresolved
    /// failure; the error output lists the unresolved failures; the lesson
    /// is left empty for the host to state.
    pub fn to_attempt(
        &self,
        task_id: &str,
        summary: &str,
        status: crate::memory::AttemptStatus,
        reason: Option<&str>,
        now: u64,
    ) -> crate::memory::Attempt {
        let records = &self.state.log.records;
        let mut approaches: Vec<String> = Vec::new();
        let mut by_first_step: Vec<&FailureRecord> = records.iter().collect();
        by_first_step.sort_by_key(|r| (r.first_turn, r.id));
        for r in &by_first_step {
            let approach = if r.target.is_empty() {
                r.tool.clone()
            } else {
                format!("{} {}", r.tool, r.target)
            };
            if !approaches.contains(&approach) {
                approaches.push(approach);
            }
        }
        let unresolved: Vec<&&FailureRecord> =
            by_first_step.iter().filter(|r| !r.resolved).collect();
        let failure_reason = match reason {
            Some(r) if !r.trim().is_empty() => r.to_string(),
            _ if status == crate::memory::AttemptStatus::Succeeded => String::new(),
            _ => unresolved
                .last()
                .map(|r| r.description.clone())
                .unwrap_or_default(),
        };
        let error_output = unresolved
            .iter()
            .map(|r| format!("[{}] {}: {}", r.category, r.tool, r.description))
            .collect::<Vec<_>>()
            .join("\n");
        crate::memory::Attempt {
            task_id: task_id.to_string(),
            summary: summary.to_string(),
            approaches,
            failure_reason,
            error_output,
            files_touched: self.state.ledger.files_modified.sorted_newest(usize::MAX),
            status,
            at: now,
            categories: records.iter().map(|r| r.category).collect(),
            fingerprints: records.iter().map(|r| r.fingerprint.clone()).collect(),
            // The host or the agent states a lesson; a learned one is built
            // from the approach and the failure reason.
            lesson: String::new(),
        }
        .normalized()
    }

    /// Renders a template by name within the token budget.
    pub fn render(&self, name: &str, token_budget: Option<u32>) -> Result<String, Error> {
        let budget = match token_budget {
            None => self.settings.token_budget,
            Some(b) if (limits::MIN_TOKEN_BUDGET..=limits::MAX_TOKEN_BUDGET).contains(&b) => b,
            Some(b) => {
                return Err(Error::InvalidConfig(format!(
                    "token-budget is {b}; it must be from {} to {}",
                    limits::MIN_TOKEN_BUDGET,
                    limits::MAX_TOKEN_BUDGET
                )));
            }
        };
        templates::render(&self.state, &self.settings, name, budget as usize)
    }
}

/// An outcome's key: the call and the head and tail of its output with
/// volatile tokens (times, ids, addresses, durations) masked, so a repeated
/// result is the same key and a changed one a new key.
fn outcome_key(call_key: u64, output: &str) -> u64 {
    let head = crate::text::cut_bytes(output, limits::MAX_FINGERPRINT_SOURCE_BYTES);
    let tail_start = crate::text::ceil_boundary(
        output,
        output
            .len()
            .saturating_sub(limits::MAX_FINGERPRINT_SOURCE_BYTES)
            .max(head.len()),
    );
    let (head, tail) = (
        crate::classify::mask_volatile(head),
        crate::classify::mask_volatile(&output[tail_start..]),
    );
    crate::classify::fnv1a(&[&call_key.to_string(), &head, &tail])
}

#[cfg(test)]
mod tests;
