//! The detector's figures on labelled real trajectories (issue 15).
//!
//! Reads every set under `$FAILMEM_TRAJECTORIES` (default
//! `<repo>/../shared/trajectories`): a set is a directory with
//! `labels.jsonl` (one labelled run per line: `file`, `stuck`, `stuck_from`,
//! `stuck_kind`) and the files it names under `raw/`. Each run is replayed
//! through a session with the default config, straight from its saved
//! format. A stuck run is caught when a nudge or a stop comes within 10 tool
//! calls of `stuck_from`; a run that is not stuck should get neither. Calls
//! are numbered as the label numbers them: replies with no tool call (a
//! SWE-agent step with an empty action) are left out, unless the label's own
//! `tool_calls` total shows it counted them (blind set 3's SWE-agent labels
//! count every trajectory step, as its instructions then said), and so are
//! Codex's web searches, which the labels' counting rule leaves out. The
//! floors in `conformance/trajectories/figures.json` are held per set, with
//! the files a set may hold that the importers refuse (`max-unreadable`,
//! default 0).
//! `FAILMEM_TRAJECTORIES_VERBOSE=1` prints every run.
//!
//! The raw trajectories are not in this repository (see
//! docs/research/trajectories/README.md; `tools/trajectories/restore.py`
//! rebuilds them from their public sources); without them the test says so
//! and checks nothing.

use failmem::{Config, ReplayOptions};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Calls after `stuck_from` within which a nudge or stop counts as caught.
const WINDOW: u64 = 10;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A nudge or a stop: the tool call it came at (a reply with no tool call
/// counts as the call after it, as the labels count calls), the step it came
/// at when replies with no tool call are counted too, the verdict and its
/// reason.
struct Flag {
    call: u64,
    step: u64,
    verdict: String,
    reason: String,
}

/// What a replay gives the scoring: its flags, its tool calls, and its steps
/// (tool calls and replies with no tool call).
struct Replayed {
    flags: Vec<Flag>,
    calls: u64,
    steps: u64,
}

impl Replayed {
    /// Numbers the flags and the total as the label counts: by steps when
    /// the label's `tool_calls` is nearer the number of steps than the
    /// number of tool calls.
    fn numbered_as(mut self, label: &Value) -> (Vec<Flag>, u64) {
        let counts_steps = label["tool_calls"]
            .as_u64()
            .is_some_and(|n| n.abs_diff(self.steps) < n.abs_diff(self.calls));
        if !counts_steps {
            return (self.flags, self.calls);
        }
        for flag in &mut self.flags {
            flag.call = flag.step;
        }
        (self.flags, self.steps)
    }
}

/// The config runs are replayed with: the default, or
/// `$FAILMEM_TRAJECTORIES_CONFIG` (a config as JSON) to try other thresholds.
fn config() -> Config {
    std::env::var("FAILMEM_TRAJECTORIES_CONFIG")
        .map(|json| serde_json::from_str(&json).expect("FAILMEM_TRAJECTORIES_CONFIG is a config"))
        .unwrap_or_default()
}

/// The nudges and stops of a replay, and how many calls and steps it made.
fn flagged(text: &str) -> Result<Replayed, String> {
    let out = failmem::replay(
        config(),
        text,
        ReplayOptions {
            json: true,
            format: None,
        },
        None,
    )
    .map_err(|e| e.to_string())?;
    let mut flags = Vec::new();
    let mut calls = 0;
    let mut steps = 0;
    for line in out.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
        if v["step"].as_u64().is_none() {
            continue;
        }
        // Codex's built-in web searches are calls to the detector, but the
        // labels count only function, custom-tool and local-shell calls.
        let tool = v["tool"].as_str().unwrap_or("");
        let is_call = !tool.is_empty() && tool != "web_search";
        calls += u64::from(is_call);
        steps += 1;
        let verdict = v["verdict"].as_str().unwrap_or("");
        if verdict == "nudge" || verdict == "stop" {
            flags.push(Flag {
                call: if is_call { calls } else { calls + 1 },
                step: steps,
                verdict: verdict.to_string(),
                reason: v["reason"].as_str().unwrap_or("").to_string(),
            });
        }
    }
    Ok(Replayed {
        flags,
        calls,
        steps,
    })
}

#[derive(Debug, Default)]
struct Figures {
    stuck: u32,
    caught: u32,
    calm: u32,
    calm_stopped: u32,
    calm_nudged: u32,
    errors: u32,
}

impl Figures {
    fn pct(n: u32, d: u32) -> f64 {
        if d == 0 {
            0.0
        } else {
            100.0 * f64::from(n) / f64::from(d)
        }
    }
}

fn score(set: &Path, verbose: bool) -> Figures {
    let labels = std::fs::read_to_string(set.join("labels.jsonl")).expect("labels.jsonl");
    let mut f = Figures::default();
    for line in labels.lines().filter(|l| !l.trim().is_empty()) {
        let label: Value = serde_json::from_str(line).expect("a label line");
        let file = label["file"].as_str().expect("file");
        let bytes = std::fs::read(set.join("raw").join(file)).expect("a labelled file");
        let text = String::from_utf8_lossy(&bytes);
        let stuck = label["stuck"].as_bool().unwrap_or(false);
        let (flags, steps) = match flagged(&text) {
            Ok(r) => r.numbered_as(&label),
            Err(e) => {
                f.errors += 1;
                println!("  {file}: error: {e}");
                continue;
            }
        };
        let first_stop = flags.iter().find(|f| f.verdict == "stop").map(|f| f.call);
        let verdict = if stuck {
            f.stuck += 1;
            let from = label["stuck_from"].as_u64().unwrap_or(1);
            let caught = flags
                .iter()
                .any(|f| (from..=from + WINDOW).contains(&f.call));
            f.caught += u32::from(caught);
            if caught { "caught" } else { "MISSED" }
        } else {
            f.calm += 1;
            f.calm_stopped += u32::from(first_stop.is_some());
            f.calm_nudged += u32::from(!flags.is_empty());
            match (first_stop, flags.is_empty()) {
                (Some(_), _) => "FALSE STOP",
                (None, false) => "false nudge",
                (None, true) => "quiet",
            }
        };
        if verbose {
            let shown: Vec<String> = flags
                .iter()
                .take(4)
                .map(|f| format!("{}@{}", f.verdict, f.call))
                .collect();
            println!(
                "  {verdict:11} {file:70.70} kind={:14} from={:>4} calls={steps:>4} flags={} {}",
                label["stuck_kind"].as_str().unwrap_or("-"),
                label["stuck_from"]
                    .as_u64()
                    .map_or("-".to_string(), |n| n.to_string()),
                shown.join(","),
                flags.first().map_or("", |f| f.reason.as_str()),
            );
        }
    }
    f
}

#[test]
fn detector_figures_on_labelled_trajectories() {
    let root = std::env::var_os("FAILMEM_TRAJECTORIES")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("../shared/trajectories"));
    if !root.is_dir() {
        println!(
            "skipped: no labelled trajectories at {} (set FAILMEM_TRAJECTORIES)",
            root.display()
        );
        return;
    }
    let floors: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("conformance/trajectories/figures.json"))
            .expect("figures.json"),
    )
    .expect("figures.json is JSON");
    let verbose = std::env::var_os("FAILMEM_TRAJECTORIES_VERBOSE").is_some();
    let mut sets: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("the trajectories directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("labels.jsonl").is_file())
        .collect();
    sets.sort();
    let mut failures = Vec::new();
    for set in sets {
        let name = set.file_name().unwrap().to_string_lossy().to_string();
        let f = score(&set, verbose);
        let caught = Figures::pct(f.caught, f.stuck);
        let stopped = Figures::pct(f.calm_stopped, f.calm);
        let nudged = Figures::pct(f.calm_nudged, f.calm);
        println!(
            "{name}: stuck runs caught within {WINDOW} calls {}/{} = {caught:.1}%; runs not stuck with a stop {}/{} = {stopped:.1}%, with a nudge or a stop {}/{} = {nudged:.1}%; unreadable {}",
            f.caught, f.stuck, f.calm_stopped, f.calm, f.calm_nudged, f.calm, f.errors
        );
        let floor = &floors[&name];
        if floor.is_null() {
            continue;
        }
        let min_caught = floor["min-caught-percent"].as_f64().unwrap_or(0.0);
        let max_stopped = floor["max-false-stop-percent"].as_f64().unwrap_or(100.0);
        let max_nudged = floor["max-false-nudge-percent"].as_f64().unwrap_or(100.0);
        // Files the importers refuse on purpose (another agent's syntax in a
        // known file format): a set says how many it holds, else none.
        let max_unreadable = floor["max-unreadable"].as_u64().unwrap_or(0);
        if caught < min_caught
            || stopped > max_stopped
            || nudged > max_nudged
            || u64::from(f.errors) > max_unreadable
        {
            failures.push(format!(
                "{name}: caught {caught:.1}% (floor {min_caught}), false stops {stopped:.1}% (max {max_stopped}), false nudges {nudged:.1}% (max {max_nudged}), unreadable {}",
                f.errors
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
