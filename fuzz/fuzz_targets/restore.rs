//! Fuzz target `restore`: see `harness::restore`.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::restore(data));
