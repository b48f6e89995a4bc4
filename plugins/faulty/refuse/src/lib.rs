//! `faulty-refuse` (test plugin): refuses its configuration unless param `engine` is given:
//! `wasmdp_init` logs "param `engine` missing" at level error and returns nonzero. With `engine`
//! (`io|mac|macswap|5tswap|copy|drop`) it accepts and runs that engine on every burst.
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::{Burst, Engine, Error, Params, Policy, Refusal};

/// The policy.
pub struct FaultyRefuse {
    engine: Engine,
}

impl Policy for FaultyRefuse {
    fn init(_port: u32, params: &Params) -> Result<Self, Refusal> {
        let engine = params.get_engine("engine")?.ok_or_else(|| Refusal::missing("engine"))?;
        Ok(FaultyRefuse { engine })
    }

    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
        burst.run_engine(self.engine, ..)
    }
}

wasmdp_sdk::export_policy!(FaultyRefuse);

#[cfg(test)]
mod tests {
    use super::*;
    use wasmdp_sdk::mock;

    #[test]
    fn refuses_without_engine() {
        mock::reset();
        assert_eq!(FaultyRefuse::init(0, &Params::host()).err().unwrap().reason(), "param `engine` missing");
        mock::set_param("engine", "copy");
        assert_eq!(FaultyRefuse::init(0, &Params::host()).unwrap().engine, Engine::Copy);
    }
}
