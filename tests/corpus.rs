//! Classifier accuracy on `tests/corpus/`: real outputs of real tools, each
//! labelled with the category a person gave it.
//!
//! The bar: at least 90% of cases get the labelled category (or "none"), and
//! at most 2% of successful outcomes are called failures.

use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
struct Case {
    id: String,
    tool: String,
    #[serde(default)]
    args: serde_json::Value,
    #[serde(default)]
    output: String,
    exit_code: Option<i32>,
    is_error: Option<bool>,
    expect: String,
}

fn cases() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/corpus")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        for (i, line) in std::fs::read_to_string(&f).unwrap().lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let case: Case = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", f.display(), i + 1));
            out.push(case);
        }
    }
    out
}

#[test]
fn classifier_accuracy_on_real_outputs() {
    let cases = cases();
    assert!(
        cases.len() >= 300,
        "the corpus has only {} cases",
        cases.len()
    );
    let (mut right, mut successes, mut false_failures) = (0, 0, 0);
    let mut misses = Vec::new();
    for c in &cases {
        let args = match &c.args {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Null => String::new(),
            v => v.to_string(),
        };
        let got = failmem::classify(&failmem::ToolOutcome {
            tool: c.tool.clone(),
            args,
            output: c.output.clone(),
            exit_code: c.exit_code,
            is_error: c.is_error,
        });
        let name = got.category.map_or("none", |c| c.name());
        if c.expect == "none" {
            successes += 1;
            if name != "none" {
                false_failures += 1;
            }
        }
        if name == c.expect {
            right += 1;
        } else {
            misses.push(format!(
                "{:<34} want {:<18} got {:<18} {} | {}",
                c.id, c.expect, name, got.rule, got.description
            ));
        }
    }
    let accuracy = right as f64 / cases.len() as f64;
    let false_rate = false_failures as f64 / successes.max(1) as f64;
    eprintln!(
        "accuracy {right}/{} = {:.1}%; successes called failures {false_failures}/{successes} = {:.1}%",
        cases.len(),
        accuracy * 100.0,
        false_rate * 100.0
    );
    eprintln!("misses:\n{}", misses.join("\n"));
    assert!(
        accuracy >= 0.90,
        "accuracy {:.1}% is under 90%",
        accuracy * 100.0
    );
    assert!(
        false_rate <= 0.02,
        "{:.1}% of successes were called failures",
        false_rate * 100.0
    );
}
