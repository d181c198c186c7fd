//! Task attempts: what was tried for a task, how it ended, and why.

use crate::category::Category;
use crate::limits;
use crate::redact::redact;
use crate::text::{cut_bytes, cut_chars};
use serde::{Deserialize, Serialize};

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AttemptStatus {
    /// The task was not done.
    Failed,
    /// The task was done.
    Succeeded,
}

impl AttemptStatus {
    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            AttemptStatus::Failed => "failed",
            AttemptStatus::Succeeded => "succeeded",
        }
    }
}

/// One attempt at a task.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Attempt {
    /// The task's id, as the host names it.
    pub task_id: String,
    /// What the task is, in a sentence.
    pub summary: String,
    /// The approaches tried, in order.
    pub approaches: Vec<String>,
    /// Why it failed (empty for a success).
    pub failure_reason: String,
    /// The telling part of the error output, redacted and bounded.
    pub error_output: String,
    /// Files the attempt changed.
    pub files_touched: Vec<String>,
    /// How it ended.
    pub status: AttemptStatus,
    /// When it ended: milliseconds since the Unix epoch, given by the host.
    pub at: u64,
    /// Failure categories seen during the attempt.
    pub categories: Vec<Category>,
    /// Failure fingerprints seen during the attempt.
    pub fingerprints: Vec<String>,
    /// The lesson, when the host or the agent stated one.
    pub lesson: String,
}

fn clean(s: &str, max: usize) -> String {
    cut_bytes(&redact(s), max).trim().to_string()
}

impl Attempt {
    /// The attempt with every field redacted and bounded (see the limits),
    /// and its lists deduplicated in order.
    pub fn normalized(&self) -> Attempt {
        let mut approaches: Vec<String> = Vec::new();
        for a in self.approaches.iter().take(limits::MAX_APPROACHES) {
            let a = clean(a, limits::MAX_APPROACH_BYTES);
            if !a.is_empty() && !approaches.contains(&a) {
                approaches.push(a);
            }
        }
        let mut files: Vec<String> = Vec::new();
        for f in self.files_touched.iter().take(limits::MAX_ATTEMPT_FILES) {
            let f = crate::tools::clean_path(&redact(f));
            if !f.is_empty() && !files.contains(&f) {
                files.push(f);
            }
        }
        let mut categories = self.categories.clone();
        categories.sort();
        categories.dedup();
        let mut fingerprints: Vec<String> = self
            .fingerprints
            .iter()
            .take(limits::MAX_ATTEMPT_FILES)
            .map(|f| cut_bytes(f, 64).to_string())
            .collect();
        fingerprints.sort();
        fingerprints.dedup();
        Attempt {
            task_id: cut_bytes(self.task_id.trim(), limits::MAX_TASK_ID_BYTES).to_string(),
            summary: cut_chars(&redact(self.summary.trim()), limits::MAX_SUMMARY_CHARS),
            approaches,
            failure_reason: clean(&self.failure_reason, limits::MAX_REASON_BYTES),
            error_output: clean(&self.error_output, limits::MAX_ERROR_OUTPUT_BYTES),
            files_touched: files,
            status: self.status,
            at: self.at,
            categories,
            fingerprints,
            lesson: clean(&self.lesson, limits::MAX_REASON_BYTES),
        }
    }

    /// The attempt's identity: a hash of its whole content. Equal attempts
    /// have equal ids, so adding one twice, or merging stores that share it,
    /// keeps one copy.
    pub fn id(&self) -> String {
        let text = serde_json::to_string(self).unwrap_or_default();
        format!("{:016x}", crate::classify::fnv1a(&[&text]))
    }
}
