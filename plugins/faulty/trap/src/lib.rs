//! `faulty-trap` (test plugin): traps (`unreachable`) once `after` bursts have gone through.
//!
//! Params: `after` (default 0: the first burst traps) and `at` (default `burst`): `burst` traps in
//! `wasmdp_on_burst` after `after` successful bursts (each runs the `io` engine); `init` traps in
//! `wasmdp_init`; `tick` traps in the first `wasmdp_tick` once `after` bursts went through.
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::{Burst, Engine, Error, Params, Policy, Refusal};

/// Where the trap happens.
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    Init,
    Burst,
    Tick,
}

/// The policy.
pub struct FaultyTrap {
    after: u32,
    at: At,
    bursts: u32,
}

impl Policy for FaultyTrap {
    fn init(_port: u32, params: &Params) -> Result<Self, Refusal> {
        let after = params.get_u32("after")?.unwrap_or(0);
        let mut buf = [0u8; 8];
        let at = match params.get("at", &mut buf) {
            None | Some("burst") => At::Burst,
            Some("init") => At::Init,
            Some("tick") => At::Tick,
            Some(other) => return Err(Refusal::param("at", other, "init|burst|tick")),
        };
        if at == At::Init {
            trap();
        }
        Ok(FaultyTrap { after, at, bursts: 0 })
    }

    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
        if self.at == At::Burst && self.bursts >= self.after {
            trap();
        }
        self.bursts = self.bursts.saturating_add(1);
        burst.run_engine(Engine::Io, ..)
    }

    fn tick(&mut self, _now_ns: u64) {
        if self.at == At::Tick && self.bursts >= self.after {
            trap();
        }
    }
}

wasmdp_sdk::export_policy!(FaultyTrap);

/// A WebAssembly trap.
fn trap() -> ! {
    #[cfg(target_arch = "wasm32")]
    core::arch::wasm32::unreachable();
    #[cfg(not(target_arch = "wasm32"))]
    panic!("faulty-trap: trap");
}
