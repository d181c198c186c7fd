//! Fuzz target `session_ops`: see `harness::session_ops`.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::session_ops(data));
