//! failmem's build and test driver. Run it as `cargo xtask <command>`:
//!
//! - `build`: install the wasm32 target if it is missing, compile the core
//!   for `wasm32-unknown-unknown` with the `component` profile, and encode
//!   it as a component with no imports at `target/component/failmem.wasm`.
//! - `demo`: `build`, then replay the sample trace through the wasmtime host.
//! - `test`: `build`, then every test in every host.
//! - `lint`: rustfmt and clippy with warnings denied.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

const WASM_TARGET: &str = "wasm32-unknown-unknown";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    c
}

fn run(mut cmd: Command, what: &str) -> Result<()> {
    eprintln!("xtask: {what}");
    let status = cmd.status().with_context(|| format!("starting: {what}"))?;
    if !status.success() {
        bail!("failed ({status}): {what}");
    }
    Ok(())
}

/// Installs the wasm target through rustup when it is missing.
fn ensure_target() -> Result<()> {
    let out = Command::new("rustc").args(["--print", "target-libdir", "--target", WASM_TARGET]).output();
    if let Ok(out) = out
        && out.status.success()
    {
        let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if Path::new(&dir).join("libcore").exists() || std::fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_some()) {
            return Ok(());
        }
    }
    let mut cmd = Command::new("rustup");
    cmd.args(["target", "add", WASM_TARGET]);
    run(cmd, "rustup target add wasm32-unknown-unknown").context("the wasm32 target is needed; install rustup or add the target by hand")
}

/// Builds the component; returns its path.
fn build() -> Result<PathBuf> {
    ensure_target()?;
    let mut cmd = cargo();
    cmd.args(["build", "--quiet", "--package", "failmem", "--lib", "--target", WASM_TARGET, "--profile", "component"]);
    run(cmd, "cargo build --target wasm32-unknown-unknown --profile component (the core)")?;
    let target_dir = root().join("target");
    let module_path = target_dir.join(WASM_TARGET).join("component").join("failmem.wasm");
    let module = std::fs::read(&module_path).with_context(|| format!("reading {}", module_path.display()))?;
    let component = wit_component::ComponentEncoder::default()
        .module(&module)
        .context("reading the core module's component-type section")?
        .validate(true)
        .encode()
        .context("encoding the component")?;
    let out_dir = target_dir.join("component");
    std::fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let out = out_dir.join("failmem.wasm");
    let tmp = out_dir.join("failmem.wasm.tmp");
    std::fs::write(&tmp, &component).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &out).with_context(|| format!("renaming to {}", out.display()))?;
    eprintln!("xtask: component: {} ({} bytes)", out.display(), component.len());
    Ok(out)
}

fn demo() -> Result<()> {
    build()?;
    let mut cmd = cargo();
    cmd.args(["run", "--quiet", "--release", "--package", "failmem-host", "--bin", "failmem", "--", "replay", "tests/traces/sample.jsonl"]);
    run(cmd, "failmem replay tests/traces/sample.jsonl")
}

fn test() -> Result<()> {
    build()?;
    let mut cmd = cargo();
    cmd.args(["test", "--release", "--workspace", "--exclude", "xtask"]);
    run(cmd, "cargo test --release --workspace (the core natively, and the conformance vectors through wasmtime)")?;
    Ok(())
}

fn lint() -> Result<()> {
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--check"]);
    run(fmt, "cargo fmt --check")?;
    let mut clippy = cargo();
    clippy.args(["clippy", "--release", "--workspace", "--all-targets", "--", "-D", "warnings"]);
    run(clippy, "cargo clippy -D warnings")?;
    build()?;
    let mut wasm_clippy = cargo();
    wasm_clippy.args(["clippy", "--package", "failmem", "--target", WASM_TARGET, "--profile", "component", "--", "-D", "warnings"]);
    run(wasm_clippy, "cargo clippy -D warnings (wasm32 glue)")
}

fn main() -> Result<()> {
    let command = std::env::args().nth(1).unwrap_or_default();
    match command.as_str() {
        "build" => build().map(|p| println!("{}", p.display())),
        "demo" => demo(),
        "test" => test(),
        "lint" => lint(),
        _ => bail!("usage: cargo xtask <build|demo|test|lint>\n  build  the component, at target/component/failmem.wasm\n  demo   build, then replay the sample trace through the wasmtime host\n  test   build, then run every test in every host\n  lint   rustfmt and clippy, warnings denied"),
    }
}
