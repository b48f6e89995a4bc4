//! `faulty-abi-v9` (test plugin): `wasmdp_abi_version` returns `9 << 16` (ABI 9.0), a major version the
//! host does not implement, so it refuses the module at load. Otherwise complete: `wasmdp_init`
//! accepts, `wasmdp_on_burst` runs `io` (exports written by hand, without `export_policy!`).
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::{sys, Engine};

/// ABI 9.0.
#[unsafe(no_mangle)]
pub extern "C" fn wasmdp_abi_version() -> i32 {
    9 << 16
}

/// Accepts any configuration.
#[unsafe(no_mangle)]
pub extern "C" fn wasmdp_init(_port: i32, _instance: i32) -> i32 {
    0
}

/// Runs `io` on the burst.
#[unsafe(no_mangle)]
pub extern "C" fn wasmdp_on_burst(_port: i32, burst_len: i32) -> i32 {
    match sys::run_engine(Engine::Io.id(), 0, burst_len.max(0) as u32) {
        Ok(_) => 0,
        Err(e) => e.code(),
    }
}
