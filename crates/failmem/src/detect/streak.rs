//! The mixed-failure streak: N consecutive failures of any kind give a
//! nudge; tripping again before any success gives a stop when the agent
//! repeated a failed call with the same result since the last success (the
//! outcome key: the call and its output, volatile tokens masked), and
//! another nudge when every failure is new (deliberate negative tests, a
//! series of new inputs each rejected differently).
//!
//! A run whose failures all come from one batch of calls (one model reply)
//! does not trip until a failure of a later batch joins it: the calls of a
//! batch were all made before any result came back, so the agent has not
//! yet gone on failing after seeing a failure (eight parallel edits of files
//! it has not read are one mistake, not eight).
//!
//! A run of permission failures only trips at half the threshold (rounded
//! up, at least 2): a call the harness, the user or the system refused
//! will be refused again however the agent varies it, and only the user
//! can lift the wall (approve, grant, or say how to go on without it).

use crate::category::Category;
use serde::{Deserialize, Serialize};

/// What a streak trip asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreakTrip {
    /// The first trip since the last success: the categories of the run,
    /// and its length.
    Nudge(Vec<Category>, u32),
    /// A trip after a nudge, with no success between, that repeats an
    /// error of the streak.
    Stop(Vec<Category>, u32),
}

/// The run of failures that trips the streak: `threshold`, or half of it
/// (rounded up, at least 2) when every failure of the run is a permission
/// failure.
pub fn trip_length(run: &[Category], threshold: u32) -> u32 {
    if !run.is_empty() && run.iter().all(|c| *c == Category::Permission) {
        threshold.div_ceil(2).max(2)
    } else {
        threshold
    }
}

/// Outcomes remembered since the last success.
const STREAK_MEMORY: usize = 64;

/// The streak's state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Streak {
    /// Categories of the current run of consecutive failures.
    pub run: Vec<Category>,
    /// Nudges given since the last success.
    pub nudges: u32,
    /// Outcome keys of the failures since the last success, oldest first;
    /// at most 64.
    #[serde(default)]
    pub seen: Vec<u64>,
    /// Whether a failure since the last trip repeated one of `seen`.
    #[serde(default)]
    pub repeated: bool,
    /// The batch the current run started in, if the host said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<u64>,
}

impl Streak {
    /// Records a counted failure of call batch `batch`; returns a trip when
    /// the run reaches `threshold` and holds a failure of a later batch than
    /// its first. The run starts over after each trip.
    pub fn failure(
        &mut self,
        category: Category,
        outcome: u64,
        threshold: u32,
        batch: Option<u64>,
    ) -> Option<StreakTrip> {
        if self.run.is_empty() {
            self.batch = batch;
        }
        self.run.push(category);
        if self.seen.contains(&outcome) {
            self.repeated = true;
        } else {
            if self.seen.len() >= STREAK_MEMORY {
                self.seen.remove(0);
            }
            self.seen.push(outcome);
        }
        let length = self.run.len() as u32;
        let one_batch = batch.is_some() && batch == self.batch;
        if length < trip_length(&self.run, threshold) || one_batch {
            return None;
        }
        let mut kinds: Vec<Category> = Vec::new();
        for c in self.run.drain(..) {
            if !kinds.contains(&c) {
                kinds.push(c);
            }
        }
        let repeated = std::mem::take(&mut self.repeated);
        let first = self.nudges == 0;
        self.nudges += 1;
        if first || !repeated {
            Some(StreakTrip::Nudge(kinds, length))
        } else {
            Some(StreakTrip::Stop(kinds, length))
        }
    }

    /// The categories of the current run, without repeats.
    pub fn kinds(&self) -> Vec<Category> {
        let mut kinds: Vec<Category> = Vec::new();
        for c in &self.run {
            if !kinds.contains(c) {
                kinds.push(*c);
            }
        }
        kinds
    }

    /// A success ends the streak and forgets the nudges and the errors.
    pub fn reset(&mut self) {
        self.run.clear();
        self.batch = None;
        self.nudges = 0;
        self.seen.clear();
        self.repeated = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Category::*;

    #[test]
    fn nudges_then_stops_when_an_error_comes_back() {
        let mut s = Streak::default();
        assert_eq!(s.failure(EditMismatch, 97, 3, None), None);
        assert_eq!(s.failure(NotFound, 98, 3, None), None);
        assert_eq!(
            s.failure(EditMismatch, 99, 3, None),
            Some(StreakTrip::Nudge(vec![EditMismatch, NotFound], 3))
        );
        assert_eq!(s.failure(Syntax, 100, 3, None), None);
        assert_eq!(s.failure(Syntax, 97, 3, None), None);
        assert_eq!(
            s.failure(Runtime, 101, 3, None),
            Some(StreakTrip::Stop(vec![Syntax, Runtime], 3))
        );
    }

    #[test]
    fn new_errors_after_a_nudge_nudge_again() {
        let mut s = Streak::default();
        let trips: Vec<_> = (1..=6)
            .filter_map(|o| s.failure(Runtime, o, 3, None))
            .collect();
        assert_eq!(
            trips,
            [
                StreakTrip::Nudge(vec![Runtime], 3),
                StreakTrip::Nudge(vec![Runtime], 3)
            ]
        );
    }

    #[test]
    fn a_permission_wall_trips_at_half_the_threshold() {
        let mut s = Streak::default();
        let trips: Vec<_> = (1..=8)
            .map(|o| s.failure(Permission, o, 8, None).is_some())
            .collect();
        assert_eq!(
            trips,
            [false, false, false, true, false, false, false, true]
        );
        let mut mixed = Streak::default();
        mixed.failure(NotFound, 1, 8, None);
        assert!((2..=7).all(|o| mixed.failure(Permission, o, 8, None).is_none()));
        assert!(mixed.failure(Permission, 8, 8, None).is_some());
        assert_eq!(trip_length(&[Permission], 3), 2);
        assert_eq!(trip_length(&[Permission], 2), 2);
        assert_eq!(trip_length(&[], 8), 8);
    }

    #[test]
    fn a_success_forgets_the_nudge() {
        let mut s = Streak::default();
        for _ in 0..3 {
            s.failure(Runtime, 97, 3, None);
        }
        s.reset();
        for _ in 0..2 {
            assert_eq!(s.failure(Runtime, 97, 3, None), None);
        }
        assert!(matches!(
            s.failure(Runtime, 97, 3, None),
            Some(StreakTrip::Nudge(..))
        ));
    }

    #[test]
    fn a_run_of_one_batch_waits_for_a_later_batch() {
        let mut s = Streak::default();
        for o in 1..=5 {
            assert_eq!(s.failure(Runtime, o, 3, Some(7)), None, "one reply's calls");
        }
        assert_eq!(
            s.failure(NotFound, 6, 3, Some(8)),
            Some(StreakTrip::Nudge(vec![Runtime, NotFound], 6))
        );
        assert_eq!(s.failure(Runtime, 7, 3, Some(8)), None);
        assert_eq!(s.failure(Runtime, 8, 3, Some(8)), None);
        assert!(
            s.failure(Runtime, 9, 3, Some(8)).is_none(),
            "a new run that started in this reply waits too"
        );
        assert!(s.failure(Runtime, 10, 3, Some(9)).is_some());
    }
}
