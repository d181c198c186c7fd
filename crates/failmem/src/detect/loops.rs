//! Call loops: the same call repeated with the same result, the same call
//! polled far longer than polling needs, and a cycle of up to
//! [`MAX_CYCLE_PERIOD`] calls repeated.
//!
//! A call is its tool plus its canonical arguments without bookkeeping
//! fields, hashed; an outcome is the call plus its output with volatile
//! tokens masked, hashed. The same call returning a new output each time is
//! polling, which is progress, until it goes on for many times the loop
//! thresholds. Cycles are found with one counter per period: `runs[p - 1]`
//! counts the trailing calls equal to the call `p` before them, so a cycle
//! of period `p` repeated `r` times is `runs[p - 1] >= (r - 1) * p`, and
//! each call costs one comparison per period.

use crate::limits::MAX_CYCLE_PERIOD;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// What the loop detector found after a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopFinding {
    /// The same call, with the same outcome, `n` times in a row.
    Same(u32),
    /// The same call `n` times in a row, its output changing.
    Polling(u32),
    /// A cycle of `period` calls repeated `repetitions` times in a row.
    Cycle {
        /// Calls in one round of the cycle (2 or more).
        period: usize,
        /// Complete rounds in a row.
        repetitions: u32,
    },
}

/// A coarse cycle: rounds that are the same calls in their coarse shape,
/// each with a fixed point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoarseCycle {
    /// Calls in one round (2 or more).
    pub period: usize,
    /// Complete rounds in a row.
    pub repetitions: u32,
}

/// Recent calls and the loop counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct CallHistory {
    /// The last call keys, oldest first; at most [`MAX_CYCLE_PERIOD`].
    pub calls: VecDeque<u64>,
    /// `runs[p - 1]`: trailing calls equal to the call `p` before them.
    #[serde(default)]
    pub runs: Vec<u32>,
    /// The last outcome key.
    #[serde(default)]
    pub last_outcome: u64,
    /// The same call with the same outcome, in a row.
    #[serde(default)]
    pub same: u32,
    /// The last calls' coarse keys, oldest first; at most
    /// [`MAX_CYCLE_PERIOD`].
    #[serde(default)]
    pub coarse: VecDeque<u64>,
    /// The last calls' outcome keys, aligned with `coarse`.
    #[serde(default)]
    pub outcomes: VecDeque<u64>,
    /// `coarse_runs[p - 1]`: trailing calls whose coarse key matches the
    /// call `p` before them (or is one of the mismatches a round may hold).
    #[serde(default)]
    pub coarse_runs: Vec<u32>,
    /// `coarse_fixed[p - 1]`: 1 + calls since the last fixed point of that
    /// run; 0 before the first.
    #[serde(default)]
    pub coarse_fixed: Vec<u32>,
    /// `coarse_mismatches[p - 1]`: calls since each mismatch of that run
    /// within the last `p` calls, newest last.
    #[serde(default)]
    pub coarse_mismatches: Vec<Vec<u32>>,
    /// Calls since the last call that only waited (0: the last call
    /// waited), or `None` before the first (then not written, so snapshots
    /// of sessions that never waited keep their shape).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_wait: Option<u32>,
}

/// The first period that counts as a long cycle.
pub const LONG_CYCLE: usize = 4;

impl CallHistory {
    /// Records a call and its outcome and reports the strongest repetition
    /// it completes, if any.
    pub fn push(&mut self, call: u64, outcome: u64, waiting: bool) -> Option<LoopFinding> {
        self.since_wait = if waiting {
            Some(0)
        } else {
            self.since_wait.map(|n| n.saturating_add(1))
        };
        self.runs.resize(MAX_CYCLE_PERIOD, 0);
        let n = self.calls.len();
        for p in 1..=MAX_CYCLE_PERIOD {
            let equal = p <= n && self.calls[n - p] == call;
            self.runs[p - 1] = if equal { self.runs[p - 1] + 1 } else { 0 };
        }
        let repeated_call = self.runs[0] > 0;
        self.same = if repeated_call && outcome == self.last_outcome {
            self.same + 1
        } else {
            1
        };
        self.last_outcome = outcome;
        self.calls.push_back(call);
        while self.calls.len() > MAX_CYCLE_PERIOD {
            self.calls.pop_front();
        }
        if repeated_call {
            return Some(if self.same >= 2 {
                LoopFinding::Same(self.same)
            } else {
                LoopFinding::Polling(self.runs[0] + 1)
            });
        }
        self.cycle()
    }

    /// Whether a call that only waited is among the last `2 * period` calls:
    /// a cycle of that period just found (two rounds or more) holds it.
    pub fn waited_within(&self, period: usize) -> bool {
        self.since_wait.is_some_and(|n| (n as usize) < 2 * period)
    }

    /// The cycle repeated at least twice that spans the most trailing calls
    /// (the shorter one on a tie). A period whose rounds are themselves a
    /// shorter cycle is not counted (A-B-A-B is period 2, not 4).
    fn cycle(&self) -> Option<LoopFinding> {
        (2..=MAX_CYCLE_PERIOD)
            .filter_map(|period| {
                let run = self.runs[period - 1] as usize;
                let repetitions = (run / period + 1) as u32;
                let shorter = (1..period)
                    .any(|q| period % q == 0 && self.runs[q - 1] as usize + q >= period + run);
                (repetitions >= 2 && !shorter).then_some((run + period, period, repetitions))
            })
            .min_by_key(|&(span, period, _)| (std::cmp::Reverse(span), period))
            .map(|(_, period, repetitions)| LoopFinding::Cycle {
                period,
                repetitions,
            })
    }

    /// Records a call's coarse key and outcome and reports the coarse cycle
    /// that spans the most trailing calls, if one is repeated at least
    /// twice. A round of `LONG_CYCLE` calls or more may hold up to
    /// `mismatches` calls whose coarse keys differ.
    pub fn push_coarse(
        &mut self,
        coarse: u64,
        outcome: u64,
        mismatches: u32,
    ) -> Option<CoarseCycle> {
        self.coarse_runs.resize(MAX_CYCLE_PERIOD, 0);
        self.coarse_fixed.resize(MAX_CYCLE_PERIOD, 0);
        self.coarse_mismatches
            .resize_with(MAX_CYCLE_PERIOD, Vec::new);
        let n = self.coarse.len();
        for p in 2..=MAX_CYCLE_PERIOD {
            let (run, fixed, misses) = (
                &mut self.coarse_runs[p - 1],
                &mut self.coarse_fixed[p - 1],
                &mut self.coarse_mismatches[p - 1],
            );
            if *fixed > 0 {
                *fixed = fixed.saturating_add(1);
            }
            for m in misses.iter_mut() {
                *m += 1;
            }
            misses.retain(|m| (*m as usize) < p);
            let allowed = if p >= LONG_CYCLE { mismatches } else { 0 };
            let matched = p <= n && self.coarse[n - p] == coarse;
            if matched {
                *run += 1;
                if self.outcomes[n - p] == outcome {
                    *fixed = 1;
                }
            } else if p <= n && *run > 0 && (misses.len() as u32) < allowed {
                *run += 1;
                misses.push(0);
            } else {
                (*run, *fixed) = (0, 0);
                misses.clear();
                continue;
            }
            // A whole round without a fixed point: the rounds are making
            // progress, start over.
            if *run as usize >= p && (*fixed == 0 || *fixed as usize > p) {
                (*run, *fixed) = (0, 0);
                misses.clear();
            }
        }
        self.coarse.push_back(coarse);
        self.outcomes.push_back(outcome);
        while self.coarse.len() > MAX_CYCLE_PERIOD {
            self.coarse.pop_front();
            self.outcomes.pop_front();
        }
        // Rounds of one call repeated are the loop detector's, not a cycle.
        let same_tail = self
            .coarse
            .iter()
            .rev()
            .take_while(|c| **c == coarse)
            .count();
        let one_call = |period: usize| same_tail >= period;
        (2..=MAX_CYCLE_PERIOD)
            .filter_map(|period| {
                let run = self.coarse_runs[period - 1] as usize;
                let repetitions = (run / period + 1) as u32;
                (repetitions >= 2 && !one_call(period)).then_some((
                    run + period,
                    period,
                    repetitions,
                ))
            })
            .min_by_key(|&(span, period, _)| (std::cmp::Reverse(span), period))
            .map(|(_, period, repetitions)| CoarseCycle {
                period,
                repetitions,
            })
    }

    /// Forgets every call.
    pub fn clear(&mut self) {
        *self = CallHistory::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(calls: &[u64]) -> Option<LoopFinding> {
        let mut h = CallHistory::default();
        calls.iter().map(|k| h.push(*k, *k, false)).last().flatten()
    }

    #[test]
    fn the_same_call_with_the_same_outcome_counts_up() {
        assert_eq!(run(&[1]), None);
        assert_eq!(run(&[1, 1, 1]), Some(LoopFinding::Same(3)));
        assert_eq!(run(&[2, 1, 1, 1, 1, 1]), Some(LoopFinding::Same(5)));
    }

    #[test]
    fn a_wait_is_remembered_for_the_span_of_a_cycle() {
        let mut h = CallHistory::default();
        assert!(!h.waited_within(2));
        h.push(1, 1, true);
        for k in 2..=4 {
            h.push(k, k, false);
        }
        // The wait was 3 calls ago: inside two rounds of 2, not of 1.
        assert!(h.waited_within(2));
        assert!(!h.waited_within(1));
        let json = serde_json::to_string(&h).unwrap();
        let back: CallHistory = serde_json::from_str(&json).unwrap();
        assert_eq!(back, h);
        assert!(
            !serde_json::to_string(&CallHistory::default())
                .unwrap()
                .contains("since-wait")
        );
    }

    #[test]
    fn a_new_output_each_time_is_polling() {
        let mut h = CallHistory::default();
        let found: Vec<_> = (0..4).map(|i| h.push(7, 100 + i, false)).collect();
        assert_eq!(found[3], Some(LoopFinding::Polling(4)));
        // The output settles: from then on it is the same call again.
        assert_eq!(h.push(7, 103, false), Some(LoopFinding::Same(2)));
    }

    #[test]
    fn cycles_of_any_period_up_to_the_limit() {
        assert_eq!(
            run(&[1, 2, 1, 2, 1, 2]),
            Some(LoopFinding::Cycle {
                period: 2,
                repetitions: 3
            })
        );
        let round: Vec<u64> = (10..24).collect();
        let calls: Vec<u64> = round.iter().chain(&round).chain(&round).copied().collect();
        assert_eq!(
            run(&calls),
            Some(LoopFinding::Cycle {
                period: 14,
                repetitions: 3
            })
        );
        assert_eq!(run(&[1, 2, 3, 4]), None);
    }

    #[test]
    fn a_cycle_of_cycles_is_the_shorter_cycle() {
        assert_eq!(
            run(&[1, 2, 1, 2, 1, 2, 1, 2]),
            Some(LoopFinding::Cycle {
                period: 2,
                repetitions: 4
            })
        );
    }

    fn coarse(calls: &[(u64, u64)], mismatches: u32) -> Option<CoarseCycle> {
        let mut h = CallHistory::default();
        calls
            .iter()
            .map(|(c, o)| h.push_coarse(*c, *o, mismatches))
            .last()
            .flatten()
    }

    #[test]
    fn coarse_rounds_count_only_with_a_fixed_point() {
        // Edit (new result each time), then the same test with the same result.
        let stuck = [(1, 10), (2, 20), (1, 11), (2, 20), (1, 12), (2, 20)];
        assert_eq!(
            coarse(&stuck, 0),
            Some(CoarseCycle {
                period: 2,
                repetitions: 3
            })
        );
        // The test's result changes every round: progress.
        let progress = [(1, 10), (2, 20), (1, 11), (2, 21), (1, 12), (2, 22)];
        assert_eq!(coarse(&progress, 0), None);
    }

    #[test]
    fn a_long_round_may_hold_a_mismatch() {
        // write-script, run, view, restore; the second round runs
        // something else (9 instead of 2) but views and restores the same.
        let calls = [
            (1, 10),
            (2, 20),
            (3, 30),
            (4, 40),
            (1, 11),
            (9, 90),
            (3, 30),
            (4, 40),
        ];
        assert_eq!(
            coarse(&calls, 1),
            Some(CoarseCycle {
                period: 4,
                repetitions: 2
            })
        );
        assert_eq!(coarse(&calls, 0), None);
    }

    #[test]
    fn the_history_is_bounded() {
        let mut h = CallHistory::default();
        for k in 0..1000 {
            h.push(k, k, false);
            h.push_coarse(k % 7, k, 3);
        }
        assert_eq!(h.calls.len(), MAX_CYCLE_PERIOD);
        assert_eq!(h.runs.len(), MAX_CYCLE_PERIOD);
        assert_eq!(h.coarse.len(), MAX_CYCLE_PERIOD);
        assert_eq!(h.outcomes.len(), MAX_CYCLE_PERIOD);
        assert_eq!(h.coarse_runs.len(), MAX_CYCLE_PERIOD);
        assert!(h.coarse_mismatches.iter().all(|m| m.len() <= 3));
    }
}
