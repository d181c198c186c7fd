//! # failmem-host
//!
//! The wasmtime host of the failmem component: glue only. It loads
//! `failmem.wasm` (built by `cargo xtask build`), calls its `classifier` and
//! `tracker` exports through typed bindings generated from the repository's
//! `wit/`, and converts every result to canonical JSON (tests/README.md).
//!
//! ```no_run
//! use failmem_host::{Failmem, Session, input};
//!
//! # fn main() -> anyhow::Result<()> {
//! let failmem = Failmem::load_default()?;
//! let session = Session::create(&failmem, &input::default_config())??;
//! let outcome = input::outcome_from_json(&serde_json::json!({
//!     "tool": "bash", "args": {"command": "cargo build"},
//!     "output": "error[E0308]: mismatched types", "exit-code": 101
//! }))?;
//! let report = session.observe(&outcome)?;
//! println!("{}", failmem_host::to_json(&report));
//! # Ok(())
//! # }
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]

/// The bindings `wasmtime::component::bindgen!` generates from `wit/`
/// (world `engine`): the WIT types and the typed export functions.
#[allow(missing_docs)]
pub mod bindings {
    wasmtime::component::bindgen!({
        world: "engine",
        path: "../../wit",
    });
}

pub mod canonical;
pub mod engine;
pub mod input;
pub mod memory;
pub mod memory_cli;
pub mod replay;
pub mod resilient;
pub mod storage;
pub mod trace;
pub mod vectors;

pub use canonical::{Canonical, ToCanonical};
pub use engine::{
    COMPONENT_ENV, Failmem, GuestError, Payload, Session, default_component_path, workspace_root,
};

/// Every WIT type of the engine world under one name.
pub mod wit {
    pub use crate::bindings::exports::failmem::core::classifier::RuleInfo;
    pub use crate::bindings::exports::failmem::core::tracker::{
        Action, CategoryCount, Config, Event, EventKind, FailureRecord, HostRule, Ledger, Pattern,
        PatternKind, RenderOptions, Stats, StepReport, TemplateSource, Verdict,
    };
    pub use crate::bindings::exports::failmem::core::types::{
        Category, Classification, Error, ToolOutcome,
    };
}

/// The canonical JSON text of a WIT value.
pub fn to_json<T: ToCanonical + ?Sized>(value: &T) -> String {
    value.to_canonical().to_string()
}
