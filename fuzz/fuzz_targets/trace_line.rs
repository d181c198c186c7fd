//! Fuzz target `trace_line`: see `harness::trace_line`.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::trace_line(data));
