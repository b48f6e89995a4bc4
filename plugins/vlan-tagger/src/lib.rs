//! `vlan-tagger`: runs an engine, then requests VLAN (802.1Q) or QinQ (802.1ad + 802.1Q) tag insertion
//! with fixed TCIs for every packet.
//!
//! Params:
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `mode` | `vlan` | `vlan`: one 802.1Q tag; `qinq`: an 802.1ad outer tag and an 802.1Q inner tag |
//! | `vlan` | required | TCI of the 802.1Q tag (the inner one with `qinq`), 0..=65535 |
//! | `vlan_outer` | required with `qinq` | TCI of the outer tag |
//! | `engine` | `io` | engine run before tagging |
//!
//! Per burst: `run_engine(engine, 0, n)`, then `set_offloads(ALL, TX_VLAN, vlan, 0)` or
//! `set_offloads(ALL, TX_QINQ, vlan, vlan_outer)`.
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::{Burst, Engine, Error, Offloads, Params, Policy, Refusal};

/// The policy.
pub struct VlanTagger {
    engine: Engine,
    offloads: Offloads,
}

impl Policy for VlanTagger {
    fn init(_port: u32, params: &Params) -> Result<Self, Refusal> {
        let mut buf = [0u8; 16];
        let qinq = match params.try_get("mode", &mut buf) {
            Ok(None | Some("vlan")) => false,
            Ok(Some("qinq")) => true,
            Ok(Some(other)) => return Err(Refusal::param("mode", other, "vlan|qinq")),
            Err(_) => return Err(Refusal::param("mode", "(too long)", "vlan|qinq")),
        };
        let vlan = params.get_u16("vlan")?.ok_or_else(|| Refusal::missing("vlan"))?;
        let offloads = if qinq {
            let outer = params.get_u16("vlan_outer")?.ok_or_else(|| Refusal::missing("vlan_outer"))?;
            Offloads::new().qinq(outer, vlan)
        } else {
            Offloads::new().vlan(vlan)
        };
        let engine = params.get_engine("engine")?.unwrap_or(Engine::Io);
        Ok(VlanTagger { engine, offloads })
    }

    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
        burst.run_engine(self.engine, ..)?;
        burst.set_offloads(self.offloads)
    }
}

wasmdp_sdk::export_policy!(VlanTagger);

#[cfg(test)]
mod tests {
    use super::*;
    use wasmdp_sdk::abi::{engine, flags};
    use wasmdp_sdk::mock;

    fn init(params: &[(&str, &str)]) -> Result<VlanTagger, std::string::String> {
        mock::reset();
        params.iter().for_each(|(k, v)| mock::set_param(k, v));
        VlanTagger::init(0, &Params::host()).map_err(|r| r.reason().into())
    }

    fn run(p: &mut VlanTagger) -> std::vec::Vec<mock::MockPacket> {
        mock::begin_burst(&[&[0u8; 60], &[0u8; 128]]);
        p.on_burst(&mut Burst::current().unwrap()).unwrap();
        mock::end_burst()
    }

    #[test]
    fn vlan_and_qinq() {
        let out = run(&mut init(&[("vlan", "100")]).unwrap());
        for o in &out {
            assert_eq!((o.engines.as_slice(), o.flags, o.vlan_tci), (&[engine::IO][..], flags::TX_VLAN, 100));
        }
        let out =
            run(&mut init(&[("mode", "qinq"), ("vlan", "20"), ("vlan_outer", "300"), ("engine", "mac")]).unwrap());
        for o in &out {
            assert_eq!(o.engines, [engine::MAC]);
            assert_eq!((o.flags, o.vlan_tci, o.vlan_tci_outer), (flags::TX_QINQ, 20, 300));
        }
    }

    #[test]
    fn refusals() {
        assert_eq!(init(&[]).err().unwrap(), "param `vlan` missing");
        assert_eq!(init(&[("mode", "qinq"), ("vlan", "1")]).err().unwrap(), "param `vlan_outer` missing");
        assert_eq!(init(&[("mode", "vxlan"), ("vlan", "1")]).err().unwrap(), "param `mode`: `vxlan` is not vlan|qinq");
        assert!(init(&[("vlan", "70000")]).is_err());
    }
}
