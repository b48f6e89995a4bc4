//! `faulty-grow` (test plugin): once `after` bursts have gone through, `wasmdp_on_burst` grows its
//! linear memory by 16 pages (1 MiB) at a time until `memory.grow` fails (the host's memory cap), logs
//! at level warn how far it got ("faulty-grow: memory.grow failed at N pages"), then traps
//! (`then: trap`, the default) or returns a failure (`then: error`, code -1).
//!
//! Params: `after` (default 0), `then` (`trap` | `error`). Bursts before run the `io` engine.
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::{log, Burst, Engine, Error, Params, Policy, Refusal, StackStr};

/// The policy.
pub struct FaultyGrow {
    after: u32,
    trap: bool,
    bursts: u32,
}

impl Policy for FaultyGrow {
    fn init(_port: u32, params: &Params) -> Result<Self, Refusal> {
        let mut buf = [0u8; 8];
        let trap = match params.get("then", &mut buf) {
            None | Some("trap") => true,
            Some("error") => false,
            Some(other) => return Err(Refusal::param("then", other, "trap|error")),
        };
        Ok(FaultyGrow { after: params.get_u32("after")?.unwrap_or(0), trap, bursts: 0 })
    }

    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
        if self.bursts < self.after {
            self.bursts += 1;
            return burst.run_engine(Engine::Io, ..);
        }
        let pages = grow_until_refused();
        let mut msg = StackStr::<96>::new();
        msg.push_str("faulty-grow: memory.grow failed at ").push_u64(pages as u64).push_str(" pages");
        log::warn(msg.as_str());
        if self.trap {
            #[cfg(target_arch = "wasm32")]
            core::arch::wasm32::unreachable();
        }
        Err(Error::Other(-1))
    }
}

/// Grows memory 0 by 16 pages at a time until it fails; returns its size in pages then.
#[cfg(target_arch = "wasm32")]
fn grow_until_refused() -> usize {
    use core::arch::wasm32::{memory_grow, memory_size};
    while memory_grow::<0>(16) != usize::MAX {}
    memory_size::<0>()
}

#[cfg(not(target_arch = "wasm32"))]
fn grow_until_refused() -> usize {
    0
}

wasmdp_sdk::export_policy!(FaultyGrow);
