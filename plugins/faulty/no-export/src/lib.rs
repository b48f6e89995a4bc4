//! `faulty-no-export` (test plugin): exports `wasmdp_abi_version`, `wasmdp_init` and `wasmdp_tick`, but
//! no `wasmdp_on_burst` (the exports are written by hand, without `export_policy!`). The host refuses
//! it at load, naming the missing export.
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::{log, ABI_VERSION};

/// The ABI version.
#[unsafe(no_mangle)]
pub extern "C" fn wasmdp_abi_version() -> i32 {
    ABI_VERSION as i32
}

/// Accepts any configuration.
#[unsafe(no_mangle)]
pub extern "C" fn wasmdp_init(_port: i32, _instance: i32) -> i32 {
    log::info("faulty-no-export: init");
    0
}

/// Does nothing.
#[unsafe(no_mangle)]
pub extern "C" fn wasmdp_tick(_now_ns: i64) {}
