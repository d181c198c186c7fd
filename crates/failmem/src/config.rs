//! Session configuration: every field optional, every default documented,
//! every value checked. [`Config::resolve`] turns a config into [`Settings`]
//! or an [`Error::InvalidConfig`] that names the field.

use crate::classify::HostRule;
use crate::error::Error;
use crate::limits;
use serde::{Deserialize, Serialize};

/// A host template replacing a built-in one or adding a new name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[serde(deny_unknown_fields)]
pub struct TemplateSource {
    /// The template's name.
    pub name: String,
    /// minijinja source.
    pub source: String,
}

/// A session's configuration as the host gives it. `None` means default.
/// Field names in JSON are the WIT names, in kebab-case.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Config {
    /// Tracked failures kept at once. Default 10; 1 to 1000.
    pub max_failures: Option<u32>,
    /// Identical consecutive failures that trip the breaker. Default 5; 2 to 100.
    /// Replies with no tool call get twice the room, and a nudge two
    /// replies before it.
    pub breaker_threshold: Option<u32>,
    /// Consecutive failures that give a nudge. Default 8; 2 to 100.
    pub streak_threshold: Option<u32>,
    /// Repetitions of a call or cycle that give a nudge. Default 3; 2 to 100.
    pub loop_nudge_threshold: Option<u32>,
    /// Repetitions of a call or cycle that give a stop. Default 5.
    pub loop_stop_threshold: Option<u32>,
    /// Tools the loop detector ignores.
    pub exempt_tools: Option<Vec<String>>,
    /// The tools the agent may call.
    pub available_tools: Option<Vec<String>>,
    /// Host classification rules, tried first.
    pub rules: Option<Vec<HostRule>>,
    /// Host templates.
    pub templates: Option<Vec<TemplateSource>>,
    /// Token budget of a rendered block. Default 500; 50 to 100000.
    pub token_budget: Option<u32>,
    /// Render `recent-failures` before the first compaction too. Default false.
    pub always_show_failures: Option<bool>,
    /// Output bytes kept. Default 65536; 1024 to 4194304.
    pub max_output_bytes: Option<u32>,
    /// Polling (the same call, its output changing) is flagged at this many
    /// times the loop thresholds. Default 10; 2 to 100.
    pub polling_factor: Option<u32>,
    /// Rounds of a cycle of 4 or more calls that give a nudge. Default 2;
    /// 2 to 100, at most `loop-nudge-threshold`.
    pub long_cycle_rounds: Option<u32>,
    /// Whether rounds whose calls differ in their details (numbers, long
    /// text) count as a cycle when each returns a result of the round
    /// before. Default true.
    pub coarse_cycles: Option<bool>,
    /// Calls of a round of 4 or more that may differ in a coarse cycle.
    /// Default 1; 0 to 3.
    pub coarse_cycle_mismatches: Option<u32>,
    /// Calls the no-progress detector looks back over. Default 20; 5 to 100.
    pub novelty_window: Option<u32>,
    /// Points over the window that give a nudge: 2 for each failure whose
    /// error was seen before, 1 for each result seen before. Default 7; 1 to
    /// twice `novelty-window`.
    pub novelty_nudge: Option<u32>,
    /// Points that give a stop, a window after the nudge; 0 never stops.
    /// Default 0 (on the labelled trajectories its stops were mostly wrong);
    /// else `novelty-nudge` to twice `novelty-window`.
    pub novelty_stop: Option<u32>,
    /// Points below which the agent is making progress again, and a new
    /// nudge may come before a window has passed. Default 2; less than
    /// `novelty-nudge`.
    pub novelty_recovered: Option<u32>,
    /// Fewer calls than this between two compactions make them a storm.
    /// Default 3; 1 to 100.
    pub storm_gap: Option<u32>,
    /// Compactions in a storm that give a nudge. Default 3; 2 to 100.
    pub storm_nudge: Option<u32>,
    /// Compactions in a storm that give a stop. Default 5; more than
    /// `storm-nudge`, at most 100.
    pub storm_stop: Option<u32>,
    /// Top-level argument fields that narrate a call rather than make it,
    /// dropped from the call's key, besides the built-in ones.
    pub bookkeeping_fields: Option<Vec<String>>,
}

/// A validated configuration with every default filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Tracked failures kept at once.
    pub max_failures: u32,
    /// Identical consecutive failures that trip the breaker.
    pub breaker_threshold: u32,
    /// Consecutive failures that give a nudge.
    pub streak_threshold: u32,
    /// Repetitions that give a loop nudge.
    pub loop_nudge_threshold: u32,
    /// Repetitions that give a loop stop.
    pub loop_stop_threshold: u32,
    /// Tools the loop detector ignores.
    pub exempt_tools: Vec<String>,
    /// The tools the agent may call, if the host said.
    pub available_tools: Option<Vec<String>>,
    /// Host rules.
    pub rules: Vec<HostRule>,
    /// Host templates.
    pub templates: Vec<TemplateSource>,
    /// Token budget.
    pub token_budget: u32,
    /// Whether recent failures show before the first compaction.
    pub always_show_failures: bool,
    /// Output bytes kept.
    pub max_output_bytes: usize,
    /// Polling is flagged at this many times the loop thresholds.
    pub polling_factor: u32,
    /// Rounds of a long cycle that give a nudge.
    pub long_cycle_rounds: u32,
    /// Whether coarse cycles count.
    pub coarse_cycles: bool,
    /// Calls of a long round that may differ in a coarse cycle.
    pub coarse_cycle_mismatches: u32,
    /// The no-progress window.
    pub novelty_window: u32,
    /// Seen results in the window that give a nudge.
    pub novelty_nudge: u32,
    /// Seen results in the window that give a stop.
    pub novelty_stop: u32,
    /// Seen results below which the agent progresses again.
    pub novelty_recovered: u32,
    /// Calls between compactions below which they are a storm.
    pub storm_gap: u32,
    /// Compactions in a storm that give a nudge.
    pub storm_nudge: u32,
    /// Compactions in a storm that give a stop.
    pub storm_stop: u32,
    /// Fields dropped from call keys: the built-in ones and the host's.
    pub bookkeeping_fields: Vec<String>,
}

impl Settings {
    /// The bookkeeping fields as string slices.
    pub fn bookkeeping(&self) -> Vec<&str> {
        self.bookkeeping_fields.iter().map(String::as_str).collect()
    }
}

fn ranged(field: &str, value: Option<u32>, default: u32, min: u32, max: u32) -> Result<u32, Error> {
    let v = value.unwrap_or(default);
    if (min..=max).contains(&v) {
        Ok(v)
    } else {
        Err(Error::InvalidConfig(format!(
            "{field} is {v}; it must be from {min} to {max} (default {default})"
        )))
    }
}

fn tool_list(field: &str, list: &Option<Vec<String>>) -> Result<Option<Vec<String>>, Error> {
    let Some(list) = list else { return Ok(None) };
    if list.len() > limits::MAX_TOOL_LIST {
        return Err(Error::InvalidConfig(format!(
            "{field} has {} names; at most {} are allowed",
            list.len(),
            limits::MAX_TOOL_LIST
        )));
    }
    for (i, name) in list.iter().enumerate() {
        if name.trim().is_empty() || name.len() > limits::MAX_TOOL_NAME_BYTES {
            return Err(Error::InvalidConfig(format!(
                "{field}[{i}] must be a tool name of 1 to {} bytes",
                limits::MAX_TOOL_NAME_BYTES
            )));
        }
    }
    Ok(Some(list.clone()))
}

/// Whether a rule id or template name is 1 to 64 of `a-z 0-9 - _ .`.
pub fn is_simple_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b))
}

impl Config {
    /// Checks every field and fills in the defaults. Host rules and templates
    /// are checked here only for shape; the classifier and the renderer
    /// compile them.
    pub fn resolve(&self) -> Result<Settings, Error> {
        let max_failures = ranged(
            "max-failures",
            self.max_failures,
            10,
            1,
            limits::MAX_TRACKED_FAILURES,
        )?;
        let breaker_threshold = ranged("breaker-threshold", self.breaker_threshold, 5, 2, 100)?;
        let streak_threshold = ranged("streak-threshold", self.streak_threshold, 8, 2, 100)?;
        let loop_nudge_threshold =
            ranged("loop-nudge-threshold", self.loop_nudge_threshold, 3, 2, 100)?;
        let loop_stop_threshold =
            ranged("loop-stop-threshold", self.loop_stop_threshold, 5, 3, 100)?;
        if loop_stop_threshold <= loop_nudge_threshold {
            return Err(Error::InvalidConfig(format!(
                "loop-stop-threshold ({loop_stop_threshold}) must be greater than loop-nudge-threshold ({loop_nudge_threshold})"
            )));
        }
        let exempt_tools = tool_list("exempt-tools", &self.exempt_tools)?.unwrap_or_default();
        let available_tools = tool_list("available-tools", &self.available_tools)?;
        let rules = self.rules.clone().unwrap_or_default();
        if rules.len() > limits::MAX_HOST_RULES {
            return Err(Error::InvalidConfig(format!(
                "rules has {} entries; at most {} are allowed",
                rules.len(),
                limits::MAX_HOST_RULES
            )));
        }
        for (i, r) in rules.iter().enumerate() {
            if !is_simple_name(&r.id) {
                return Err(Error::InvalidConfig(format!(
                    "rules[{i}].id {:?} must be 1 to 64 of a-z, 0-9, '-', '_' and '.'",
                    r.id
                )));
            }
        }
        let templates = self.templates.clone().unwrap_or_default();
        if templates.len() > limits::MAX_HOST_TEMPLATES {
            return Err(Error::InvalidConfig(format!(
                "templates has {} entries; at most {} are allowed",
                templates.len(),
                limits::MAX_HOST_TEMPLATES
            )));
        }
        for (i, t) in templates.iter().enumerate() {
            if !is_simple_name(&t.name) {
                return Err(Error::InvalidConfig(format!(
                    "templates[{i}].name {:?} must be 1 to 64 of a-z, 0-9, '-', '_' and '.'",
                    t.name
                )));
            }
            if t.source.len() > limits::MAX_TEMPLATE_SOURCE_BYTES {
                return Err(Error::InvalidConfig(format!(
                    "templates[{i}] ({}) is {} bytes; the limit is {}",
                    t.name,
                    t.source.len(),
                    limits::MAX_TEMPLATE_SOURCE_BYTES
                )));
            }
            if templates[..i].iter().any(|o| o.name == t.name) {
                return Err(Error::InvalidConfig(format!(
                    "templates[{i}]: the name {} is given twice",
                    t.name
                )));
            }
        }
        let token_budget = ranged(
            "token-budget",
            self.token_budget,
            500,
            limits::MIN_TOKEN_BUDGET,
            limits::MAX_TOKEN_BUDGET,
        )?;
        let max_output_bytes = ranged(
            "max-output-bytes",
            self.max_output_bytes,
            limits::DEFAULT_MAX_OUTPUT_BYTES as u32,
            limits::MIN_OUTPUT_BYTES as u32,
            limits::MAX_OUTPUT_BYTES as u32,
        )? as usize;
        let polling_factor = ranged("polling-factor", self.polling_factor, 10, 2, 100)?;
        let long_cycle_rounds = ranged(
            "long-cycle-rounds",
            self.long_cycle_rounds,
            2,
            2,
            loop_nudge_threshold,
        )?;
        let coarse_cycle_mismatches = ranged(
            "coarse-cycle-mismatches",
            self.coarse_cycle_mismatches,
            1,
            0,
            3,
        )?;
        let novelty_window = ranged(
            "novelty-window",
            self.novelty_window,
            limits::NOVELTY_WINDOW as u32,
            5,
            limits::MAX_NOVELTY_WINDOW as u32,
        )?;
        let novelty_nudge = ranged(
            "novelty-nudge",
            self.novelty_nudge,
            7,
            1,
            novelty_window * 2,
        )?;
        let novelty_stop = match self.novelty_stop {
            Some(0) | None => 0,
            stop => ranged("novelty-stop", stop, 0, novelty_nudge, novelty_window * 2)?,
        };
        let novelty_recovered = ranged(
            "novelty-recovered",
            self.novelty_recovered,
            2,
            0,
            novelty_nudge - 1,
        )?;
        let storm_gap = ranged("storm-gap", self.storm_gap, 3, 1, 100)?;
        let storm_nudge = ranged("storm-nudge", self.storm_nudge, 3, 2, 100)?;
        let storm_stop = ranged("storm-stop", self.storm_stop, 5, storm_nudge + 1, 100)?;
        let mut bookkeeping_fields: Vec<String> = crate::tools::BOOKKEEPING_FIELDS
            .iter()
            .map(|f| (*f).to_string())
            .collect();
        if let Some(extra) = &self.bookkeeping_fields {
            if extra.len() > limits::MAX_BOOKKEEPING_FIELDS {
                return Err(Error::InvalidConfig(format!(
                    "bookkeeping-fields has {} names; at most {} are allowed",
                    extra.len(),
                    limits::MAX_BOOKKEEPING_FIELDS
                )));
            }
            for (i, name) in extra.iter().enumerate() {
                if name.trim().is_empty() || name.len() > limits::MAX_FIELD_NAME_BYTES {
                    return Err(Error::InvalidConfig(format!(
                        "bookkeeping-fields[{i}] must be a field name of 1 to {} bytes",
                        limits::MAX_FIELD_NAME_BYTES
                    )));
                }
                if !bookkeeping_fields.contains(name) {
                    bookkeeping_fields.push(name.clone());
                }
            }
        }
        Ok(Settings {
            max_failures,
            breaker_threshold,
            streak_threshold,
            loop_nudge_threshold,
            loop_stop_threshold,
            exempt_tools,
            available_tools,
            rules,
            templates,
            token_budget,
            always_show_failures: self.always_show_failures.unwrap_or(false),
            max_output_bytes,
            polling_factor,
            long_cycle_rounds,
            coarse_cycles: self.coarse_cycles.unwrap_or(true),
            coarse_cycle_mismatches,
            novelty_window,
            novelty_nudge,
            novelty_stop,
            novelty_recovered,
            storm_gap,
            storm_nudge,
            storm_stop,
            bookkeeping_fields,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_documented_values() {
        let s = Config::default().resolve().unwrap();
        assert_eq!(
            (
                s.max_failures,
                s.breaker_threshold,
                s.streak_threshold,
                s.loop_nudge_threshold,
                s.loop_stop_threshold
            ),
            (10, 5, 8, 3, 5)
        );
        assert_eq!(s.token_budget, 500);
        assert_eq!(s.max_output_bytes, 65536);
        assert!(!s.always_show_failures);
        assert_eq!(
            (
                s.polling_factor,
                s.long_cycle_rounds,
                s.coarse_cycle_mismatches
            ),
            (10, 2, 1)
        );
        assert!(s.coarse_cycles);
        assert_eq!(
            (
                s.novelty_window,
                s.novelty_nudge,
                s.novelty_stop,
                s.novelty_recovered
            ),
            (20, 7, 0, 2)
        );
        assert_eq!((s.storm_gap, s.storm_nudge, s.storm_stop), (3, 3, 5));
        assert_eq!(
            s.bookkeeping_fields.len(),
            crate::tools::BOOKKEEPING_FIELDS.len()
        );
    }

    #[test]
    fn invalid_values_name_the_field() {
        let bad = [
            Config {
                max_failures: Some(0),
                ..Config::default()
            },
            Config {
                breaker_threshold: Some(1),
                ..Config::default()
            },
            Config {
                loop_nudge_threshold: Some(5),
                loop_stop_threshold: Some(5),
                ..Config::default()
            },
            Config {
                token_budget: Some(10),
                ..Config::default()
            },
            Config {
                exempt_tools: Some(vec![String::new()]),
                ..Config::default()
            },
            Config {
                long_cycle_rounds: Some(4),
                ..Config::default()
            },
            Config {
                novelty_window: Some(4),
                ..Config::default()
            },
            Config {
                novelty_stop: Some(3),
                ..Config::default()
            },
            Config {
                novelty_recovered: Some(7),
                ..Config::default()
            },
            Config {
                storm_stop: Some(3),
                ..Config::default()
            },
            Config {
                bookkeeping_fields: Some(vec![" ".into()]),
                ..Config::default()
            },
        ];
        let fields = [
            "max-failures",
            "breaker-threshold",
            "loop-stop-threshold",
            "token-budget",
            "exempt-tools",
            "long-cycle-rounds",
            "novelty-window",
            "novelty-stop",
            "novelty-recovered",
            "storm-stop",
            "bookkeeping-fields",
        ];
        for (config, field) in bad.iter().zip(fields) {
            match config.resolve() {
                Err(Error::InvalidConfig(m)) => assert!(m.contains(field), "{m}"),
                other => panic!("{field}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_host_extends_the_bookkeeping_fields() {
        let c = Config {
            bookkeeping_fields: Some(vec!["summary".into(), "reason".into()]),
            ..Config::default()
        };
        let s = c.resolve().unwrap();
        assert!(s.bookkeeping().contains(&"summary"));
        assert_eq!(
            s.bookkeeping_fields.len(),
            crate::tools::BOOKKEEPING_FIELDS.len() + 1
        );
    }

    #[test]
    fn json_uses_kebab_case_and_rejects_unknown_fields() {
        let c: Config =
            serde_json::from_str(r#"{"max-failures":3,"always-show-failures":true}"#).unwrap();
        assert_eq!(c.max_failures, Some(3));
        assert!(serde_json::from_str::<Config>(r#"{"max_failures":3}"#).is_err());
    }
}
