//! Stuck-agent detection: the identical-error [`breaker`], the mixed-failure
//! [`streak`], call [`loops`] and cycles, stretches with no [`novelty`],
//! compaction storms, and failure [`patterns`]. Each detector is a small
//! state machine with bounded memory and constant work per step;
//! [`Detector::step`] runs them all and combines their findings into one
//! [`Verdict`].

pub mod breaker;
pub mod loops;
pub mod novelty;
pub mod patterns;
pub mod streak;
pub mod verdict;

use crate::category::Category;
use crate::config::Settings;
use breaker::Breaker;
use loops::{CallHistory, CoarseCycle, LONG_CYCLE, LoopFinding};
use novelty::Novelty;
use patterns::RecentFailure;
use serde::{Deserialize, Serialize};
use streak::{Streak, StreakTrip};
use verdict::{Action, Event, EventKind, Pattern, Verdict};

/// What the detectors need to know about one step.
pub struct StepFacts<'a> {
    /// The call's key (tool and canonical args without bookkeeping fields,
    /// hashed), or `None` for an exempt tool.
    pub call_key: Option<u64>,
    /// The call's coarse key (tool and the coarse shape of its args, see
    /// [`crate::tools::coarse_text`], hashed).
    pub coarse_key: u64,
    /// The outcome's key (the call and its masked output, hashed).
    pub outcome_key: u64,
    /// The batch (model reply) the call belongs to, hashed, if the host said.
    pub batch: Option<u64>,
    /// The failure's category, if the step failed.
    pub category: Option<Category>,
    /// Whether the failure counts as an agent mistake (tracked).
    pub counted: bool,
    /// Whether the step was a plain success (not an exploratory no-match).
    pub success: bool,
    /// The tool that was called.
    pub tool: &'a str,
    /// The failure record the step created or repeated, if tracked.
    pub failure_id: Option<u32>,
    /// The failure's fingerprint.
    pub fingerprint: &'a str,
    /// The description.
    pub description: &'a str,
    /// Whether the call only waits on a running process
    /// ([`crate::tools::is_wait`]).
    pub waiting: bool,
    /// Whether the call does nothing and asks for nothing
    /// ([`crate::tools::is_idle`]).
    pub idle: bool,
}

/// The detectors' combined state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Detector {
    /// The identical-error breaker.
    pub breaker: Breaker,
    /// The mixed-failure streak.
    pub streak: Streak,
    /// Recent calls.
    pub calls: CallHistory,
    /// The last failures, oldest first, for patterns.
    pub recent: Vec<RecentFailure>,
    /// The patterns active after the last step.
    pub patterns: Vec<Pattern>,
    /// Whether recent outcomes were new.
    #[serde(default)]
    pub novelty: Novelty,
    /// Compactions in a row with fewer than `storm-gap` calls between them.
    #[serde(default)]
    pub storm: u32,
    /// Calls since the last compaction.
    #[serde(default)]
    pub calls_since_compaction: u32,
    /// The storm length last flagged: each compaction that makes a storm
    /// longer is flagged once.
    #[serde(default)]
    pub storm_flagged: u32,
    /// The batch of the failure that began the breaker's run.
    #[serde(default)]
    pub breaker_batch: Option<u64>,
    /// The batch of the call the streak last nudged at.
    #[serde(default)]
    pub nudge_batch: Option<u64>,
    /// The cycle (period, rounds) the last call's nudge was about: a cycle
    /// is nudged once per round, not again on each call that extends it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycle_nudged: Option<(u32, u32)>,
}

/// A repeat the loop detector found that reached its nudge: a call, a poll
/// or a cycle (`period` calls long) repeated `n` times.
struct Repeat {
    kind: EventKind,
    what: String,
    n: u32,
    stop: bool,
    period: Option<u32>,
}

/// A candidate verdict and how it ranks.
struct Candidate {
    rank: u8,
    verdict: Verdict,
}

/// What one step's detectors found: the events pushed so far and the
/// candidate verdicts, of which the most severe wins.
struct Findings<'a> {
    events: &'a mut Vec<Event>,
    candidates: Vec<Candidate>,
}

impl Findings<'_> {
    /// Announces a nudge or a stop of one detector: the `nudge: reason` (or
    /// `stop: reason`) event of `kind`, and its candidate verdict at `rank`;
    /// a nudge lets the agent continue.
    fn flag(
        &mut self,
        kind: EventKind,
        action: Action,
        reason: String,
        rank: u8,
        kinds: &[Category],
        count: u32,
    ) {
        let event = Event::plain(kind, format!("{}: {reason}", action.name()));
        self.events.push(event);
        let can_continue = action != Action::Stop;
        self.candidates.push(Candidate {
            rank,
            verdict: Verdict::intervene(action, reason, can_continue, kinds, count),
        });
    }
}

impl Detector {
    /// Runs every detector for one step, pushing events, and returns the verdict.
    pub fn step(
        &mut self,
        s: &Settings,
        facts: &StepFacts<'_>,
        events: &mut Vec<Event>,
    ) -> Verdict {
        let mut findings = Findings {
            events,
            candidates: Vec::new(),
        };
        // The calls of one batch were all made before any result came back:
        // the breaker may nudge within a batch, the streak only once its run
        // reaches a later batch, and both stop only once the model has seen
        // the failures, in a later batch.
        let later = |first: Option<u64>| facts.batch.is_none() || facts.batch != first;
        if facts.counted
            && let Some(category) = facts.category
        {
            let tripped =
                self.breaker
                    .failure(facts.fingerprint, breaker::room(category, s), facts.batch);
            if self.breaker.count == 1 {
                self.breaker_batch = facts.batch;
            }
            let same_error =
                |n: u32| format!("the same error {n} times in a row: {}", facts.description);
            if tripped.is_none() && Some(self.breaker.count) == breaker::warning(category, s) {
                let n = self.breaker.count;
                let reason = same_error(n);
                findings.flag(
                    EventKind::BreakerTripped,
                    Action::Nudge,
                    reason,
                    6,
                    &[category],
                    n,
                );
            }
            if let Some(n) = tripped {
                let reason = same_error(n);
                findings
                    .events
                    .push(Event::plain(EventKind::BreakerTripped, reason.clone()));
                let (action, rank) = if later(self.breaker_batch) {
                    (Action::Stop, 1)
                } else {
                    (Action::Nudge, 6)
                };
                findings.candidates.push(Candidate {
                    rank,
                    verdict: Verdict::intervene(
                        action,
                        reason,
                        action == Action::Nudge,
                        &[category],
                        n,
                    ),
                });
            }
            // A reply with no tool call is the harness's format feedback: the
            // breaker counts a run of them, the streak of failed calls does not.
            let streak = (category != Category::NoToolCall)
                .then(|| {
                    self.streak.failure(
                        category,
                        facts.outcome_key,
                        s.streak_threshold,
                        facts.batch,
                    )
                })
                .flatten();
            if let Some(trip) = streak {
                let (action, rank, kinds, n, reason) = match trip {
                    StreakTrip::Stop(kinds, n) if later(self.nudge_batch) => {
                        let reason = format!(
                            "{n} more failures in a row after a nudge, a failed call repeated with the same result ({})",
                            names(&kinds)
                        );
                        (Action::Stop, 4, kinds, n, reason)
                    }
                    StreakTrip::Nudge(kinds, n) | StreakTrip::Stop(kinds, n) => {
                        self.nudge_batch = facts.batch;
                        let reason = format!("{n} failures in a row ({})", names(&kinds));
                        (Action::Nudge, 6, kinds, n, reason)
                    }
                };
                findings.events.push(Event::plain(
                    EventKind::StreakTripped,
                    format!("{}: {reason}", action.name()),
                ));
                findings.candidates.push(Candidate {
                    rank,
                    verdict: Verdict::intervene(action, reason, true, &kinds, n),
                });
            }
            self.recent.push(RecentFailure {
                tool: facts.tool.to_string(),
                category,
                fingerprint: facts.fingerprint.to_string(),
                description: facts.description.to_string(),
                resolved: false,
                failure_id: facts.failure_id,
            });
            let excess = self
                .recent
                .len()
                .saturating_sub(crate::limits::FAILURE_HISTORY);
            self.recent.drain(..excess);
        }
        if facts.success {
            self.breaker.reset();
            self.streak.reset();
        }
        self.calls_since_compaction = self.calls_since_compaction.saturating_add(1);
        if self.storm >= s.storm_nudge && self.storm > self.storm_flagged {
            self.storm_flagged = self.storm;
            let stop = self.storm >= s.storm_stop;
            let action = if stop { Action::Stop } else { Action::Nudge };
            let reason = format!(
                "{} compactions in a row with fewer than {} tool calls between them",
                self.storm, s.storm_gap
            );
            findings.flag(EventKind::NoProgress, action, reason, 3, &[], self.storm);
            if stop {
                self.storm = 0;
                self.storm_flagged = 0;
            }
        }
        if let Some(key) = facts.call_key {
            let kinds: Vec<Category> = facts
                .category
                .filter(|_| facts.counted)
                .into_iter()
                .collect();
            // A wait that comes back the same is polling a process that is
            // still running, and no cycle that holds a wait is a loop.
            let exact = match self.calls.push(key, facts.outcome_key, facts.waiting) {
                Some(LoopFinding::Same(n)) if facts.waiting => Some(LoopFinding::Polling(n)),
                Some(LoopFinding::Cycle { period, .. }) if self.calls.waited_within(period) => None,
                found => found,
            };
            let coarse = self.calls.push_coarse(
                facts.coarse_key,
                facts.outcome_key,
                s.coarse_cycle_mismatches,
            );
            let found = exact.and_then(|found| {
                let (kind, what, n, (nudge_at, stop_at), period) = match found {
                    LoopFinding::Same(n) => (
                        EventKind::CallLoop,
                        "the same call with the same result".to_string(),
                        n,
                        (s.loop_nudge_threshold, s.loop_stop_threshold),
                        None,
                    ),
                    LoopFinding::Polling(n) => (
                        EventKind::CallLoop,
                        "the same call (its output changing)".to_string(),
                        n,
                        (
                            s.loop_nudge_threshold.saturating_mul(s.polling_factor),
                            s.loop_stop_threshold.saturating_mul(s.polling_factor),
                        ),
                        None,
                    ),
                    LoopFinding::Cycle {
                        period,
                        repetitions,
                    } => (
                        EventKind::CallCycle,
                        format!("a cycle of {period} calls"),
                        repetitions,
                        cycle_thresholds(s, period),
                        Some(period as u32),
                    ),
                };
                (n >= nudge_at).then_some(Repeat {
                    kind,
                    what,
                    n,
                    stop: n >= stop_at,
                    period,
                })
            });
            // A coarse cycle speaks only when the exact calls did not.
            let found = found.or_else(|| {
                let CoarseCycle {
                    period,
                    repetitions,
                } = coarse.filter(|c| s.coarse_cycles && !self.calls.waited_within(c.period))?;
                let (nudge_at, stop_at) = cycle_thresholds(s, period);
                (repetitions >= nudge_at).then(|| Repeat {
                    kind: EventKind::CallCycle,
                    what: format!(
                        "a cycle of {period} calls (their arguments changing, a result unchanged)"
                    ),
                    n: repetitions,
                    stop: repetitions >= stop_at,
                    period: Some(period as u32),
                })
            });
            // A cycle already nudged at this round is not nudged again on
            // the calls that carry the same round on.
            let cycle = found
                .as_ref()
                .and_then(|r| r.period.map(|period| (period, r.n)));
            let again = cycle.is_some() && cycle == self.cycle_nudged;
            self.cycle_nudged = cycle;
            if let Some(Repeat {
                kind,
                what,
                n,
                stop,
                ..
            }) = found.filter(|r| r.stop || !again)
            {
                let action = if stop { Action::Stop } else { Action::Nudge };
                let reason = format!("{what} repeated {n} times in a row");
                let rank = match (stop, kind) {
                    (true, EventKind::CallLoop) => 2,
                    (true, _) => 3,
                    (false, _) => 5,
                };
                findings.flag(kind, action, reason, rank, &kinds, n);
            }
            self.no_progress(s, facts, &kinds, &mut findings);
        }
        // The most severe action wins; among equals, the lowest rank.
        findings
            .candidates
            .into_iter()
            .min_by_key(|c| (std::cmp::Reverse(c.verdict.action), c.rank))
            .map_or_else(Verdict::proceed, |c| c.verdict)
    }

    /// The no-progress detector on one call: scores what came back and
    /// nudges (or, when configured, stops) when the window holds too many
    /// points. A wait asks for nothing new: it neither brings progress nor
    /// lacks it, and is not scored.
    fn no_progress(
        &mut self,
        s: &Settings,
        facts: &StepFacts<'_>,
        kinds: &[Category],
        findings: &mut Findings<'_>,
    ) {
        if facts.waiting {
            return;
        }
        let stale = self.novelty.push(
            novelty::Outcome {
                result: facts.outcome_key,
                batch: facts.batch,
                idle: facts.idle,
                error: facts
                    .counted
                    .then(|| crate::classify::fnv1a(&[facts.fingerprint])),
            },
            s.novelty_window as usize,
        );
        if stale.points < s.novelty_recovered {
            self.novelty.progressed();
        }
        let window = s.novelty_window;
        let quiet = !self.novelty.nudged || self.novelty.since_flag >= window;
        let stop = s.novelty_stop > 0
            && self.novelty.nudged
            && self.novelty.since_flag >= window
            && stale.points >= s.novelty_stop;
        // A call that brought back something new is progress: no nudge on it.
        let nudge = quiet && stale.last > 0 && stale.points >= s.novelty_nudge;
        if nudge || stop {
            self.novelty.flagged();
            let action = if stop { Action::Stop } else { Action::Nudge };
            let reason = format!(
                "no progress: {} of the last {} calls brought back an error or a result already seen",
                stale.repeated, stale.window
            );
            let rank = if stop { 3 } else { 5 };
            findings.flag(
                EventKind::NoProgress,
                action,
                reason,
                rank,
                kinds,
                stale.repeated,
            );
        }
    }

    /// Notes a compaction: a storm grows when fewer than `storm-gap` calls
    /// came since the last one, and starts over otherwise.
    pub fn compacted(&mut self, s: &Settings) {
        self.storm = if self.calls_since_compaction < s.storm_gap {
            self.storm.saturating_add(1)
        } else {
            self.storm_flagged = 0;
            1
        };
        self.calls_since_compaction = 0;
    }

    /// Marks the remembered failures of resolved records as resolved.
    pub fn mark_resolved(&mut self, ids: &[u32]) {
        for f in &mut self.recent {
            if f.failure_id.is_some_and(|id| ids.contains(&id)) {
                f.resolved = true;
            }
        }
    }

    /// Re-detects patterns, pushing an event for each new one.
    pub fn refresh_patterns(&mut self, events: &mut Vec<Event>) {
        let now = patterns::detect(&self.recent);
        for p in &now {
            if !self
                .patterns
                .iter()
                .any(|old| old.kind == p.kind && old.subject == p.subject)
            {
                events.push(Event {
                    kind: EventKind::PatternDetected,
                    failure_id: None,
                    pattern: Some(p.clone()),
                    message: p.suggestion.clone(),
                });
            }
        }
        self.patterns = now;
    }
}

/// The rounds of a cycle of `period` calls that give a nudge and a stop:
/// the loop thresholds for cycles of 2 or 3 calls; `long-cycle-rounds` and
/// then `loop-nudge-threshold` (at least one round more) for longer ones,
/// whose every round is already several calls.
fn cycle_thresholds(s: &Settings, period: usize) -> (u32, u32) {
    if period < LONG_CYCLE {
        (s.loop_nudge_threshold, s.loop_stop_threshold)
    } else {
        (
            s.long_cycle_rounds,
            s.loop_nudge_threshold.max(s.long_cycle_rounds + 1),
        )
    }
}

fn names(kinds: &[Category]) -> String {
    kinds
        .iter()
        .map(|c| c.name())
        .collect::<Vec<_>>()
        .join(", ")
}
