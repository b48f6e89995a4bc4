//! `faulty-loop` (test plugin): once `after` bursts have gone through, `wasmdp_on_burst` loops forever
//! (pure WebAssembly, no host call: only the host's deadline, epoch interruption, ends it).
//!
//! Params: `after` (default 0: the first burst loops). Bursts before run the `io` engine.
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::{Burst, Engine, Error, Params, Policy, Refusal};

/// The policy.
pub struct FaultyLoop {
    after: u32,
    bursts: u32,
}

impl Policy for FaultyLoop {
    fn init(_port: u32, params: &Params) -> Result<Self, Refusal> {
        Ok(FaultyLoop { after: params.get_u32("after")?.unwrap_or(0), bursts: 0 })
    }

    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
        if self.bursts >= self.after {
            let mut spins = 0u64;
            loop {
                // Opaque to the optimizer, so the loop stays a loop with a body.
                spins = core::hint::black_box(spins.wrapping_add(1));
            }
        }
        self.bursts += 1;
        burst.run_engine(Engine::Io, ..)
    }
}

wasmdp_sdk::export_policy!(FaultyLoop);
