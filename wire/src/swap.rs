//! [`swap_five_tuple`]: testpmd's 5tswap, in place.

use super::field::{eth, ipv4, ipv6, l4, swap_adjacent};
use super::parse::walk;
use super::L3;
use crate::proto;

/// Swaps MACs, then IPv4/IPv6 addresses, then TCP/UDP ports (testpmd's 5tswap), skipping VLAN/QinQ
/// tags. Swaps as much as the frame validly holds; frames shorter than 14 bytes are left unchanged.
///
/// Addresses are swapped when [`super::parse()`] finds a valid IP header; ports when the protocol is
/// TCP or UDP, the packet is not a non-first IPv4 fragment and the 4 port bytes are in the frame
/// (the rest of the L4 header need not be). Checksums are left alone: both swaps exchange 16-bit
/// aligned words within the checksummed data, which leaves the one's complement sums unchanged.
#[inline]
pub fn swap_five_tuple(frame: &mut [u8]) {
    let (h, later_fragment) = walk(frame);
    if h.l2_len == 0 {
        return;
    }
    swap_adjacent::<{ eth::ADDR_LEN }>(frame, eth::DST);
    let l3 = usize::from(h.l2_len);
    match h.l3 {
        L3::Ipv4 => swap_adjacent::<{ ipv4::ADDR_LEN }>(frame, l3 + ipv4::SRC),
        L3::Ipv6 => swap_adjacent::<{ ipv6::ADDR_LEN }>(frame, l3 + ipv6::SRC),
        L3::Other => return,
    }
    if !later_fragment && matches!(h.l4_proto, proto::TCP | proto::UDP) {
        swap_adjacent::<{ l4::PORT_LEN }>(frame, l3 + usize::from(h.l3_len) + l4::SRC_PORT);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{
        assert_checksums, frame, with_ext, Ip, DST_IP4, DST_IP6, DST_MAC, DST_PORT, L4, SRC_IP4, SRC_IP6, SRC_MAC,
        SRC_PORT,
    };
    use super::super::{ethertype, parse};
    use super::*;
    use etherparse::{NetHeaders, PacketHeaders, TransportHeader};

    /// (src MAC, dst MAC, src IP, dst IP, src port, dst port) as etherparse sees them.
    fn tuple(f: &[u8]) -> ([u8; 6], [u8; 6], Vec<u8>, Vec<u8>, u16, u16) {
        let p = PacketHeaders::from_ethernet_slice(f).unwrap();
        let e = p.link.unwrap().ethernet2().unwrap();
        let (s, d) = match p.net.unwrap() {
            NetHeaders::Ipv4(ip, _) => (ip.source.to_vec(), ip.destination.to_vec()),
            NetHeaders::Ipv6(ip, _) => (ip.source.to_vec(), ip.destination.to_vec()),
        };
        let (sp, dp) = match p.transport.unwrap() {
            TransportHeader::Udp(u) => (u.source_port, u.destination_port),
            TransportHeader::Tcp(t) => (t.source_port, t.destination_port),
            _ => unreachable!(),
        };
        (e.source, e.destination, s, d, sp, dp)
    }

    #[test]
    fn ports_after_ipv6_extension_headers_are_swapped() {
        let mut f = with_ext(&frame(0, Ip::V6, L4::Udp, 12), &[(0, 8), (60, 8)]);
        let before = tuple(&f);
        swap_five_tuple(&mut f);
        let after = tuple(&f);
        assert_eq!((after.4, after.5), (before.5, before.4), "UDP ports swapped behind the extension headers");
        assert_eq!((after.2, after.3), (before.3.clone(), before.2.clone()));
    }

    #[test]
    fn byte_fixture() {
        let mut f: [u8; 46] = [
            0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00, // eth
            0x45, 0x00, 0x00, 0x20, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x11, 0x9c, 0x4a, // ipv4
            0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7, // 192.168.0.1 -> 192.168.0.199
            0x04, 0xd2, 0x00, 0x35, 0x00, 0x0c, 0x12, 0x34, // udp 1234 -> 53
            0xde, 0xad, 0xbe, 0xef,
        ];
        let want: [u8; 46] = [
            0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02, 0x08, 0x00, // eth
            0x45, 0x00, 0x00, 0x20, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x11, 0x9c, 0x4a, // ipv4
            0xc0, 0xa8, 0x00, 0xc7, 0xc0, 0xa8, 0x00, 0x01, // swapped
            0x00, 0x35, 0x04, 0xd2, 0x00, 0x0c, 0x12, 0x34, // swapped
            0xde, 0xad, 0xbe, 0xef,
        ];
        swap_five_tuple(&mut f);
        assert_eq!(f, want);
    }

    #[test]
    fn swaps_every_fixture_and_keeps_checksums() {
        for vlans in 0..=2 {
            for ip in [Ip::V4, Ip::V4Opts(12), Ip::V6] {
                for l4 in [L4::Udp, L4::Tcp, L4::TcpOpts(8)] {
                    for len in [0, 1, 51, 1000] {
                        let orig = frame(vlans, ip, l4, len);
                        let mut f = orig.clone();
                        swap_five_tuple(&mut f);
                        assert_eq!(f.len(), orig.len());
                        let (sip, dip) = match ip {
                            Ip::V6 => (SRC_IP6.to_vec(), DST_IP6.to_vec()),
                            _ => (SRC_IP4.to_vec(), DST_IP4.to_vec()),
                        };
                        assert_eq!(tuple(&f), (DST_MAC, SRC_MAC, dip, sip, DST_PORT, SRC_PORT));
                        assert_checksums(&f);
                        // Everything else is untouched, and a second swap restores the frame.
                        assert_eq!(parse(&f), parse(&orig));
                        swap_five_tuple(&mut f);
                        assert_eq!(f, orig);
                    }
                }
            }
        }
    }

    #[test]
    fn short_frames_are_unchanged() {
        let orig = frame(0, Ip::V4, L4::Udp, 0);
        for n in 0..14 {
            let mut f = orig[..n].to_vec();
            swap_five_tuple(&mut f);
            assert_eq!(f, orig[..n], "len {n}");
        }
        let mut f = orig[..14].to_vec();
        swap_five_tuple(&mut f);
        assert_eq!((&f[..6], &f[6..12], &f[12..]), (&SRC_MAC[..], &DST_MAC[..], &orig[12..14]));
    }

    #[test]
    fn non_ip_swaps_macs_only() {
        let mut orig = frame(1, Ip::V4, L4::Udp, 10);
        orig[16..18].copy_from_slice(&ethertype::ARP.to_be_bytes());
        let mut f = orig.clone();
        swap_five_tuple(&mut f);
        assert_eq!((&f[..6], &f[6..12]), (&orig[6..12], &orig[..6]));
        assert_eq!(f[12..], orig[12..]);
    }

    #[test]
    fn non_first_fragment_keeps_ports() {
        let mut orig = frame(0, Ip::V4, L4::Udp, 10);
        orig[20..22].copy_from_slice(&[0x00, 0x10]);
        let mut f = orig.clone();
        swap_five_tuple(&mut f);
        assert_eq!((&f[26..30], &f[30..34]), (&orig[30..34], &orig[26..30]));
        assert_eq!(f[34..], orig[34..]);
        // A first fragment has its ports swapped.
        orig[20..22].copy_from_slice(&[0x20, 0x00]);
        let mut f = orig.clone();
        swap_five_tuple(&mut f);
        assert_eq!((&f[34..36], &f[36..38]), (&orig[36..38], &orig[34..36]));
    }

    #[test]
    fn ports_need_only_their_four_bytes() {
        let orig = frame(0, Ip::V6, L4::Tcp, 0);
        let mut f = orig[..58].to_vec();
        swap_five_tuple(&mut f);
        assert_eq!((&f[54..56], &f[56..58]), (&orig[56..58], &orig[54..56]));
        let mut f = orig[..57].to_vec();
        swap_five_tuple(&mut f);
        assert_eq!(f[54..], orig[54..57]);
        assert_eq!((&f[22..38], &f[38..54]), (&orig[38..54], &orig[22..38]));
    }
}
