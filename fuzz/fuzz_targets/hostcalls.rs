//! Fuzz target: see `wasmdp::fuzzing::hostcalls`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    wasmdp::fuzzing::hostcalls(data);
});
