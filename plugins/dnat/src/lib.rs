//! `dnat`: destination NAT for IPv4, per packet in the burst area (ABI 1.1), with RFC 1624
//! incremental checksums: no host call per packet.
//!
//! | param | meaning |
//! |---|---|
//! | `match` | destination prefix to rewrite (`10.0.0.2`, `10.0.0.0/24`) |
//! | `to` | new destination IPv4 address |
//! | `port` | optional: only this TCP/UDP destination port |
//! | `to_port` | optional: new TCP/UDP destination port |
//!
//! Per packet: the headers are found in the window (VLAN tags, IPv4 options included); a match gets
//! the new address (and port), the IPv4 header checksum and the TCP/UDP checksum updated
//! incrementally (a UDP checksum of 0 stays 0). Non-first fragments get the address only (their L4
//! checksum lives in the first fragment). A matching packet whose TCP/UDP header is not inside the
//! window is dropped and counted (`too_deep`) rather than sent with a wrong checksum.
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::net::{proto, Headers, Ipv4, L3Kind, Tcp, Udp};
use wasmdp_sdk::{AreaSpec, Burst, Cidr, Counter, Error, Params, Policy, Refusal, Window};

/// Bytes of each packet the host places in the window: Ethernet, two VLAN tags, IPv4 with options,
/// and a TCP header with options.
const WINDOW: u16 = 128;

/// The policy.
pub struct Dnat {
    matches: Cidr,
    to: [u8; 4],
    port: Option<u16>,
    to_port: Option<u16>,
    rewritten: Counter,
    too_deep: Counter,
}

impl Policy for Dnat {
    const AREA: AreaSpec = AreaSpec::Windows(WINDOW);

    fn init(_port: u32, params: &Params) -> Result<Self, Refusal> {
        let matches = params.get_cidr("match")?.ok_or_else(|| Refusal::missing("match"))?;
        if !matches!(matches, Cidr::V4(..)) {
            return Err(Refusal::new("param `match`: dnat rewrites IPv4 only; give an IPv4 prefix"));
        }
        Ok(Dnat {
            matches,
            to: params.get_ipv4("to")?.ok_or_else(|| Refusal::missing("to"))?,
            port: params.get_u16("port")?,
            to_port: params.get_u16("to_port")?,
            rewritten: Counter::register("rewritten")?,
            too_deep: Counter::register("too_deep")?,
        })
    }

    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
        let (mut rewritten, mut too_deep) = (0, 0);
        for mut w in burst.windows()? {
            match self.rewrite(&mut w) {
                Some(true) => rewritten += 1,
                Some(false) => {
                    too_deep += 1;
                    w.drop();
                }
                None => {}
            }
        }
        self.rewritten.add(rewritten);
        self.too_deep.add(too_deep);
        Ok(())
    }
}

impl Dnat {
    /// Rewrites a matching packet: Some(true) done, Some(false) matching but its L4 header is past
    /// the window, None not matching.
    fn rewrite(&self, w: &mut Window<'_>) -> Option<bool> {
        let h = Headers::parse(w.bytes())?;
        let l3 = h.l3.filter(|l3| l3.kind == L3Kind::V4)?;
        let old = Ipv4::new(w.bytes().get(l3.offset..)?)?.dst();
        if !self.matches.contains_v4(old) {
            return None;
        }
        let l4 = h.l4_offset.filter(|_| matches!(l3.proto, proto::TCP | proto::UDP));
        let port_ok = |dport: u16| self.port.is_none_or(|p| p == dport);
        if l3.proto == proto::TCP || l3.proto == proto::UDP {
            if h.fragment {
                // Not the first fragment: no ports to match or rewrite.
                if self.port.is_some() || self.to_port.is_some() {
                    return None;
                }
            } else {
                let Some(l4) = l4 else { return Some(false) };
                let dport = read_dport(w.bytes(), l4)?;
                if !port_ok(dport) {
                    return None;
                }
                if !self.fix_l4(w.bytes_mut(), l4, l3.proto, old) {
                    return Some(false);
                }
            }
        } else if self.port.is_some() {
            return None;
        }
        Ipv4::new(w.bytes_mut().get_mut(l3.offset..)?)?.set_dst_incremental(self.to);
        Some(true)
    }

    /// Updates the TCP or UDP header at `l4` for the new address (and port); false when it is not
    /// all in the window.
    fn fix_l4(&self, bytes: &mut [u8], l4: usize, proto_: u8, old: [u8; 4]) -> bool {
        let Some(seg) = bytes.get_mut(l4..) else { return false };
        if proto_ == proto::UDP {
            let Some(mut u) = Udp::new(seg) else { return false };
            u.update_checksum_addr_v4(old, self.to);
            if let Some(p) = self.to_port {
                u.set_dst_port_incremental(p);
            }
        } else {
            let Some(mut t) = Tcp::new(seg) else { return false };
            t.update_checksum_addr_v4(old, self.to);
            if let Some(p) = self.to_port {
                t.set_dst_port_incremental(p);
            }
        }
        true
    }
}

/// The TCP/UDP destination port at `l4`.
fn read_dport(b: &[u8], l4: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(l4 + 2..l4 + 4)?.try_into().ok()?))
}

wasmdp_sdk::export_policy!(Dnat);

#[cfg(test)]
mod tests {
    use super::*;
    use wasmdp_sdk::mock;

    /// An IPv4/UDP frame 10.0.0.1:1000 -> dst:dport with a correct UDP checksum.
    pub(crate) fn udp(dst: [u8; 4], dport: u16) -> std::vec::Vec<u8> {
        let mut f = std::vec![0u8; 14 + 20 + 8 + 18];
        f[12..14].copy_from_slice(&[8, 0]);
        f[14..34].copy_from_slice(&[0x45, 0, 0, 46, 0, 1, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 0, 0, 0, 0]);
        f[30..34].copy_from_slice(&dst);
        f[34..38].copy_from_slice(&[0x03, 0xe8, (dport >> 8) as u8, dport as u8]);
        f[38..40].copy_from_slice(&[0, 26]);
        f[42..].iter_mut().enumerate().for_each(|(i, b)| *b = i as u8);
        Ipv4::new(&mut f[14..]).unwrap().fill_checksum();
        let ip = Ipv4::new(&f[14..]).unwrap();
        let c = Udp::new(&f[34..]).unwrap().compute_checksum_v4(&ip).unwrap();
        f[40..42].copy_from_slice(&c.to_be_bytes());
        f
    }

    #[test]
    fn rewrites_matching_packets_with_checksums_equal_to_full_ones() {
        mock::reset();
        mock::set_area(Dnat::AREA);
        for (k, v) in [("match", "10.0.0.0/24"), ("to", "192.0.2.9"), ("port", "53"), ("to_port", "5353")] {
            mock::set_param(k, v);
        }
        let mut p = Dnat::init(0, &Params::host()).unwrap();
        let frames = [udp([10, 0, 0, 2], 53), udp([10, 0, 1, 2], 53), udp([10, 0, 0, 2], 80)];
        mock::begin_burst(&frames.iter().map(|f| f.as_slice()).collect::<std::vec::Vec<_>>());
        p.on_burst(&mut Burst::current().unwrap()).unwrap();
        let out = mock::end_burst();
        assert_eq!(out[0].data, udp([192, 0, 2, 9], 5353), "rewritten as if built so");
        assert_eq!((out[1].data.as_slice(), out[2].data.as_slice()), (frames[1].as_slice(), frames[2].as_slice()));
        assert_eq!(mock::counter("rewritten"), Some(1));
    }
}
