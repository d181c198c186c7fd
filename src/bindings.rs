//! The component glue: wit-bindgen exports over the pure core. Nothing here
//! decides anything; it converts between WIT types and core types and back.
//! Compiled for wasm32 only.

use crate::{Category, Config, HostRule, TemplateSource, ToolOutcome};
use std::cell::RefCell;

wit_bindgen::generate!({
    world: "engine",
    path: "wit",
});

use exports::failmem::core::classifier as wc;
use exports::failmem::core::tracker as wt;
use exports::failmem::core::types as w;

struct Component;

fn category_in(c: w::Category) -> Category {
    match c {
        w::Category::EditMismatch => Category::EditMismatch,
        w::Category::NotFound => Category::NotFound,
        w::Category::MissingDependency => Category::MissingDependency,
        w::Category::Permission => Category::Permission,
        w::Category::Syntax => Category::Syntax,
        w::Category::TypeError => Category::TypeError,
        w::Category::ApiMismatch => Category::ApiMismatch,
        w::Category::BuildFailure => Category::BuildFailure,
        w::Category::TestFailure => Category::TestFailure,
        w::Category::InvalidArguments => Category::InvalidArguments,
        w::Category::UnknownTool => Category::UnknownTool,
        w::Category::NoToolCall => Category::NoToolCall,
        w::Category::Network => Category::Network,
        w::Category::Timeout => Category::Timeout,
        w::Category::Resource => Category::Resource,
        w::Category::ProviderError => Category::ProviderError,
        w::Category::Cancelled => Category::Cancelled,
        w::Category::Runtime => Category::Runtime,
        w::Category::Unknown => Category::Unknown,
    }
}

fn category_out(c: Category) -> w::Category {
    match c {
        Category::EditMismatch => w::Category::EditMismatch,
        Category::NotFound => w::Category::NotFound,
        Category::MissingDependency => w::Category::MissingDependency,
        Category::Permission => w::Category::Permission,
        Category::Syntax => w::Category::Syntax,
        Category::TypeError => w::Category::TypeError,
        Category::ApiMismatch => w::Category::ApiMismatch,
        Category::BuildFailure => w::Category::BuildFailure,
        Category::TestFailure => w::Category::TestFailure,
        Category::InvalidArguments => w::Category::InvalidArguments,
        Category::UnknownTool => w::Category::UnknownTool,
        Category::NoToolCall => w::Category::NoToolCall,
        Category::Network => w::Category::Network,
        Category::Timeout => w::Category::Timeout,
        Category::Resource => w::Category::Resource,
        Category::ProviderError => w::Category::ProviderError,
        Category::Cancelled => w::Category::Cancelled,
        Category::Runtime => w::Category::Runtime,
        Category::Unknown => w::Category::Unknown,
    }
}

fn outcome_in(o: w::ToolOutcome) -> ToolOutcome {
    ToolOutcome {
        tool: o.tool,
        args: o.args,
        output: o.output,
        exit_code: o.exit_code,
        is_error: o.is_error,
    }
}

fn classification_out(c: crate::Classification) -> w::Classification {
    w::Classification {
        category: c.category.map(category_out),
        tracked: c.tracked,
        terminal: c.terminal,
        description: c.description,
        suggestion: c.suggestion,
        fingerprint: c.fingerprint,
        rule: c.rule,
    }
}

fn error_out(e: crate::Error) -> w::Error {
    use crate::Error as E;
    match e {
        E::InvalidConfig(m) => w::Error::InvalidConfig(m),
        E::InvalidSnapshot(m) => w::Error::InvalidSnapshot(m),
        E::UnsupportedVersion(m) => w::Error::UnsupportedVersion(m),
        E::UnknownTemplate(m) => w::Error::UnknownTemplate(m),
        E::InvalidTemplate(m) => w::Error::InvalidTemplate(m),
        E::RenderFailed(m) => w::Error::RenderFailed(m),
        E::UnknownFailure(id) => w::Error::UnknownFailure(id),
        E::TooLarge(m) => w::Error::TooLarge(m),
        E::Other(m) => w::Error::Other(m),
    }
}

fn config_in(c: wt::Config) -> Config {
    Config {
        max_failures: c.max_failures,
        breaker_threshold: c.breaker_threshold,
        streak_threshold: c.streak_threshold,
        loop_nudge_threshold: c.loop_nudge_threshold,
        loop_stop_threshold: c.loop_stop_threshold,
        exempt_tools: c.exempt_tools,
        available_tools: c.available_tools,
        rules: c.rules.map(|rules| {
            rules
                .into_iter()
                .map(|r| HostRule {
                    id: r.id,
                    tools: r.tools,
                    pattern: r.pattern,
                    category: category_in(r.category),
                    suggestion: r.suggestion,
                })
                .collect()
        }),
        templates: c.templates.map(|ts| {
            ts.into_iter()
                .map(|t| TemplateSource {
                    name: t.name,
                    source: t.source,
                })
                .collect()
        }),
        token_budget: c.token_budget,
        always_show_failures: c.always_show_failures,
        max_output_bytes: c.max_output_bytes,
    }
}

fn action_out(a: crate::Action) -> wt::Action {
    match a {
        crate::Action::Continue => wt::Action::Continue,
        crate::Action::Nudge => wt::Action::Nudge,
        crate::Action::Stop => wt::Action::Stop,
    }
}

fn pattern_out(p: &crate::Pattern) -> wt::Pattern {
    use crate::PatternKind as K;
    wt::Pattern {
        kind: match p.kind {
            K::RepeatedAction => wt::PatternKind::RepeatedAction,
            K::RepeatedError => wt::PatternKind::RepeatedError,
            K::CategoryCluster => wt::PatternKind::CategoryCluster,
            K::Escalating => wt::PatternKind::Escalating,
        },
        subject: p.subject.clone(),
        count: p.count,
        confidence: p.confidence,
        suggestion: p.suggestion.clone(),
    }
}

fn event_out(e: crate::Event) -> wt::Event {
    use crate::EventKind as K;
    wt::Event {
        kind: match e.kind {
            K::FailureRecorded => wt::EventKind::FailureRecorded,
            K::FailureRepeated => wt::EventKind::FailureRepeated,
            K::FailureEvicted => wt::EventKind::FailureEvicted,
            K::FailureResolved => wt::EventKind::FailureResolved,
            K::BreakerTripped => wt::EventKind::BreakerTripped,
            K::StreakTripped => wt::EventKind::StreakTripped,
            K::CallLoop => wt::EventKind::CallLoop,
            K::CallCycle => wt::EventKind::CallCycle,
            K::PatternDetected => wt::EventKind::PatternDetected,
        },
        failure_id: e.failure_id,
        pattern: e.pattern.as_ref().map(pattern_out),
        message: e.message,
    }
}

impl wc::Guest for Component {
    fn classify(outcome: w::ToolOutcome) -> w::Classification {
        classification_out(crate::classify(&outcome_in(outcome)))
    }

    fn rules() -> Vec<wc::RuleInfo> {
        crate::classify::rule_table()
            .into_iter()
            .map(|r| wc::RuleInfo {
                id: r.id,
                scope: r.scope.to_string(),
                pattern: r.pattern.to_string(),
                category: category_out(r.category),
            })
            .collect()
    }
}

/// The `session` resource: a core session behind a `RefCell`, because WIT
/// methods borrow the resource.
struct SessionResource(RefCell<crate::Session>);

impl wt::Guest for Component {
    type Session = SessionResource;
}

impl wt::GuestSession for SessionResource {
    fn create(config: wt::Config) -> Result<wt::Session, w::Error> {
        let session = crate::Session::new(config_in(config)).map_err(error_out)?;
        Ok(wt::Session::new(SessionResource(RefCell::new(session))))
    }

    fn restore(snapshot: String) -> Result<wt::Session, w::Error> {
        let session = crate::Session::restore(&snapshot).map_err(error_out)?;
        Ok(wt::Session::new(SessionResource(RefCell::new(session))))
    }

    fn observe(&self, outcome: w::ToolOutcome) -> wt::StepReport {
        let r = self.0.borrow_mut().observe(&outcome_in(outcome));
        wt::StepReport {
            step: r.step,
            turn: r.turn,
            classification: classification_out(r.classification),
            failure_id: r.failure_id,
            verdict: wt::Verdict {
                action: action_out(r.verdict.action),
                reason: r.verdict.reason,
                can_continue: r.verdict.can_continue,
                sentinel: r.verdict.sentinel,
            },
            events: r.events.into_iter().map(event_out).collect(),
        }
    }

    fn turn(&self) -> u32 {
        self.0.borrow_mut().turn()
    }

    fn compacted(&self) -> u32 {
        self.0.borrow_mut().compacted()
    }

    fn resolve(&self, id: u32) -> Result<(), w::Error> {
        self.0.borrow_mut().resolve(id).map_err(error_out)
    }

    fn failures(&self) -> Vec<wt::FailureRecord> {
        self.0
            .borrow()
            .failures()
            .iter()
            .map(|r| wt::FailureRecord {
                id: r.id,
                tool: r.tool.clone(),
                category: category_out(r.category),
                description: r.description.clone(),
                suggestion: r.suggestion.clone(),
                args: r.args.clone(),
                fingerprint: r.fingerprint.clone(),
                step: r.step,
                turn: r.turn,
                first_turn: r.first_turn,
                occurrences: r.occurrences,
                resolved: r.resolved,
            })
            .collect()
    }

    fn patterns(&self) -> Vec<wt::Pattern> {
        self.0.borrow().patterns().iter().map(pattern_out).collect()
    }

    fn ledger(&self) -> wt::Ledger {
        let (files_read, files_modified) = self.0.borrow().ledger();
        wt::Ledger {
            files_read,
            files_modified,
        }
    }

    fn stats(&self) -> wt::Stats {
        let s = self.0.borrow().stats();
        wt::Stats {
            steps: s.steps,
            turns: s.turns,
            compactions: s.compactions,
            failures: s.failures,
            tracked: s.tracked,
            resolved: s.resolved,
            evicted: s.evicted,
            nudges: s.nudges,
            stops: s.stops,
            by_category: s
                .by_category
                .into_iter()
                .map(|c| wt::CategoryCount {
                    category: category_out(c.category),
                    count: c.count,
                })
                .collect(),
        }
    }

    fn render(&self, template: String, options: wt::RenderOptions) -> Result<String, w::Error> {
        self.0
            .borrow()
            .render(&template, options.token_budget)
            .map_err(error_out)
    }

    fn snapshot(&self) -> String {
        self.0.borrow().snapshot()
    }
}

export!(Component);
