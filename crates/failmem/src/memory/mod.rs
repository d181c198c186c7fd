//! Project failure memory: task attempts, the learnings they support, and
//! the retry brief for the next attempt at the same or a similar task.
//!
//! A [`Store`] is a value: hosts load it from storage, call it, and save
//! its [`Store::export`]. The engine reads no clock: every call that needs
//! the time takes `now`, in milliseconds since the Unix epoch.

mod attempt;
mod brief;
mod learning;
mod sanitize;
mod similarity;

pub use attempt::{Attempt, AttemptStatus};
pub use learning::{DEFAULT_HALF_LIFE_MS, Learning, MIN_EVIDENCE};
pub use similarity::TaskQuery;

use crate::category::Category;
use crate::error::Error;
use crate::limits;
use crate::redact::redact;
use sanitize::{generalize_path, generalize_text};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `format` field of every export.
pub const FORMAT: &str = "failmem-memory";
/// The export format version this engine writes and reads.
pub const VERSION: u32 = 1;
/// Default age after which `prune` drops an attempt: 24 hours.
pub const DEFAULT_ATTEMPT_TTL_MS: u64 = 24 * 60 * 60 * 1000;
/// Default age after which `prune` drops a learning: 30 days.
pub const DEFAULT_LEARNING_TTL_MS: u64 = 30 * 24 * 60 * 60 * 1000;
/// Default similarity threshold, in thousandths: 0.7.
pub const DEFAULT_THRESHOLD: u16 = 700;
/// Attempts of the same task shown in a brief by default.
pub const DEFAULT_ATTEMPTS_SHOWN: u32 = 3;

/// A learning with its identity and its confidence at a given time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct LearningView {
    /// The learning's key.
    pub key: String,
    /// The learning.
    pub learning: Learning,
    /// Confidence at the time asked, in thousandths.
    pub confidence: u16,
}

/// An attempt and how related it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct ScoredAttempt {
    /// Score from 0 to 1000.
    pub score: u16,
    /// The attempt.
    pub attempt: Attempt,
}

/// A learning and how related it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct ScoredLearning {
    /// Score from 0 to 1000.
    pub score: u16,
    /// The learning.
    pub learning: LearningView,
}

/// What is related to a task.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct Related {
    /// Related attempts, best first.
    pub attempts: Vec<ScoredAttempt>,
    /// Related learnings, best first.
    pub learnings: Vec<ScoredLearning>,
}

/// What `prune` removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct PruneReport {
    /// Attempts removed.
    pub attempts_removed: u32,
    /// Learnings removed.
    pub learnings_removed: u32,
    /// Learnings kept from attempts before they were removed.
    pub learnings_consolidated: u32,
}

/// Options for a brief or a query. `None` means the documented default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct BriefOptions {
    /// Similarity threshold in thousandths (default 700).
    pub threshold: Option<u16>,
    /// Attempts of the same task shown (default 3, at most 20).
    pub max_attempts: Option<u32>,
    /// Token budget (default 500).
    pub token_budget: Option<u32>,
    /// Confidence half-life in ms (default 7 days).
    pub half_life_ms: Option<u64>,
    /// A host template replacing `previous-attempts`.
    pub template: Option<String>,
}

impl BriefOptions {
    /// The options with defaults filled in: threshold, attempts shown, token
    /// budget and half-life; an out-of-range value is `invalid-config`.
    pub fn resolve(&self) -> Result<(u16, u32, u32, u64), Error> {
        let threshold = self.threshold.unwrap_or(DEFAULT_THRESHOLD);
        if threshold > 1000 {
            return Err(Error::InvalidConfig(format!(
                "threshold is {threshold}; it must be from 0 to 1000"
            )));
        }
        let max_attempts = self.max_attempts.unwrap_or(DEFAULT_ATTEMPTS_SHOWN);
        if !(1..=20).contains(&max_attempts) {
            return Err(Error::InvalidConfig(format!(
                "max-attempts is {max_attempts}; it must be from 1 to 20"
            )));
        }
        let budget = self.token_budget.unwrap_or(500);
        if !(limits::MIN_TOKEN_BUDGET..=limits::MAX_TOKEN_BUDGET).contains(&budget) {
            return Err(Error::InvalidConfig(format!(
                "token-budget is {budget}; it must be from {} to {}",
                limits::MIN_TOKEN_BUDGET,
                limits::MAX_TOKEN_BUDGET
            )));
        }
        let half_life = self.half_life_ms.unwrap_or(learning::DEFAULT_HALF_LIFE_MS);
        if half_life == 0 {
            return Err(Error::InvalidConfig(
                "half-life-ms must be greater than 0".into(),
            ));
        }
        Ok((threshold, max_attempts, budget, half_life))
    }
}

/// One project's memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Store {
    attempts: BTreeMap<String, Attempt>,
    learnings: BTreeMap<String, Learning>,
}

#[derive(Serialize)]
struct ExportOut<'a> {
    format: &'static str,
    version: u32,
    attempts: Vec<&'a Attempt>,
    learnings: Vec<&'a Learning>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExportIn {
    format: String,
    version: u32,
    attempts: Vec<Attempt>,
    learnings: Vec<Learning>,
}

impl Store {
    /// An empty store.
    pub fn new() -> Store {
        Store::default()
    }

    /// Adds an attempt (redacted and bounded first); returns its id. Adding
    /// the same attempt twice keeps one copy.
    pub fn add_attempt(&mut self, attempt: &Attempt) -> Result<String, Error> {
        let a = attempt.normalized();
        if a.task_id.is_empty() {
            return Err(Error::InvalidConfig(
                "attempt.task-id must not be empty".into(),
            ));
        }
        let id = a.id();
        self.attempts.insert(id.clone(), a);
        self.bound();
        Ok(id)
    }

    /// Adds a manual learning at full confidence.
    pub fn learn(
        &mut self,
        lesson: &str,
        category: Option<Category>,
        now: u64,
    ) -> Result<LearningView, Error> {
        let lesson =
            crate::text::cut_bytes(redact(lesson.trim()).as_ref(), limits::MAX_REASON_BYTES)
                .to_string();
        if lesson.is_empty() {
            return Err(Error::InvalidConfig("the lesson must not be empty".into()));
        }
        let l = Learning {
            category,
            pattern: lesson.clone(),
            lesson,
            evidence: 1,
            contradictions: 0,
            first_seen: now,
            last_seen: now,
            manual: true,
        };
        let key = l.key();
        let joined = match self.learnings.get(&key) {
            Some(old) => old.join(&l),
            None => l,
        };
        self.learnings.insert(key.clone(), joined.clone());
        self.bound();
        let confidence = joined.confidence(now, learning::DEFAULT_HALF_LIFE_MS);
        Ok(LearningView {
            key,
            learning: joined,
            confidence,
        })
    }

    /// Every attempt, oldest first.
    pub fn attempts(&self) -> Vec<&Attempt> {
        let mut v: Vec<(&String, &Attempt)> = self.attempts.iter().collect();
        v.sort_by(|(ia, a), (ib, b)| (a.at, *ia).cmp(&(b.at, *ib)));
        v.into_iter().map(|(_, a)| a).collect()
    }

    /// Every learning in effect: the stored ones joined with those the
    /// attempts support, with their confidence at `now`, most confident first.
    pub fn learnings(&self, now: u64, half_life_ms: u64) -> Vec<LearningView> {
        let mut all = self.learnings.clone();
        for (key, l) in learning::derive(self.attempts.values()) {
            let joined = match all.get(&key) {
                Some(old) => old.join(&l),
                None => l,
            };
            all.insert(key, joined);
        }
        let mut out: Vec<LearningView> = all
            .into_iter()
            .map(|(key, learning)| {
                let confidence = learning.confidence(now, half_life_ms);
                LearningView {
                    key,
                    learning,
                    confidence,
                }
            })
            .collect();
        out.sort_by(|a, b| {
            (std::cmp::Reverse(a.confidence), &a.key)
                .cmp(&(std::cmp::Reverse(b.confidence), &b.key))
        });
        out
    }

    /// The attempts and learnings related to `query` with a score at or
    /// above `threshold`. Manual learnings are project-wide: always related,
    /// with score 1000. A learning from attempts scores as the best related
    /// attempt that shows its pattern.
    pub fn related(
        &self,
        query: &TaskQuery,
        now: u64,
        threshold: u16,
        half_life_ms: u64,
    ) -> Related {
        let mut attempts: Vec<ScoredAttempt> = self
            .attempts()
            .into_iter()
            .map(|a| ScoredAttempt {
                score: similarity::score(query, a),
                attempt: a.clone(),
            })
            .filter(|s| s.score >= threshold)
            .collect();
        attempts.sort_by(|a, b| {
            (std::cmp::Reverse(a.score), std::cmp::Reverse(a.attempt.at))
                .cmp(&(std::cmp::Reverse(b.score), std::cmp::Reverse(b.attempt.at)))
        });
        let mut learnings = Vec::new();
        for view in self.learnings(now, half_life_ms) {
            let pattern = view.learning.pattern.to_lowercase();
            let shown_by = |a: &Attempt| {
                a.approaches.iter().any(|x| x.to_lowercase() == pattern)
                    || a.failure_reason.to_lowercase() == pattern
                    || a.fingerprints.contains(&view.learning.pattern)
            };
            let score = if view.learning.manual {
                1000
            } else {
                attempts
                    .iter()
                    .filter(|s| shown_by(&s.attempt))
                    .map(|s| s.score)
                    .max()
                    .unwrap_or(0)
            };
            if score >= threshold && view.confidence > 0 {
                learnings.push(ScoredLearning {
                    score,
                    learning: view,
                });
            }
        }
        learnings.sort_by(|a, b| {
            (
                std::cmp::Reverse(a.score),
                std::cmp::Reverse(a.learning.confidence),
                &a.learning.key,
            )
                .cmp(&(
                    std::cmp::Reverse(b.score),
                    std::cmp::Reverse(b.learning.confidence),
                    &b.learning.key,
                ))
        });
        Related {
            attempts,
            learnings,
        }
    }

    /// [`Store::related`] with validated options.
    pub fn related_with(
        &self,
        query: &TaskQuery,
        now: u64,
        options: &BriefOptions,
    ) -> Result<Related, Error> {
        let (threshold, _, _, half_life) = options.resolve()?;
        Ok(self.related(query, now, threshold, half_life))
    }

    /// The retry brief for `query`: `<previous_attempts>` (this task's
    /// latest attempts, at most `max-attempts`) and `<related_learnings>`,
    /// within the token budget. Empty when there is nothing to say.
    pub fn brief(
        &self,
        query: &TaskQuery,
        now: u64,
        options: &BriefOptions,
    ) -> Result<String, Error> {
        let (threshold, max_attempts, budget, half_life) = options.resolve()?;
        let related = self.related(query, now, threshold, half_life);
        let own: Vec<&Attempt> = self
            .attempts()
            .into_iter()
            .filter(|a| !query.id.is_empty() && a.task_id == query.id)
            .collect();
        let total = own.len();
        let shown_from = total.saturating_sub(max_attempts as usize);
        let own_shown: Vec<(usize, &Attempt)> = own
            .iter()
            .enumerate()
            .skip(shown_from)
            .map(|(i, a)| (i + 1, *a))
            .collect();
        let learnings: Vec<&ScoredLearning> = related.learnings.iter().collect();
        brief::render_brief(
            options.template.as_deref(),
            total,
            &own_shown,
            &learnings,
            budget as usize,
        )
    }

    /// Drops attempts older than `attempt_ttl_ms` and learnings not seen for
    /// `learning_ttl_ms`. Learnings the dropped attempts supported are kept
    /// first, so pruning never forgets a lesson early.
    pub fn prune(&mut self, now: u64, attempt_ttl_ms: u64, learning_ttl_ms: u64) -> PruneReport {
        let mut report = PruneReport::default();
        let cutoff = now.saturating_sub(attempt_ttl_ms);
        if self.attempts.values().any(|a| a.at < cutoff) {
            for (key, l) in learning::derive(self.attempts.values()) {
                let joined = match self.learnings.get(&key) {
                    Some(old) => old.join(&l),
                    None => {
                        report.learnings_consolidated += 1;
                        l
                    }
                };
                self.learnings.insert(key, joined);
            }
            let before = self.attempts.len();
            self.attempts.retain(|_, a| a.at >= cutoff);
            report.attempts_removed = (before - self.attempts.len()) as u32;
        }
        let l_cutoff = now.saturating_sub(learning_ttl_ms);
        let before = self.learnings.len();
        self.learnings.retain(|_, l| l.last_seen >= l_cutoff);
        report.learnings_removed = (before - self.learnings.len()) as u32;
        report
    }

    /// Merges `other` into this store. Merging is commutative, associative
    /// and idempotent: attempts are a set, learnings a join-semilattice, and
    /// both keep the newest entries up to their limits.
    pub fn merge(&mut self, other: &Store) {
        for (id, a) in &other.attempts {
            self.attempts.insert(id.clone(), a.clone());
        }
        for (key, l) in &other.learnings {
            let joined = match self.learnings.get(key) {
                Some(old) => old.join(l),
                None => l.clone(),
            };
            self.learnings.insert(key.clone(), joined);
        }
        self.bound();
    }

    /// Removes the attempts (and learnings) of `task_id` if given, and those
    /// older than `older_than_ms` if given; with neither, removes everything.
    /// Returns how many entries were removed.
    pub fn clear(&mut self, task_id: Option<&str>, older_than_ms: Option<u64>, now: u64) -> u32 {
        let before = self.attempts.len() + self.learnings.len();
        let cutoff = older_than_ms.map(|ms| now.saturating_sub(ms));
        match (task_id, cutoff) {
            (None, None) => {
                self.attempts.clear();
                self.learnings.clear();
            }
            _ => {
                self.attempts.retain(|_, a| {
                    let task_match = task_id.is_none_or(|t| a.task_id == t);
                    let age_match = cutoff.is_none_or(|c| a.at < c);
                    !(task_match && age_match)
                });
                if task_id.is_none()
                    && let Some(c) = cutoff
                {
                    self.learnings.retain(|_, l| l.last_seen >= c);
                }
            }
        }
        (before - self.attempts.len() - self.learnings.len()) as u32
    }

    /// Keeps the newest entries within the limits.
    fn bound(&mut self) {
        if self.attempts.len() > limits::MAX_ATTEMPTS {
            let mut order: Vec<(u64, String)> = self
                .attempts
                .iter()
                .map(|(id, a)| (a.at, id.clone()))
                .collect();
            order.sort();
            for (_, id) in order
                .iter()
                .take(self.attempts.len() - limits::MAX_ATTEMPTS)
            {
                self.attempts.remove(id);
            }
        }
        if self.learnings.len() > limits::MAX_LEARNINGS {
            let mut order: Vec<(u64, String)> = self
                .learnings
                .iter()
                .map(|(k, l)| (l.last_seen, k.clone()))
                .collect();
            order.sort();
            for (_, k) in order
                .iter()
                .take(self.learnings.len() - limits::MAX_LEARNINGS)
            {
                self.learnings.remove(k);
            }
        }
    }

    /// The store as versioned JSON. A sanitized export is redacted again and
    /// generalizes absolute paths, wherever they start in a text: relative to
    /// `project_root` when they are under it (the root itself is `.`), else
    /// to their last two components (see `sanitize`).
    pub fn export(&self, sanitized: bool, project_root: Option<&str>) -> String {
        let mut attempts: Vec<Attempt> = self.attempts().into_iter().cloned().collect();
        let mut learnings: Vec<Learning> = self.learnings.values().cloned().collect();
        if sanitized {
            for a in &mut attempts {
                a.files_touched = a
                    .files_touched
                    .iter()
                    .map(|p| generalize_path(p, project_root))
                    .collect();
                a.summary = generalize_text(&redact(&a.summary), project_root);
                a.failure_reason = generalize_text(&redact(&a.failure_reason), project_root);
                a.error_output = generalize_text(&redact(&a.error_output), project_root);
                a.lesson = generalize_text(&redact(&a.lesson), project_root);
                a.approaches = a
                    .approaches
                    .iter()
                    .map(|x| generalize_text(&redact(x), project_root))
                    .collect();
            }
            for l in &mut learnings {
                l.pattern = generalize_text(&redact(&l.pattern), project_root);
                l.lesson = generalize_text(&redact(&l.lesson), project_root);
            }
        }
        let doc = ExportOut {
            format: FORMAT,
            version: VERSION,
            attempts: attempts.iter().collect(),
            learnings: learnings.iter().collect(),
        };
        serde_json::to_string(&doc).unwrap_or_default()
    }

    /// Reads an export. Entries are normalized as if added one by one.
    pub fn import(text: &str) -> Result<Store, Error> {
        if text.len() > limits::MAX_EXPORT_BYTES {
            return Err(Error::TooLarge(format!(
                "the export is {} bytes; the limit is {}",
                text.len(),
                limits::MAX_EXPORT_BYTES
            )));
        }
        let head: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| Error::InvalidSnapshot(format!("not JSON: {e}")))?;
        if head.get("format").and_then(|v| v.as_str()) != Some(FORMAT) {
            return Err(Error::InvalidSnapshot(format!(
                "the format field must be {FORMAT:?}"
            )));
        }
        match head.get("version").and_then(|v| v.as_u64()) {
            Some(v) if v == u64::from(VERSION) => {}
            Some(v) => {
                return Err(Error::UnsupportedVersion(format!(
                    "the memory export is version {v}; this engine reads version {VERSION}"
                )));
            }
            None => {
                return Err(Error::InvalidSnapshot(
                    "the version field must be a whole number".into(),
                ));
            }
        }
        let doc: ExportIn =
            serde_json::from_value(head).map_err(|e| Error::InvalidSnapshot(e.to_string()))?;
        debug_assert_eq!((doc.format.as_str(), doc.version), (FORMAT, VERSION));
        let mut store = Store::new();
        for a in &doc.attempts {
            store
                .add_attempt(a)
                .map_err(|e| Error::InvalidSnapshot(e.to_string()))?;
        }
        for l in doc.learnings {
            let key = l.key();
            let joined = match store.learnings.get(&key) {
                Some(old) => old.join(&l),
                None => l,
            };
            store.learnings.insert(key, joined);
        }
        store.bound();
        Ok(store)
    }
}

#[cfg(test)]
mod tests;
