//! `vxlan_encap`: VXLAN encapsulation (RFC 7348) over IPv4 as a plugin, on the burst area: each
//! packet grows by 50 bytes at the front (a length change into its headroom) and the outer headers
//! are written in its window; the inner frame is not copied. (The native `vxlan_encap` engine does
//! the same faster; this is the example of prepending from a plugin, and the wasm-tax comparison.)
//!
//! | param | default | meaning |
//! |---|---|---|
//! | `vni` | required | the VNI (24 bits) |
//! | `local_ip`, `remote_ip` | required | outer IPv4 source and destination |
//! | `dst_port` | 4789 | outer UDP destination port |
//!
//! Outer Ethernet: the stream's TX port MAC to its peer MAC (from the context). Outer UDP source
//! port: 49152 + the inner flow's hash (the host's, handed over in the descriptors:
//! `AreaSpec::HashedWindows`) modulo 16384 (RFC 7348's entropy advice), checksum 0. Outer
//! IPv4 checksum: the template header's sum, computed once, plus the packet's total length, folded.
//! A packet without 50 bytes of headroom is dropped (`no_room`).
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::net::{cksum, tunnel::Vxlan};
use wasmdp_sdk::{AreaSpec, Burst, Context, Counter, Error, Params, Policy, Refusal};

/// Bytes of each packet the host places in the window.
const WINDOW: u16 = 64;

/// Outer Ethernet, IPv4, UDP and VXLAN headers.
const OUTER: usize = 50;

/// The policy.
pub struct VxlanEncap {
    template: [u8; OUTER],
    /// The running checksum sum of the template's IPv4 header (total length and checksum 0): per
    /// packet, the total length is added and the sum folded, instead of summing the header again.
    ip_sum: u32,
    no_room: Counter,
}

impl Policy for VxlanEncap {
    const AREA: AreaSpec = AreaSpec::HashedWindows(WINDOW);

    fn init(_port: u32, params: &Params) -> Result<Self, Refusal> {
        let vni = params.get_u32("vni")?.ok_or_else(|| Refusal::missing("vni"))?;
        if vni >= 1 << 24 {
            return Err(Refusal::param("vni", "(over 24 bits)", "a VNI 0..=16777215"));
        }
        let local = params.get_ipv4("local_ip")?.ok_or_else(|| Refusal::missing("local_ip"))?;
        let remote = params.get_ipv4("remote_ip")?.ok_or_else(|| Refusal::missing("remote_ip"))?;
        let dst_port = params.get_u16("dst_port")?.unwrap_or(4789);
        let ctx = Context::get()?;
        let tx = ctx.tx_port();
        let (Some(mac), Some(peer)) = (ctx.mac(tx), ctx.peer_mac(tx)) else {
            return Err(Refusal::new("the context has no MACs for the TX port"));
        };
        let mut t = [0u8; OUTER];
        t[..6].copy_from_slice(&peer);
        t[6..12].copy_from_slice(&mac);
        t[12..14].copy_from_slice(&[8, 0]);
        t[14..34].copy_from_slice(&[0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        t[26..30].copy_from_slice(&local);
        t[30..34].copy_from_slice(&remote);
        t[36..38].copy_from_slice(&dst_port.to_be_bytes());
        Vxlan::write(&mut t[42..], vni).ok_or_else(|| Refusal::new("VXLAN header"))?;
        let ip_sum = cksum::sum(&t[14..34], 0);
        Ok(VxlanEncap { template: t, ip_sum, no_room: Counter::register("no_room")? })
    }

    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
        let mut no_room = 0;
        burst.windows_of::<{ WINDOW as usize }>()?.for_each(|mut w| {
            let inner_len = w.len() as usize;
            let sport = 49152 + (w.hash() % 16384) as u16;
            let Ok(head) = w.prepend(OUTER) else {
                no_room += 1;
                w.drop();
                return;
            };
            head.copy_from_slice(&self.template);
            let total = (20 + 16 + inner_len) as u16;
            head[16..18].copy_from_slice(&total.to_be_bytes());
            head[24..26].copy_from_slice(&cksum::fold(self.ip_sum + u32::from(total)).to_be_bytes());
            head[34..36].copy_from_slice(&sport.to_be_bytes());
            head[38..40].copy_from_slice(&((16 + inner_len) as u16).to_be_bytes());
        });
        self.no_room.add(no_room);
        Ok(())
    }
}

wasmdp_sdk::export_policy!(VxlanEncap);

#[cfg(test)]
mod tests {
    use super::*;
    use wasmdp_sdk::mock;
    use wasmdp_sdk::net::Ipv4;

    #[test]
    fn prepends_the_outer_headers_and_keeps_the_inner_frame() {
        mock::reset();
        mock::set_area(VxlanEncap::AREA);
        for (k, v) in [("vni", "42"), ("local_ip", "192.0.2.1"), ("remote_ip", "192.0.2.2")] {
            mock::set_param(k, v);
        }
        let mut p = VxlanEncap::init(0, &Params::host()).unwrap();
        for len in [60usize, 61, 1000, 1500] {
            let mut inner = std::vec![0u8; len];
            inner[12..14].copy_from_slice(&[8, 6]);
            mock::begin_burst(&[&inner]);
            p.on_burst(&mut Burst::current().unwrap()).unwrap();
            let out = mock::end_burst().remove(0).data;
            assert_eq!(out.len(), len + 50);
            assert_eq!(&out[50..], inner.as_slice());
            assert_eq!(&out[..12], &[2, 0, 0, 0, 0, 0x10, 2, 0, 0, 0, 0, 0]);
            let ip = Ipv4::new(&out[14..]).unwrap();
            assert!(ip.checksum_ok(), "inner length {len}");
            assert_eq!((ip.total_len(), ip.src(), ip.dst()), (len as u16 + 36, [192, 0, 2, 1], [192, 0, 2, 2]));
            let udp_len = (len as u16 + 16).to_be_bytes();
            assert_eq!(&out[36..40], &[0x12, 0xb5, udp_len[0], udp_len[1]]);
            assert_eq!(&out[42..50], &[8, 0, 0, 0, 0, 0, 42, 0]);
            let sport = 49152 + (wasmdp_sdk::flow_hash(&inner) % 16384) as u16;
            assert_eq!(&out[34..36], &sport.to_be_bytes(), "the source port from the inner flow's hash");
        }
    }
}
