//! Learnings: lessons that outlive the attempts they came from.
//!
//! A failed approach becomes a learning once two or more failed attempts
//! share it (the same approach text or the same failure fingerprint). A
//! manual learning starts at full confidence. Confidence halves every
//! half-life of age (7 days by default, linear between halvings) and halves
//! again for every later success of the same approach, which contradicts it.
//!
//! Stored learnings form a join-semilattice keyed by category and pattern:
//! joining two takes the earlier first-seen, the later last-seen, the larger
//! evidence and contradiction counts, and the lesson of the later one. That
//! makes `merge` commutative, associative and idempotent.

use super::attempt::{Attempt, AttemptStatus};
use crate::category::Category;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Failed attempts that must share an approach or fingerprint.
pub const MIN_EVIDENCE: u32 = 2;
/// Default half-life of a learning's confidence: 7 days, in milliseconds.
pub const DEFAULT_HALF_LIFE_MS: u64 = 7 * 24 * 60 * 60 * 1000;

/// A learning as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Learning {
    /// What it is about, if known.
    pub category: Option<Category>,
    /// What recurs: an approach, or a failure's description.
    pub pattern: String,
    /// What to do instead.
    pub lesson: String,
    /// Failed attempts behind it (1 for a manual learning).
    pub evidence: u32,
    /// Later successes of the same approach.
    pub contradictions: u32,
    /// When it was first seen, in ms since the epoch.
    pub first_seen: u64,
    /// When it was last seen, in ms since the epoch.
    pub last_seen: u64,
    /// Whether a person (or the agent) stated it with `learn`.
    pub manual: bool,
}

impl Learning {
    /// The key that identifies a learning across stores.
    pub fn key(&self) -> String {
        format!(
            "{}|{}",
            self.category.map_or("", |c| c.name()),
            self.pattern.to_lowercase()
        )
    }

    /// The join of two learnings with the same key.
    pub fn join(&self, other: &Learning) -> Learning {
        let later = if (other.last_seen, &other.lesson) > (self.last_seen, &self.lesson) {
            other
        } else {
            self
        };
        Learning {
            category: self.category.or(other.category),
            pattern: later.pattern.clone(),
            lesson: later.lesson.clone(),
            evidence: self.evidence.max(other.evidence),
            contradictions: self.contradictions.max(other.contradictions),
            first_seen: self.first_seen.min(other.first_seen),
            last_seen: self.last_seen.max(other.last_seen),
            manual: self.manual || other.manual,
        }
    }

    /// Confidence at `now`, in thousandths: the base (full for a manual
    /// learning, else 500 + 100 per piece of evidence, at most 1000), halved
    /// per half-life of age since last seen (linear in between) and per
    /// contradiction. Integer arithmetic only, so every host agrees.
    pub fn confidence(&self, now: u64, half_life_ms: u64) -> u16 {
        let base: u64 = if self.manual {
            1000
        } else {
            (500 + 100 * u64::from(self.evidence)).min(1000)
        };
        let half_life = half_life_ms.max(1);
        let age = now.saturating_sub(self.last_seen);
        let halvings = age / half_life;
        let rest = age % half_life;
        let mut c = if halvings >= 64 { 0 } else { base >> halvings };
        // Between halvings, fall linearly toward the next half.
        c -= (c / 2).saturating_mul(rest) / half_life;
        for _ in 0..self.contradictions.min(16) {
            c /= 2;
        }
        c as u16
    }
}

fn normalize_approach(a: &str) -> String {
    crate::text::squash_whitespace(a).to_lowercase()
}

/// The learnings the attempts support now: every approach or fingerprint
/// shared by at least [`MIN_EVIDENCE`] failed attempts, keyed like stored ones.
pub fn derive<'a>(
    attempts: impl Iterator<Item = &'a Attempt> + Clone,
) -> BTreeMap<String, Learning> {
    // group key -> (pattern, failed attempts)
    let mut groups: BTreeMap<String, (String, Vec<&Attempt>)> = BTreeMap::new();
    for a in attempts
        .clone()
        .filter(|a| a.status == AttemptStatus::Failed)
    {
        for approach in &a.approaches {
            let g = groups
                .entry(format!("approach:{}", normalize_approach(approach)))
                .or_insert_with(|| (approach.clone(), Vec::new()));
            g.1.push(a);
        }
        for fp in &a.fingerprints {
            let pattern = if a.failure_reason.is_empty() {
                fp.clone()
            } else {
                a.failure_reason.clone()
            };
            let g = groups
                .entry(format!("fingerprint:{fp}"))
                .or_insert_with(|| (pattern, Vec::new()));
            g.1.push(a);
        }
    }
    let mut out: BTreeMap<String, Learning> = BTreeMap::new();
    for (group, (pattern, failed)) in groups {
        let evidence = failed.len() as u32;
        if evidence < MIN_EVIDENCE {
            continue;
        }
        let last = failed.iter().max_by_key(|a| (a.at, a.id())).copied();
        let Some(last) = last else { continue };
        let category = {
            let mut counts: BTreeMap<Category, u32> = BTreeMap::new();
            for a in &failed {
                for c in &a.categories {
                    *counts.entry(*c).or_default() += 1;
                }
            }
            counts
                .into_iter()
                .max_by_key(|(c, n)| (*n, std::cmp::Reverse(*c)))
                .map(|(c, _)| c)
        };
        let lesson = if !last.lesson.is_empty() {
            last.lesson.clone()
        } else if group.starts_with("approach:") {
            let why = if last.failure_reason.is_empty() {
                String::new()
            } else {
                format!(": {}", last.failure_reason)
            };
            format!("\"{pattern}\" failed in {evidence} attempts{why}. Try a different approach.")
        } else {
            format!(
                "{pattern} happened in {evidence} attempts. {}",
                category.map_or("Try a different approach.", |c| c.suggestion())
            )
        };
        let last_seen = failed.iter().map(|a| a.at).max().unwrap_or(0);
        let contradictions = if let Some(key) = group.strip_prefix("approach:") {
            attempts
                .clone()
                .filter(|a| {
                    a.status == AttemptStatus::Succeeded
                        && a.at > last_seen
                        && a.approaches.iter().any(|x| normalize_approach(x) == key)
                })
                .count() as u32
        } else {
            0
        };
        let learning = Learning {
            category,
            pattern: crate::text::cut_bytes(&pattern, crate::limits::MAX_REASON_BYTES).to_string(),
            lesson,
            evidence,
            contradictions,
            first_seen: failed.iter().map(|a| a.at).min().unwrap_or(0),
            last_seen,
            manual: false,
        };
        let key = learning.key();
        let joined = match out.get(&key) {
            Some(existing) => existing.join(&learning),
            None => learning,
        };
        out.insert(key, joined);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(evidence: u32, last_seen: u64, manual: bool) -> Learning {
        Learning {
            category: None,
            pattern: "p".into(),
            lesson: "x".into(),
            evidence,
            contradictions: 0,
            first_seen: 0,
            last_seen,
            manual,
        }
    }

    #[test]
    fn confidence_halves_per_half_life() {
        let hl = 1000;
        assert_eq!(l(1, 0, true).confidence(0, hl), 1000);
        assert_eq!(l(1, 0, true).confidence(1000, hl), 500);
        assert_eq!(l(1, 0, true).confidence(2000, hl), 250);
        assert_eq!(l(1, 0, true).confidence(500, hl), 750);
        assert_eq!(l(2, 0, false).confidence(0, hl), 700);
        assert_eq!(l(9, 0, false).confidence(0, hl), 1000);
        let mut c = l(1, 0, true);
        c.contradictions = 1;
        assert_eq!(c.confidence(0, hl), 500);
        assert_eq!(l(1, 0, true).confidence(u64::MAX, hl), 0);
    }

    #[test]
    fn join_is_a_semilattice() {
        let a = l(2, 5, false);
        let mut b = l(3, 9, true);
        b.lesson = "y".into();
        assert_eq!(a.join(&b), b.join(&a));
        assert_eq!(a.join(&a), a);
        let j = a.join(&b);
        assert_eq!(
            (j.evidence, j.last_seen, j.manual, j.lesson.as_str()),
            (3, 9, true, "y")
        );
    }
}
