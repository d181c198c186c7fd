//! Fuzz target `render_template`: see `harness::render_template`.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::render_template(data));
