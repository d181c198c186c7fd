//! A smoke run of the benchmark on a tiny workload: native and wasmtime run
//! the same events and render the same bytes. Skips the wasmtime half when
//! the component is not built (`cargo xtask build`).

use failmem_bench::{Event, Load, Native, Wasm, component, parse_workload, run_once, run_steps};
use failmem_host::default_component_path;

const TINY: &str = r#"{"type":"turn"}
{"type":"tool","tool":"bash","args":{"command":"cargo build"},"output":"error[E0308]: mismatched types\n --> src/main.rs:4:18","exit_code":101}
{"type":"tool","tool":"Read","args":{"file_path":"src/main.rs"},"output":"fn main() {}","is_error":false}
{"type":"compaction"}
{"type":"tool","tool":"bash","args":{"command":"pytest"},"output":"ModuleNotFoundError: No module named 'notes'","exit_code":1}
{"type":"tool","tool":"bash","args":{"command":"pytest"},"output":"ModuleNotFoundError: No module named 'notes'","exit_code":1}
"#;

fn events() -> Vec<Event> {
    parse_workload(TINY).expect("the tiny workload parses")
}

#[test]
fn native_runs_the_tiny_workload() {
    let events = events();
    let mut native = Native::new(&events);
    let (_, bytes) = run_once(&mut native).expect("native run");
    assert!(bytes > 0, "something was rendered");
    run_steps(&mut native, &events, 10).expect("10 steps, cycling");
}

#[test]
fn wasmtime_renders_the_same_bytes_as_native() {
    let path = default_component_path();
    if !path.is_file() {
        eprintln!("skipped: no component at {}", path.display());
        return;
    }
    let events = events();
    let engine = wasmtime::Engine::default();
    let c = component(&engine, Load::Compile(&path)).expect("compile");
    let mut wasm = Wasm::new(&engine, &c, &events).expect("instantiate");
    let (_, wasm_bytes) = run_once(&mut wasm).expect("wasmtime run");
    let (_, native_bytes) = run_once(&mut Native::new(&events)).expect("native run");
    assert_eq!(wasm_bytes, native_bytes);
}
