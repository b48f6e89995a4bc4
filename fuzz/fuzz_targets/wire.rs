//! Fuzz target: see `wasmdp::fuzzing::wire`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wasmdp::fuzzing::wire(data));
