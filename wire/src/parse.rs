//! [`parse`]: one walk over Ethernet, VLAN/QinQ tags, IPv4/IPv6 and the TCP/UDP header length.

use super::field::{be16, eth, ipv4, ipv6, is_tpid, tag, tcp, udp};
use super::{ethertype, Headers, ETH_HLEN, L3};
use crate::proto;

/// Finds the headers of an Ethernet frame. Never panics; anything truncated or unknown stops the walk.
#[inline]
pub fn parse(frame: &[u8]) -> Headers {
    walk(frame).0
}

/// [`parse`], plus whether the frame is a non-first fragment (whose L4 header is elsewhere).
#[inline(always)]
pub(super) fn walk(frame: &[u8]) -> (Headers, bool) {
    let mut h = Headers::default();
    let Some((etype, vlans, rest)) = l2(frame) else {
        return (h, false);
    };
    h.vlans = vlans;
    h.l2_len = ETH_HLEN as u16 + tag::LEN as u16 * u16::from(vlans);
    let Some(found) = l3(etype, rest) else { return (h, false) };
    h.l3 = found.kind;
    h.l3_len = found.len as u16;
    h.l4_proto = found.proto;
    h.l4_whole = !found.fragment && !found.routed;
    if found.later_fragment {
        return (h, true);
    }

    // L4: only the header length, and only when the whole header is there.
    let l4 = rest.get(found.len..).unwrap_or_default();
    h.l4_len = match h.l4_proto {
        proto::UDP if l4.len() >= udp::LEN => udp::LEN as u8,
        proto::TCP => l4.get(tcp::DATA_OFF).map_or(0, |&b| {
            let hlen = (b >> 4) << 2;
            if (tcp::MIN_LEN..=l4.len()).contains(&usize::from(hlen)) {
                hlen
            } else {
                0
            }
        }),
        _ => 0,
    };
    (h, false)
}

/// The L2 walk: the EtherType after the tags, the number of tags (at most `tag::MAX`, each complete
/// with its TCI and inner EtherType, or not taken at all: a truncated tag or a third one leaves a
/// TPID as the EtherType, which ends the walk), and the frame from the network header on. None when
/// the frame is shorter than an Ethernet header.
#[inline(always)]
pub(crate) fn l2(frame: &[u8]) -> Option<(u16, u8, &[u8])> {
    let (eth_hdr, mut rest) = frame.split_first_chunk::<ETH_HLEN>()?;
    let mut etype = be16(eth_hdr, eth::ETHERTYPE);
    let mut vlans = 0u8;
    while usize::from(vlans) < tag::MAX && is_tpid(etype) {
        let Some((t, after)) = rest.split_first_chunk::<{ tag::LEN }>() else {
            break;
        };
        etype = be16(t, tag::ETHERTYPE);
        rest = after;
        vlans += 1;
    }
    Some((etype, vlans, rest))
}

/// The L3 walk on `rest`, the frame from the network header on, by its EtherType: IPv4 or IPv6
/// with its extension headers; None for anything else or a header that is not all there.
#[inline(always)]
pub(crate) fn l3(etype: u16, rest: &[u8]) -> Option<L3Found> {
    match etype {
        ethertype::IPV4 => ipv4_header(rest),
        ethertype::IPV6 => ipv6_headers(rest),
        _ => None,
    }
}

/// What the network layer walk found.
pub(crate) struct L3Found {
    pub(crate) kind: L3,
    /// Bytes of the IPv4 header with options, or of the IPv6 header with its extension headers.
    pub(crate) len: usize,
    pub(crate) proto: u8,
    /// Any fragment (first or later).
    pub(crate) fragment: bool,
    /// A fragment other than the first: no L4 header.
    pub(crate) later_fragment: bool,
    /// An IPv6 Routing header with segments left.
    pub(crate) routed: bool,
}

#[inline(always)]
fn ipv4_header(rest: &[u8]) -> Option<L3Found> {
    let ip = rest.first_chunk::<{ ipv4::MIN_LEN }>()?;
    let ver_ihl = ip[ipv4::VER_IHL];
    let hlen = usize::from((ver_ihl & 0x0F) << 2);
    if ver_ihl >> 4 != 4 || hlen < ipv4::MIN_LEN || hlen > rest.len() {
        return None;
    }
    let frag = be16(ip, ipv4::FLAGS_FRAG);
    Some(L3Found {
        kind: L3::Ipv4,
        len: hlen,
        proto: ip[ipv4::PROTOCOL],
        fragment: frag & (ipv4::MORE_FRAGMENTS | ipv4::FRAG_OFFSET_MASK) != 0,
        later_fragment: frag & ipv4::FRAG_OFFSET_MASK != 0,
        routed: false,
    })
}

/// The IPv6 header and the extension headers that follow it (Hop-by-Hop, Routing, Fragment,
/// Destination Options; at most `ipv6::MAX_EXT`). A truncated or unknown extension ends the walk
/// with its number as the protocol, so no L4 header is assumed.
#[inline(always)]
fn ipv6_headers(rest: &[u8]) -> Option<L3Found> {
    let ip = rest.first_chunk::<{ ipv6::LEN }>()?;
    if ip[ipv6::VER] >> 4 != 6 {
        return None;
    }
    let mut f = L3Found {
        kind: L3::Ipv6,
        len: ipv6::LEN,
        proto: ip[ipv6::NEXT_HEADER],
        fragment: false,
        later_fragment: false,
        routed: false,
    };
    for _ in 0..ipv6::MAX_EXT {
        let Some(ext) = rest.get(f.len..).and_then(<[u8]>::first_chunk::<8>) else { break };
        let len = match f.proto {
            proto::HOPOPT | proto::IPV6_OPTS => (usize::from(ext[1]) + 1) * 8,
            proto::IPV6_ROUTE => {
                f.routed |= ext[3] != 0;
                (usize::from(ext[1]) + 1) * 8
            }
            proto::IPV6_FRAG => {
                let off_m = be16(ext, 2);
                f.fragment = off_m & 0xFFF9 != 0;
                f.later_fragment |= off_m >> 3 != 0;
                8
            }
            _ => break,
        };
        if f.len + len > rest.len() {
            break;
        }
        f.proto = ext[0];
        f.len += len;
    }
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{frame, with_ext, Ip, L4};
    use super::*;
    use proptest::prelude::*;

    fn hdrs(l2_len: u16, vlans: u8, l3: L3, l3_len: u16, l4_proto: u8, l4_len: u8) -> Headers {
        Headers { l2_len, vlans, l3, l3_len, l4_proto, l4_len, l4_whole: l3 != L3::Other }
    }

    /// Ethernet + IPv4 (ID 0x1c46, DF, TTL 64) + UDP 1234 -> 53 with 4 payload bytes, by hand.
    const IPV4_UDP: [u8; 46] = [
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, // eth
        0x45, 0x00, 0x00, 0x20, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, // ipv4 ...
        0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7, // ... addresses
        0x04, 0xd2, 0x00, 0x35, 0x00, 0x0c, 0x00, 0x00, // udp
        0xde, 0xad, 0xbe, 0xef, // payload
    ];

    #[test]
    fn byte_fixture() {
        assert_eq!(parse(&IPV4_UDP), hdrs(14, 0, L3::Ipv4, 20, 17, 8));
        // Every truncation stops the walk with what was found so far.
        assert_eq!(parse(&IPV4_UDP[..41]), hdrs(14, 0, L3::Ipv4, 20, 17, 0));
        assert_eq!(parse(&IPV4_UDP[..34]), hdrs(14, 0, L3::Ipv4, 20, 17, 0));
        assert_eq!(parse(&IPV4_UDP[..33]), hdrs(14, 0, L3::Other, 0, 0, 0));
        assert_eq!(parse(&IPV4_UDP[..14]), hdrs(14, 0, L3::Other, 0, 0, 0));
    }

    #[test]
    fn short_frames_are_all_zero() {
        for n in 0..ETH_HLEN {
            assert_eq!(parse(&IPV4_UDP[..n]), Headers::default(), "len {n}");
        }
    }

    #[test]
    fn ipv4_and_ipv6_with_tags() {
        for vlans in 0..=2u8 {
            let l2 = 14 + 4 * u16::from(vlans);
            let v = usize::from(vlans);
            let cases = [
                (Ip::V4, L4::Udp, hdrs(l2, vlans, L3::Ipv4, 20, 17, 8)),
                (Ip::V4, L4::Tcp, hdrs(l2, vlans, L3::Ipv4, 20, 6, 20)),
                (Ip::V4, L4::TcpOpts(12), hdrs(l2, vlans, L3::Ipv4, 20, 6, 32)),
                (Ip::V4Opts(4), L4::Udp, hdrs(l2, vlans, L3::Ipv4, 24, 17, 8)),
                (Ip::V4Opts(40), L4::Tcp, hdrs(l2, vlans, L3::Ipv4, 60, 6, 20)),
                (Ip::V6, L4::Udp, hdrs(l2, vlans, L3::Ipv6, 40, 17, 8)),
                (Ip::V6, L4::Tcp, hdrs(l2, vlans, L3::Ipv6, 40, 6, 20)),
                (Ip::V6, L4::TcpOpts(40), hdrs(l2, vlans, L3::Ipv6, 40, 6, 60)),
            ];
            for (ip, l4, want) in cases {
                for payload in [0, 1, 100] {
                    let f = frame(v, ip, l4, payload);
                    assert_eq!(parse(&f), want, "{vlans} tags, {ip:?}, {l4:?}, {payload} B");
                }
            }
        }
    }

    #[test]
    fn all_tpids_are_skipped() {
        let f = frame(2, Ip::V4, L4::Udp, 10);
        assert_eq!(u16::from_be_bytes([f[12], f[13]]), ethertype::QINQ);
        assert_eq!(u16::from_be_bytes([f[16], f[17]]), ethertype::VLAN);
        for outer in [ethertype::VLAN, ethertype::QINQ, 0x9100] {
            let mut g = f.clone();
            g[12..14].copy_from_slice(&outer.to_be_bytes());
            assert_eq!(parse(&g), hdrs(22, 2, L3::Ipv4, 20, 17, 8), "{outer:#x}");
        }
    }

    #[test]
    fn third_tag_and_truncated_tag_stop_the_walk() {
        let mut f = frame(2, Ip::V4, L4::Udp, 10);
        f[20..22].copy_from_slice(&ethertype::VLAN.to_be_bytes());
        assert_eq!(parse(&f), hdrs(22, 2, L3::Other, 0, 0, 0));

        let f = frame(1, Ip::V4, L4::Udp, 10);
        for n in 14..18 {
            assert_eq!(parse(&f[..n]), hdrs(14, 0, L3::Other, 0, 0, 0), "len {n}");
        }
        assert_eq!(parse(&f[..18]), hdrs(18, 1, L3::Other, 0, 0, 0));
    }

    #[test]
    fn non_ip_is_other() {
        let mut f = frame(0, Ip::V4, L4::Udp, 30);
        f[12..14].copy_from_slice(&ethertype::ARP.to_be_bytes());
        assert_eq!(parse(&f), hdrs(14, 0, L3::Other, 0, 0, 0));
    }

    #[test]
    fn bad_ipv4_headers_are_other() {
        // 18 bytes of L2, 28 bytes of IPv4 + UDP.
        let f = frame(1, Ip::V4, L4::Udp, 0);
        // Wrong version, IHL < 5, IHL 8 (32 bytes) beyond the frame.
        for ver_ihl in [0x65, 0x44, 0x40, 0x48] {
            let mut g = f.clone();
            g[18] = ver_ihl;
            assert_eq!(parse(&g), hdrs(18, 1, L3::Other, 0, 0, 0), "{ver_ihl:#x}");
        }
        // IHL 6 fits, but leaves only 4 bytes for the UDP header.
        let mut g = f.clone();
        g[18] = 0x46;
        assert_eq!(parse(&g), hdrs(18, 1, L3::Ipv4, 24, 17, 0));
        // IHL 7 exactly fills the frame.
        g[18] = 0x47;
        assert_eq!(parse(&g), hdrs(18, 1, L3::Ipv4, 28, 17, 0));
        // A version-6 packet with the IPv4 EtherType.
        let mut g = frame(0, Ip::V6, L4::Udp, 0);
        g[12..14].copy_from_slice(&ethertype::IPV4.to_be_bytes());
        assert_eq!(parse(&g), hdrs(14, 0, L3::Other, 0, 0, 0));
    }

    #[test]
    fn bad_or_short_ipv6_is_other() {
        let f = frame(0, Ip::V6, L4::Udp, 0);
        assert_eq!(parse(&f[..53]), hdrs(14, 0, L3::Other, 0, 0, 0));
        assert_eq!(parse(&f[..54]), hdrs(14, 0, L3::Ipv6, 40, 17, 0));
        let mut g = f.clone();
        g[14] = 0x40;
        assert_eq!(parse(&g), hdrs(14, 0, L3::Other, 0, 0, 0));
    }

    #[test]
    fn fragments() {
        let f = frame(0, Ip::V4, L4::Udp, 16);
        // First fragment (MF set, offset 0): the L4 header is here, its checksum cannot be made.
        let mut g = f.clone();
        g[20] = 0x20;
        assert_eq!(parse(&g), Headers { l4_whole: false, ..hdrs(14, 0, L3::Ipv4, 20, 17, 8) });
        // Non-first fragment: protocol known, L4 header not.
        for (hi, lo) in [(0x00, 0x01), (0x20, 0x10), (0x1f, 0xff)] {
            let mut g = f.clone();
            g[20] = hi;
            g[21] = lo;
            assert_eq!(parse(&g), Headers { l4_whole: false, ..hdrs(14, 0, L3::Ipv4, 20, 17, 0) });
        }
    }

    #[test]
    fn bad_or_short_tcp_has_no_l4_len() {
        let f = frame(0, Ip::V4, L4::TcpOpts(8), 0);
        assert_eq!(parse(&f), hdrs(14, 0, L3::Ipv4, 20, 6, 28));
        assert_eq!(parse(&f[..61]), hdrs(14, 0, L3::Ipv4, 20, 6, 0));
        for doff in [0x00, 0x40, 0xf0] {
            let mut g = f.clone();
            g[46] = doff;
            assert_eq!(parse(&g), hdrs(14, 0, L3::Ipv4, 20, 6, 0), "{doff:#x}");
        }
        // Data offset 5 is fine even with options bytes following.
        let mut g = f.clone();
        g[46] = 0x50;
        assert_eq!(parse(&g), hdrs(14, 0, L3::Ipv4, 20, 6, 20));
        assert_eq!(parse(&g[..53]), hdrs(14, 0, L3::Ipv4, 20, 6, 0));
    }

    #[test]
    fn other_protocols_have_no_l4_len() {
        let mut f = frame(0, Ip::V4, L4::Udp, 40);
        f[23] = 1; // ICMP
        assert_eq!(parse(&f), hdrs(14, 0, L3::Ipv4, 20, 1, 0));
        let mut f = frame(0, Ip::V6, L4::Udp, 40);
        f[20] = 59; // no next header
        assert_eq!(parse(&f), hdrs(14, 0, L3::Ipv6, 40, 59, 0));
    }

    #[test]
    fn ipv6_extension_headers_are_walked() {
        let f = frame(0, Ip::V6, L4::Udp, 20);
        let g = with_ext(&f, &[(0, 8), (60, 16), (43, 24)]);
        assert_eq!(parse(&g), hdrs(14, 0, L3::Ipv6, 88, 17, 8));
        let t = with_ext(&frame(0, Ip::V6, L4::Tcp, 0), &[(60, 8)]);
        assert_eq!(parse(&t), hdrs(14, 0, L3::Ipv6, 48, 6, 20));
        // etherparse agrees on the UDP header being found after them.
        let p = etherparse::PacketHeaders::from_ethernet_slice(&g).unwrap();
        assert!(matches!(p.transport, Some(etherparse::TransportHeader::Udp(_))));
        // A fragment header: the first fragment has the L4 header, a later one does not.
        let mut first = with_ext(&f, &[(44, 8)]);
        first[14 + 40 + 3] = 1; // M
        assert_eq!(parse(&first), Headers { l4_whole: false, ..hdrs(14, 0, L3::Ipv6, 48, 17, 8) });
        let mut later = with_ext(&f, &[(44, 8)]);
        later[14 + 40 + 2] = 0x01; // offset 32
        assert_eq!(parse(&later), Headers { l4_whole: false, ..hdrs(14, 0, L3::Ipv6, 48, 17, 0) });
        // A routing header with segments left: headers found, checksum not possible here.
        let mut routed = with_ext(&f, &[(43, 24)]);
        routed[14 + 40 + 3] = 1;
        assert_eq!(parse(&routed), Headers { l4_whole: false, ..hdrs(14, 0, L3::Ipv6, 64, 17, 8) });
        // Truncated in an extension header: the walk stops there, no L4.
        assert_eq!(parse(&g[..14 + 40 + 8 + 10]), hdrs(14, 0, L3::Ipv6, 48, 60, 0));
        // More than eight extension headers: the ninth is not walked.
        let many = with_ext(&f, &[(60, 8); 9]);
        assert_eq!(parse(&many), hdrs(14, 0, L3::Ipv6, 40 + 64, 60, 0));
    }

    fn layers() -> impl Strategy<Value = (usize, Ip, L4, usize)> {
        let ip = prop_oneof![Just(Ip::V4), (0..=10usize).prop_map(|n| Ip::V4Opts(4 * n)), Just(Ip::V6)];
        let l4 = prop_oneof![Just(L4::Udp), Just(L4::Tcp), (0..=10usize).prop_map(|n| L4::TcpOpts(4 * n))];
        (0..=2usize, ip, l4, 0..300usize)
    }

    proptest! {
        /// `parse` agrees with etherparse on well-formed frames.
        #[test]
        fn agrees_with_etherparse((vlans, ip, l4, len) in layers()) {
            let f = frame(vlans, ip, l4, len);
            let p = etherparse::PacketHeaders::from_ethernet_slice(&f).unwrap();
            let h = parse(&f);
            let (l3, l3_len) = match p.net.unwrap() {
                etherparse::NetHeaders::Ipv4(ip, _) => (L3::Ipv4, ip.header_len()),
                etherparse::NetHeaders::Ipv6(_, _) => (L3::Ipv6, 40),
            };
            let (l4_proto, l4_len) = match p.transport.unwrap() {
                etherparse::TransportHeader::Udp(_) => (17, 8),
                etherparse::TransportHeader::Tcp(t) => (6, t.header_len()),
                _ => unreachable!(),
            };
            prop_assert_eq!(usize::from(h.l2_len), f.len() - p.payload.slice().len() - l3_len - l4_len);
            prop_assert_eq!(usize::from(h.vlans), vlans);
            prop_assert_eq!(h.l3, l3);
            prop_assert_eq!(usize::from(h.l3_len), l3_len);
            prop_assert_eq!(h.l4_proto, l4_proto);
            prop_assert_eq!(usize::from(h.l4_len), l4_len);
        }
    }
}
