//! Fuzz target: see `wasmdp::fuzzing::config`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wasmdp::fuzzing::config(data));
