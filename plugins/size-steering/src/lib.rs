//! `size-steering`: one engine for small packets, another for large ones.
//!
//! Params (all optional):
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `threshold` | 256 | bytes: a packet shorter than this is small, one of this length or longer large |
//! | `small_engine` | `macswap` | engine for small packets |
//! | `large_engine` | `io` | engine for large packets |
//!
//! Per burst: `pkt_len` of every packet, then one `run_engine` per run of consecutive packets of the
//! same class (in order), so a burst of one class is a single call. Counters `small` and `large`
//! count the packets of each class.
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::{Burst, Counter, Engine, Error, Params, Policy, Refusal};

/// The policy.
pub struct SizeSteering {
    threshold: u32,
    small_engine: Engine,
    large_engine: Engine,
    small: Counter,
    large: Counter,
}

impl Policy for SizeSteering {
    fn init(_port: u32, params: &Params) -> Result<Self, Refusal> {
        Ok(SizeSteering {
            threshold: params.get_u32("threshold")?.unwrap_or(256),
            small_engine: params.get_engine("small_engine")?.unwrap_or(Engine::Macswap),
            large_engine: params.get_engine("large_engine")?.unwrap_or(Engine::Io),
            small: Counter::register("small")?,
            large: Counter::register("large")?,
        })
    }

    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
        let (mut small, mut large) = (0u64, 0u64);
        // The current run: its first packet and whether it is of small packets.
        let mut run: Option<(u32, bool)> = None;
        for p in burst.packets() {
            let is_small = p.len()? < self.threshold;
            if is_small {
                small += 1;
            } else {
                large += 1;
            }
            match run {
                Some((_, class)) if class == is_small => {}
                Some((start, class)) => {
                    burst.run_engine(self.engine_for(class), start..p.index())?;
                    run = Some((p.index(), is_small));
                }
                None => run = Some((p.index(), is_small)),
            }
        }
        if let Some((start, class)) = run {
            burst.run_engine(self.engine_for(class), start..)?;
        }
        if small > 0 {
            self.small.add(small);
        }
        if large > 0 {
            self.large.add(large);
        }
        Ok(())
    }
}

impl SizeSteering {
    fn engine_for(&self, small: bool) -> Engine {
        if small {
            self.small_engine
        } else {
            self.large_engine
        }
    }
}

wasmdp_sdk::export_policy!(SizeSteering);

#[cfg(test)]
mod tests {
    use super::*;
    use wasmdp_sdk::abi::engine;
    use wasmdp_sdk::mock::{self, Call};

    #[test]
    fn runs_of_each_class() {
        mock::reset();
        mock::set_param("threshold", "100");
        mock::set_param("large_engine", "5tswap");
        let mut p = SizeSteering::init(0, &Params::host()).unwrap();
        let (s, l) = ([0u8; 99], [0u8; 100]);
        mock::begin_burst(&[&s, &s, &l, &l, &l, &s, &l]);
        p.on_burst(&mut Burst::current().unwrap()).unwrap();
        let calls = mock::with(|h| h.calls.clone());
        let run = |engine, start, count| Call::RunEngine { engine, start, count };
        assert_eq!(
            calls,
            [
                run(engine::MACSWAP, 0, 2),
                run(engine::FIVETSWAP, 2, 3),
                run(engine::MACSWAP, 5, 1),
                run(engine::FIVETSWAP, 6, 1)
            ]
        );
        assert_eq!((mock::counter("small"), mock::counter("large")), (Some(3), Some(4)));

        // One class: one call. Empty burst: none.
        mock::begin_burst(&[&l, &l]);
        p.on_burst(&mut Burst::current().unwrap()).unwrap();
        assert_eq!(mock::with(|h| h.calls.clone()), [run(engine::FIVETSWAP, 0, 2)]);
        mock::begin_burst(&[]);
        p.on_burst(&mut Burst::current().unwrap()).unwrap();
        assert!(mock::with(|h| h.calls.is_empty()));
        assert_eq!((mock::counter("small"), mock::counter("large")), (Some(3), Some(6)));
    }

    #[test]
    fn defaults_and_refusal() {
        mock::reset();
        let p = SizeSteering::init(0, &Params::host()).unwrap();
        assert_eq!((p.threshold, p.small_engine, p.large_engine), (256, Engine::Macswap, Engine::Io));
        mock::set_param("threshold", "big");
        assert_eq!(
            SizeSteering::init(0, &Params::host()).err().unwrap().reason(),
            "param `threshold`: `big` is not a number 0..=4294967295"
        );
    }
}
