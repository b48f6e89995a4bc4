//! Fuzz target: see `wasmdp::fuzzing::capture`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wasmdp::fuzzing::capture(data));
