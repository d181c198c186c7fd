//! The retry brief: what the next attempt at a task is told of the earlier
//! ones and of the project's learnings, through the `previous-attempts`
//! template.

use super::{Attempt, ScoredLearning};
use crate::error::Error;
use crate::limits;
use crate::render::{self, environment, template_error};
use minijinja::value::{Serde, Value};

/// An attempt as the `previous-attempts` template sees it.
#[derive(serde::Serialize)]
struct BriefAttempt<'a> {
    number: usize,
    status: &'static str,
    summary: &'a str,
    approaches: &'a [String],
    failure_reason: &'a str,
    error_output: &'a str,
    files_touched: &'a [String],
    lesson: String,
    at: u64,
}

/// A learning as the `previous-attempts` template sees it.
#[derive(serde::Serialize)]
struct BriefLearning<'a> {
    lesson: &'a str,
    pattern: &'a str,
    category: Option<&'static str>,
    confidence: u16,
    score: u16,
    evidence: u32,
}

/// The `previous-attempts` built-in template.
pub const PREVIOUS_ATTEMPTS: &str = include_str!("templates/previous-attempts.jinja");

/// Renders the retry brief: `attempts` are this task's (number, attempt),
/// oldest first; `learnings` best first. Drops the weakest learnings, then
/// the oldest attempts, to fit `budget` tokens.
pub fn render_brief(
    template: Option<&str>,
    total_attempts: usize,
    attempts: &[(usize, &Attempt)],
    learnings: &[&ScoredLearning],
    budget: usize,
) -> Result<String, Error> {
    let source = template.unwrap_or(PREVIOUS_ATTEMPTS);
    if source.len() > limits::MAX_TEMPLATE_SOURCE_BYTES {
        return Err(Error::InvalidTemplate(format!(
            "previous-attempts: the source is {} bytes; the limit is {}",
            source.len(),
            limits::MAX_TEMPLATE_SOURCE_BYTES
        )));
    }
    let env = environment();
    let tmpl = env
        .template_from_str(source)
        .map_err(|e| Error::InvalidTemplate(template_error("previous-attempts", &e)))?;
    let views: Vec<BriefAttempt<'_>> = attempts
        .iter()
        .map(|(n, a)| BriefAttempt {
            number: *n,
            status: a.status.name(),
            summary: &a.summary,
            approaches: &a.approaches,
            failure_reason: &a.failure_reason,
            error_output: &a.error_output,
            files_touched: &a.files_touched,
            lesson: if a.lesson.is_empty() {
                a.categories
                    .first()
                    .map_or(String::new(), |c| c.suggestion().to_string())
            } else {
                a.lesson.clone()
            },
            at: a.at,
        })
        .collect();
    let lviews: Vec<BriefLearning<'_>> = learnings
        .iter()
        .map(|s| BriefLearning {
            lesson: &s.learning.learning.lesson,
            pattern: &s.learning.learning.pattern,
            category: s.learning.learning.category.map(|c| c.name()),
            confidence: s.learning.confidence,
            score: s.score,
            evidence: s.learning.learning.evidence,
        })
        .collect();
    let droppable = views.len() + lviews.len();
    render::render_fitted("previous-attempts", &tmpl, droppable, budget, |drop| {
        let drop_learnings = drop.min(lviews.len());
        let drop_attempts = drop - drop_learnings;
        minijinja::context! {
            total_attempts => total_attempts,
            attempts => Value::from(Serde(&views[drop_attempts.min(views.len())..])),
            learnings => Value::from(Serde(&lviews[..lviews.len() - drop_learnings])),
        }
    })
}
