//! `vxlan_decap`: VXLAN decapsulation (RFC 7348) as a plugin, on the burst area: the outer
//! headers are checked in each packet's window and stripped with a length change, no host call per
//! packet. (The native `vxlan_decap` engine does the same faster; this is the example of length
//! changes from a plugin, and the wasm-tax comparison.)
//!
//! | param | default | meaning |
//! |---|---|---|
//! | `local_ip` | required | our IPv4 underlay address: only frames to it are decapsulated |
//! | `vni` | any | only this VNI |
//! | `dst_port` | 4789 | UDP port |
//! | `others` | `drop` | `drop` or `pass` the frames that are not our tunnel's |
//!
//! IPv4 underlay without VLAN tags, not fragmented; the IPv4 header may have options.
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::net::{tunnel::Vxlan, Eth, Ipv4, Udp};
use wasmdp_sdk::{AreaSpec, Burst, Counter, Error, Params, Policy, Refusal};

/// The policy.
pub struct VxlanDecap {
    local_ip: [u8; 4],
    vni: Option<u32>,
    dst_port: u16,
    pass_others: bool,
    others: Counter,
}

impl Policy for VxlanDecap {
    const AREA: AreaSpec = AreaSpec::Windows(128);

    fn init(_port: u32, params: &Params) -> Result<Self, Refusal> {
        let mut buf = [0u8; 8];
        let pass_others = match params.get("others", &mut buf) {
            None | Some("drop") => false,
            Some("pass") => true,
            Some(v) => return Err(Refusal::param("others", v, "drop or pass")),
        };
        Ok(VxlanDecap {
            local_ip: params.get_ipv4("local_ip")?.ok_or_else(|| Refusal::missing("local_ip"))?,
            vni: params.get_u32("vni")?,
            dst_port: params.get_u16("dst_port")?.unwrap_or(4789),
            pass_others,
            others: Counter::register("others")?,
        })
    }

    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
        let mut others = 0;
        for mut w in burst.windows()? {
            match self.outer_len(w.bytes()) {
                Some(n) if w.strip(n).is_ok() => {}
                _ => {
                    others += 1;
                    if !self.pass_others {
                        w.drop();
                    }
                }
            }
        }
        self.others.add(others);
        Ok(())
    }
}

impl VxlanDecap {
    /// Bytes of outer headers when the frame is our tunnel's (and holds an inner Ethernet header).
    fn outer_len(&self, f: &[u8]) -> Option<usize> {
        let eth = Eth::new(f)?;
        if eth.ethertype() != 0x0800 {
            return None;
        }
        let ip = Ipv4::new(eth.payload())?;
        if ip.dst() != self.local_ip || ip.protocol() != 17 || ip.is_fragment() {
            return None;
        }
        let udp_at = 14 + ip.header_len();
        let udp = Udp::new(f.get(udp_at..)?)?;
        if udp.dst_port() != self.dst_port {
            return None;
        }
        let vx = Vxlan::new(f.get(udp_at + 8..)?)?;
        if !vx.has_vni() || self.vni.is_some_and(|v| v != vx.vni()) {
            return None;
        }
        let n = udp_at + 16;
        (f.len() >= n + 14 || ip.total_len() as usize >= n - 14 + 14).then_some(n)
    }
}

wasmdp_sdk::export_policy!(VxlanDecap);

#[cfg(test)]
mod tests {
    use super::*;
    use wasmdp_sdk::mock;

    pub(crate) fn outer(inner: &[u8], dst: [u8; 4], vni: u32) -> std::vec::Vec<u8> {
        let mut f = std::vec![0u8; 50];
        f[12..14].copy_from_slice(&[8, 0]);
        let total = (36 + inner.len()) as u16;
        f[14..34].copy_from_slice(&[
            0x45,
            0,
            (total >> 8) as u8,
            total as u8,
            0,
            0,
            0x40,
            0,
            64,
            17,
            0,
            0,
            192,
            0,
            2,
            2,
            0,
            0,
            0,
            0,
        ]);
        f[30..34].copy_from_slice(&dst);
        let ulen = (16 + inner.len()) as u16;
        f[34..42].copy_from_slice(&[0xc0, 0, 0x12, 0xb5, (ulen >> 8) as u8, ulen as u8, 0, 0]);
        f[42..50].copy_from_slice(&[8, 0, 0, 0, (vni >> 16) as u8, (vni >> 8) as u8, vni as u8, 0]);
        f.extend_from_slice(inner);
        f
    }

    #[test]
    fn strips_our_tunnel_and_drops_the_rest() {
        mock::reset();
        mock::set_area(VxlanDecap::AREA);
        mock::set_param("local_ip", "192.0.2.1");
        mock::set_param("vni", "42");
        let mut p = VxlanDecap::init(0, &Params::host()).unwrap();
        let inner: std::vec::Vec<u8> = (0..60u8).collect();
        let frames =
            [outer(&inner, [192, 0, 2, 1], 42), outer(&inner, [192, 0, 2, 1], 43), outer(&inner, [192, 0, 2, 7], 42)];
        mock::begin_burst(&frames.iter().map(|f| f.as_slice()).collect::<std::vec::Vec<_>>());
        p.on_burst(&mut Burst::current().unwrap()).unwrap();
        let out = mock::end_burst();
        assert_eq!(out[0].data, inner);
        assert!(!out[0].dropped && out[1].dropped && out[2].dropped);
        assert_eq!(mock::counter("others"), Some(2));
    }
}
