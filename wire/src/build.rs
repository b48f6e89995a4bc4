//! [`build_udp`]: the frame template of generated traffic.

use super::cksum::{fill_ipv4_cksum, fill_l4_cksum};
use super::field::{eth, ipv4, l4, put_be16, put_bytes, tag, udp};
use super::{ethertype, FrameSpec, Headers, ETH_HLEN, L3};
use crate::proto;
use alloc::vec;
use alloc::vec::Vec;

/// TTL of generated packets.
const TTL: u8 = 64;

/// Builds a valid Ethernet/[802.1Q]/IPv4/UDP frame of exactly `spec.size` bytes, with correct IPv4
/// header checksum and UDP checksum, payload bytes counting up from 0.
///
/// `spec.size` is clamped to what the headers can express: at least the headers (42 bytes, 46 with a
/// tag), at most an IPv4 total length of 65535. Payload byte `i` is `i as u8`. The IPv4 header has
/// IHL 5, TTL 64, ID 0 and no flags; the UDP source port is at [`super::udp_src_port_offset`].
pub fn build_udp(spec: &FrameSpec) -> Vec<u8> {
    let l2_len = ETH_HLEN + if spec.vlan.is_some() { tag::LEN } else { 0 };
    let headers_end = l2_len + ipv4::MIN_LEN + udp::LEN;
    let size = spec.size.clamp(headers_end, l2_len + usize::from(u16::MAX));
    let ip_len = u16::try_from(size - l2_len).unwrap_or(u16::MAX);
    let udp_len = ip_len - ipv4::MIN_LEN as u16;

    let mut f = vec![0u8; size];
    // Payload 0, 1, 2, ... (wrapping).
    for (i, b) in f.iter_mut().skip(headers_end).enumerate() {
        *b = i as u8;
    }

    // Ethernet, optional 802.1Q tag.
    put_bytes(&mut f, eth::DST, &spec.dst_mac);
    put_bytes(&mut f, eth::SRC, &spec.src_mac);
    if let Some(tci) = spec.vlan {
        put_be16(&mut f, eth::ETHERTYPE, ethertype::VLAN);
        put_be16(&mut f, ETH_HLEN + tag::TCI, tci);
        put_be16(&mut f, ETH_HLEN + tag::ETHERTYPE, ethertype::IPV4);
    } else {
        put_be16(&mut f, eth::ETHERTYPE, ethertype::IPV4);
    }

    // IPv4: IHL 5, DSCP/ECN 0, ID 0, no flags, fragment offset 0; checksum below.
    let ip = f.get_mut(l2_len..).unwrap_or_default();
    put_bytes(ip, ipv4::VER_IHL, &[0x45]);
    put_be16(ip, ipv4::TOTAL_LEN, ip_len);
    put_bytes(ip, ipv4::TTL, &[TTL]);
    put_bytes(ip, ipv4::PROTOCOL, &[proto::UDP]);
    put_bytes(ip, ipv4::SRC, &spec.src_ip);
    put_bytes(ip, ipv4::DST, &spec.dst_ip);

    // UDP; checksum below.
    let udp_hdr = ip.get_mut(ipv4::MIN_LEN..).unwrap_or_default();
    put_be16(udp_hdr, l4::SRC_PORT, spec.src_port);
    put_be16(udp_hdr, l4::DST_PORT, spec.dst_port);
    put_be16(udp_hdr, udp::LENGTH, udp_len);

    let h = Headers {
        l2_len: l2_len as u16,
        vlans: u8::from(spec.vlan.is_some()),
        l3: L3::Ipv4,
        l3_len: ipv4::MIN_LEN as u16,
        l4_proto: proto::UDP,
        l4_len: udp::LEN as u8,
        l4_whole: true,
    };
    let ip_ok = fill_ipv4_cksum(&mut f, &h);
    let udp_ok = fill_l4_cksum(&mut f, &h);
    debug_assert!(ip_ok && udp_ok, "build_udp: checksums not filled");
    f
}

#[cfg(test)]
mod tests {
    use super::super::testutil::assert_checksums;
    use super::super::{parse, udp_src_port_offset};
    use super::*;
    use etherparse::{NetHeaders, PacketHeaders, TransportHeader, VlanHeader};

    fn spec(size: usize, vlan: Option<u16>) -> FrameSpec {
        FrameSpec {
            size,
            dst_mac: [0x02, 0, 0, 0, 0, 0xbb],
            src_mac: [0x02, 0, 0, 0, 0, 0xaa],
            src_ip: [198, 18, 0, 1],
            dst_ip: [198, 19, 0, 2],
            src_port: 9,
            dst_port: 4789,
            vlan,
        }
    }

    fn check(s: &FrameSpec) {
        let f = build_udp(s);
        assert_eq!(f.len(), s.size);
        let p = PacketHeaders::from_ethernet_slice(&f).unwrap();
        let e = p.link.clone().unwrap().ethernet2().unwrap();
        assert_eq!((e.destination, e.source), (s.dst_mac, s.src_mac));
        let l2 = match (s.vlan, &p.vlan) {
            (None, None) => 14,
            (Some(tci), Some(VlanHeader::Single(v))) => {
                assert_eq!(e.ether_type.0, ethertype::VLAN);
                assert_eq!(v.vlan_id.value(), tci & 0x0FFF);
                assert_eq!(v.pcp.value(), (tci >> 13) as u8);
                18
            }
            other => panic!("tags: {other:?}"),
        };
        let Some(NetHeaders::Ipv4(ip, _)) = &p.net else {
            panic!("not IPv4");
        };
        assert_eq!(usize::from(ip.total_len), s.size - l2);
        assert_eq!((ip.source, ip.destination, ip.time_to_live), (s.src_ip, s.dst_ip, 64));
        assert_eq!((ip.identification, ip.dont_fragment, ip.more_fragments), (0, false, false));
        assert_eq!(ip.header_len(), 20);
        let Some(TransportHeader::Udp(u)) = &p.transport else {
            panic!("not UDP");
        };
        assert_eq!((u.source_port, u.destination_port), (s.src_port, s.dst_port));
        assert_eq!(usize::from(u.length), s.size - l2 - 20);
        let payload = p.payload.slice();
        assert_eq!(payload.len(), s.size - l2 - 28);
        assert!(payload.iter().enumerate().all(|(i, &b)| b == i as u8));
        assert_checksums(&f);
        let off = udp_src_port_offset(s);
        assert_eq!(f[off..off + 2], s.src_port.to_be_bytes());
        let h = parse(&f);
        assert_eq!((usize::from(h.l2_len), h.l3, h.l4_len), (l2, L3::Ipv4, 8));
    }

    #[test]
    fn sizes_with_and_without_tag() {
        for size in [60, 64, 65, 128, 1514, 1518, 9000] {
            check(&spec(size, None));
            check(&spec(size, Some(100)));
            check(&spec(size, Some(0xE123)));
        }
    }

    #[test]
    fn sizes_below_the_headers_are_clamped() {
        assert_eq!(build_udp(&spec(0, None)).len(), 42);
        assert_eq!(build_udp(&spec(10, Some(1))).len(), 46);
        check(&spec(42, None));
        check(&spec(46, Some(7)));
        let f = build_udp(&spec(0, None));
        assert_checksums(&f);
    }

    #[test]
    fn sizes_above_ipv4_are_clamped() {
        let f = build_udp(&spec(100_000, Some(5)));
        assert_eq!(f.len(), 18 + 65535);
        assert_checksums(&f);
        check(&spec(14 + 65535, None));
    }
}
