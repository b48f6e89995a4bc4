//! `faulty-bad-import` (test plugin): imports `wasmdp::format_disk`, which the host does not provide,
//! so the module cannot be instantiated (the host refuses it at load, naming the import).
//!
//! Otherwise a normal policy: `on_burst` calls the import, then runs `io`.
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::{Burst, Engine, Error, Params, Policy, Refusal};

#[cfg(target_arch = "wasm32")]
#[link(wasm_import_module = "wasmdp")]
unsafe extern "C" {
    /// Not part of the ABI.
    fn format_disk(force: i32) -> i32;
}

/// The policy.
pub struct FaultyBadImport;

impl Policy for FaultyBadImport {
    fn init(_port: u32, _params: &Params) -> Result<Self, Refusal> {
        Ok(FaultyBadImport)
    }

    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
        #[cfg(target_arch = "wasm32")]
        // SAFETY: scalar argument; a host that does provide it is on its own.
        Error::check(unsafe { format_disk(1) })?;
        burst.run_engine(Engine::Io, ..)
    }
}

wasmdp_sdk::export_policy!(FaultyBadImport);
