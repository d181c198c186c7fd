//! The project memory through wasmtime: the retry round trip, two writers at
//! once, and a corrupt store.

use failmem_host::memory::MemoryStore;
use failmem_host::storage::Storage;
use failmem_host::{Failmem, default_component_path};
use std::path::{Path, PathBuf};
use std::process::Command;

fn temp_dir(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let dir = std::env::temp_dir().join(format!("failmem-{name}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn failmem_bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_failmem"));
    c.arg("--component").arg(default_component_path());
    c
}

fn trace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/traces/retry-task.jsonl")
}

#[test]
fn the_second_attempt_starts_with_the_first_attempts_lesson() {
    let dir = temp_dir("retry");
    let run = || {
        let out = failmem_bin()
            .arg("replay")
            .arg(trace())
            .arg("--memory")
            .arg(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let first = run();
    assert!(!first.contains("<previous_attempts>"), "{first}");
    assert!(first.contains("attempt recorded"));
    let second = run();
    assert!(second.contains("<previous_attempts>"), "{second}");
    assert!(second.contains("### Attempt 1 (failed)"));
    assert!(second.contains("**Why it failed:** chalk is not installed"));
    // The --json replay is unchanged by memory: one object per tool line.
    let json = failmem_bin()
        .arg("replay")
        .arg(trace())
        .arg("--json")
        .arg("--memory")
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(json.stdout).unwrap().lines().count(), 5);
    let list = failmem_bin()
        .args(["memory", "list", "--json", "--memory"])
        .arg(&dir)
        .output()
        .unwrap();
    let attempts: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(attempts.as_array().map(Vec::len), Some(3));
    let learnings = failmem_bin()
        .args(["memory", "learnings", "--json", "--memory"])
        .arg(&dir)
        .output()
        .unwrap();
    let learnings: serde_json::Value = serde_json::from_slice(&learnings.stdout).unwrap();
    assert!(
        learnings
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["evidence"].as_u64() >= Some(2)),
        "{learnings}"
    );
}

#[test]
fn two_concurrent_writers_lose_no_update() {
    let dir = temp_dir("writers");
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let dir = dir.clone();
            std::thread::spawn(move || {
                let failmem = Failmem::load(&default_component_path()).unwrap();
                let storage = Storage::new(&dir);
                for i in 0..15 {
                    storage
                        .update(&failmem, |store: &MemoryStore| {
                            store
                                .learn(
                                    &format!("lesson {w}-{i}"),
                                    None,
                                    failmem_host::storage::now_ms(),
                                )?
                                .map_err(anyhow::Error::from)?;
                            Ok(())
                        })
                        .unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let failmem = Failmem::load(&default_component_path()).unwrap();
    let store = Storage::new(&dir).load(&failmem).unwrap();
    let lessons = store.learnings(failmem_host::storage::now_ms()).unwrap();
    assert_eq!(lessons.len(), 30, "every update from both writers is kept");
    assert!(!dir.join("lock").exists(), "the lock is released");
}

#[test]
fn a_corrupt_store_is_reported_and_never_overwritten() {
    let dir = temp_dir("corrupt");
    let file = dir.join("memory.json");
    std::fs::write(
        &file,
        "{\"format\":\"failmem-memory\",\"version\":1,\"attempts\":[",
    )
    .unwrap();
    for args in [vec!["memory", "list"], vec!["memory", "learn", "use pnpm"]] {
        let out = failmem_bin()
            .args(&args)
            .arg("--memory")
            .arg(&dir)
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("unreadable") && err.contains("memory.json"),
            "{err}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "{\"format\":\"failmem-memory\",\"version\":1,\"attempts\":["
    );
    std::fs::write(
        &file,
        r#"{"format":"failmem-memory","version":99,"attempts":[],"learnings":[]}"#,
    )
    .unwrap();
    let out = failmem_bin()
        .args(["memory", "list", "--memory"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("version 99"));
}

#[test]
fn learn_clear_export_and_import() {
    let dir = temp_dir("cli");
    let run = |args: &[&str]| {
        let out = failmem_bin()
            .args(args)
            .arg("--memory")
            .arg(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(
        run(&[
            "memory",
            "learn",
            "always use pnpm, not npm",
            "--category",
            "missing-dependency"
        ])
        .contains("learned")
    );
    let export = run(&["memory", "export"]);
    let other = temp_dir("cli-other");
    let file = other.join("team.json");
    std::fs::write(&file, &export).unwrap();
    let out = failmem_bin()
        .args(["memory", "import"])
        .arg(&file)
        .arg("--memory")
        .arg(&other)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 learnings"));
    assert!(run(&["memory", "clear", "--json"]).contains("\"removed\":1"));
    assert!(run(&["memory", "learnings"]).contains("no learnings"));
}
