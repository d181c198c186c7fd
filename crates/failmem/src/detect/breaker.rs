//! The identical-error circuit breaker: N consecutive failures with the same
//! fingerprint trip it. A success or a different error resets it. The calls
//! of one batch were made before any result came back, so identical errors
//! within a batch count once: the agent has not ignored them yet.

use crate::category::Category;
use crate::config::Settings;
use serde::{Deserialize, Serialize};

/// How long a run of identical failures of `category` grows before the
/// breaker trips: the breaker threshold, and twice it for replies with no
/// tool call (the harness re-prompts after each, and models often need a
/// few tries).
pub fn room(category: Category, s: &Settings) -> u32 {
    if category == Category::NoToolCall {
        s.breaker_threshold.saturating_mul(2)
    } else {
        s.breaker_threshold
    }
}

/// The run length at which the breaker warns with a nudge before it trips:
/// two short of its room for replies with no tool call, which nothing else
/// nudges first; `None` for every other category, whose repeats the loop
/// detector and the streak nudge before the breaker trips.
pub fn warning(category: Category, s: &Settings) -> Option<u32> {
    (category == Category::NoToolCall).then(|| room(category, s).saturating_sub(2))
}

/// The most room any category has: a run never grows this long, since the
/// breaker trips at its category's room.
pub fn most_room(s: &Settings) -> u32 {
    Category::ALL
        .into_iter()
        .map(|c| room(c, s))
        .max()
        .unwrap_or(s.breaker_threshold)
}

/// The breaker's state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Breaker {
    /// The fingerprint of the current run of identical failures.
    pub fingerprint: String,
    /// How long that run is.
    pub count: u32,
    /// The batch of the run's last counted failure.
    #[serde(default)]
    pub batch: Option<u64>,
}

impl Breaker {
    /// Records a counted failure of call batch `batch`; returns the run
    /// length if it reached `threshold`. The run starts over after it trips.
    pub fn failure(
        &mut self,
        fingerprint: &str,
        threshold: u32,
        batch: Option<u64>,
    ) -> Option<u32> {
        if self.count > 0 && self.fingerprint == fingerprint {
            if batch.is_some() && batch == self.batch {
                return None;
            }
            self.count += 1;
        } else {
            self.fingerprint = fingerprint.to_string();
            self.count = 1;
        }
        self.batch = batch;
        if self.count >= threshold {
            let n = self.count;
            self.count = 0;
            self.fingerprint.clear();
            Some(n)
        } else {
            None
        }
    }

    /// A success resets the breaker.
    pub fn reset(&mut self) {
        self.count = 0;
        self.fingerprint.clear();
        self.batch = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trips_on_the_fifth_identical_failure_only() {
        let mut b = Breaker::default();
        for _ in 0..4 {
            assert_eq!(b.failure("a", 5, None), None);
        }
        assert_eq!(b.failure("a", 5, None), Some(5));
        assert_eq!(b.failure("a", 5, None), None, "starts over after tripping");
    }

    #[test]
    fn identical_errors_of_one_batch_count_once() {
        let mut b = Breaker::default();
        for _ in 0..6 {
            assert_eq!(b.failure("a", 3, Some(7)), None);
        }
        assert_eq!(b.count, 1);
        assert_eq!(b.failure("a", 3, Some(8)), None);
        assert_eq!(b.failure("a", 3, Some(9)), Some(3));
    }

    #[test]
    fn a_different_error_or_a_success_resets() {
        let mut b = Breaker::default();
        for _ in 0..4 {
            b.failure("a", 5, None);
        }
        assert_eq!(b.failure("b", 5, None), None);
        assert_eq!(b.count, 1);
        b.reset();
        assert_eq!(b.count, 0);
    }
}
