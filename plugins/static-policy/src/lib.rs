//! `static-policy`: one engine and one set of TX offloads for every packet of every burst.
//!
//! Params (all optional):
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `engine` | `macswap` | `io`, `mac`, `macswap`, `5tswap`, `copy`, `drop`, `vxlan_encap`, `vxlan_decap`, `geneve_encap`, `geneve_decap` |
//! | `offloads` | none | comma list of `vlan_insert`, `qinq_insert`, `macsec_insert`, `ipv4_cksum`, `udp_cksum`, `tcp_cksum` |
//! | `vlan` | 0 | TCI of the (inner) VLAN tag |
//! | `vlan_outer` | 0 | TCI of the outer QinQ tag |
//! | `sticky` | `false` | `true`: after deciding the first burst, hand the port to the host (`set_sticky(engine, offloads, -1)`) |
//!
//! Per burst: `run_engine(engine, 0, n)`, then `set_offloads(ALL, offloads)` when any offload is
//! asked for ([`Burst::pass_with`] and [`Burst::offload_all`] without a burst area). The header-only
//! burst area (`AreaSpec::Header`) would save the `run_engine` call back into the host, but filling
//! and reading the header costs more than that call (docs/ABI.md, measured), so this policy does
//! without. With `sticky`, the first burst is decided as usual and `set_sticky` is called once, at
//! its end.
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::{log, Burst, Engine, Error, Offloads, Params, Policy, Refusal, StackStr, Sticky};

/// The policy: what every burst gets.
pub struct StaticPolicy {
    engine: Engine,
    offloads: Offloads,
    sticky: bool,
    sticky_set: bool,
}

impl Policy for StaticPolicy {
    fn init(_port: u32, params: &Params) -> Result<Self, Refusal> {
        let engine = params.get_engine("engine")?.unwrap_or(Engine::Macswap);
        let mut buf = [0u8; 128];
        let mut offloads = match params.try_get("offloads", &mut buf) {
            Ok(None) => Offloads::NONE,
            Ok(Some(list)) => Offloads::parse_list(list).map_err(|bad| {
                Refusal::param("offloads", bad, "vlan_insert|qinq_insert|macsec_insert|ipv4_cksum|udp_cksum|tcp_cksum")
            })?,
            Err(Error::TooSmall) => return Err(Refusal::param("offloads", "(too long)", "a list of offloads")),
            Err(e) => return Err(e.into()),
        };
        offloads.vlan_tci = params.get_u16("vlan")?.unwrap_or(0);
        offloads.vlan_tci_outer = params.get_u16("vlan_outer")?.unwrap_or(0);
        let sticky = params.get_bool("sticky")?.unwrap_or(false);

        let mut msg = StackStr::<128>::new();
        msg.push_str("static-policy: engine ").push_str(engine.name()).push_str(", offload flags 0x");
        push_hex(&mut msg, offloads.flags);
        msg.push_str(if sticky { ", sticky" } else { "" });
        log::info(msg.as_str());
        Ok(StaticPolicy { engine, offloads, sticky, sticky_set: false })
    }

    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
        burst.pass_with(self.engine)?;
        if !self.offloads.is_empty() {
            // Carried out after the engine, which marks packets with the TX port's own offloads.
            burst.offload_all(self.offloads)?;
        }
        if self.sticky && !self.sticky_set {
            // This burst is decided above; from the next one on the host runs the engine natively.
            Sticky::new(self.engine).offloads(self.offloads).set()?;
            self.sticky_set = true;
        }
        Ok(())
    }
}

wasmdp_sdk::export_policy!(StaticPolicy);

/// Appends `v` in hexadecimal (no `core::fmt`).
fn push_hex<const N: usize>(s: &mut StackStr<N>, mut v: u64) {
    let mut digits = [0u8; 16];
    let mut used = 0;
    for d in digits.iter_mut().rev() {
        *d = b"0123456789abcdef"[(v & 15) as usize];
        used += 1;
        v >>= 4;
        if v == 0 {
            break;
        }
    }
    s.push_str(digits.get(16 - used..).and_then(|d| core::str::from_utf8(d).ok()).unwrap_or("?"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmdp_sdk::abi::{engine, flags};
    use wasmdp_sdk::mock::{self, MockSticky};

    fn init(params: &[(&str, &str)]) -> Result<StaticPolicy, Refusal> {
        mock::reset();
        for (k, v) in params {
            mock::set_param(k, v);
        }
        StaticPolicy::init(0, &Params::host())
    }

    fn frame() -> [u8; 64] {
        let mut f = [0u8; 64];
        f[..6].copy_from_slice(&[2, 0, 0, 0, 1, 0]);
        f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 0]);
        f
    }

    #[test]
    fn defaults_to_macswap_without_offloads() {
        let mut p = init(&[]).unwrap();
        mock::begin_burst(&[&frame(), &frame()]);
        p.on_burst(&mut Burst::current().unwrap()).unwrap();
        let out = mock::end_burst();
        assert!(out.iter().all(|o| o.engines == [engine::MACSWAP] && o.flags == 0));
        assert_eq!(&out[0].data[..6], &[2, 0, 0, 0, 0, 0]);
        assert_eq!(mock::with(|h| h.sticky), None);
        assert_eq!(mock::logs()[0].1, "static-policy: engine macswap, offload flags 0x0");
    }

    #[test]
    fn offloads_and_sticky_once() {
        let mut p = init(&[
            ("engine", "io"),
            ("offloads", "qinq_insert, ipv4_cksum,udp_cksum"),
            ("vlan", "20"),
            ("vlan_outer", "0x64"),
            ("sticky", "true"),
        ])
        .unwrap();
        let want = flags::TX_QINQ | flags::TX_IP_CKSUM | flags::TX_UDP_CKSUM;
        for burst in 0..2 {
            mock::begin_burst(&[&frame()]);
            p.on_burst(&mut Burst::current().unwrap()).unwrap();
            let out = mock::end_burst();
            // The burst that sets the sticky decision is still processed.
            assert_eq!(out[0].engines, [engine::IO]);
            assert_eq!((out[0].flags, out[0].vlan_tci, out[0].vlan_tci_outer), (want, 20, 100));
            let sticky = mock::with(|h| h.sticky.take());
            if burst == 0 {
                let s = MockSticky { engine: engine::IO, flags: want, vlan_tci: 20, vlan_tci_outer: 100, bursts: -1 };
                assert_eq!(sticky, Some(s));
            } else {
                // Set once: should the host call again, the plugin does not repeat it.
                assert_eq!(sticky, None);
            }
        }
        let mut q = init(&[("engine", "5tswap"), ("sticky", "yes")]).unwrap();
        mock::begin_burst(&[&frame()]);
        q.on_burst(&mut Burst::current().unwrap()).unwrap();
        assert_eq!(
            mock::with(|h| h.sticky),
            Some(MockSticky { engine: engine::FIVETSWAP, flags: 0, vlan_tci: 0, vlan_tci_outer: 0, bursts: -1 })
        );
    }

    #[test]
    fn refusals() {
        let r = |params: &[(&str, &str)]| init(params).err().map(|e| std::string::String::from(e.reason()));
        assert_eq!(
            r(&[("offloads", "vlan_insert,lro")]).unwrap(),
            "param `offloads`: `lro` is not vlan_insert|qinq_insert|macsec_insert|ipv4_cksum|udp_cksum|tcp_cksum"
        );
        assert_eq!(
            r(&[("engine", "txonly")]).unwrap(),
            std::format!("param `engine`: `txonly` is not {}", Engine::NAMES)
        );
        assert_eq!(r(&[("vlan", "65536")]).unwrap(), "param `vlan`: `65536` is not a number 0..=65535");
        assert_eq!(r(&[("sticky", "maybe")]).unwrap(), "param `sticky`: `maybe` is not true or false");
        assert_eq!(r(&[("engine", "drop"), ("sticky", "false")]), None);
    }
}
