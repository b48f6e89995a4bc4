//! Frame headers for the host and the plugins, one implementation of each rule (`wasmdp-wire`,
//! no_std; with the feature `alloc`, on by default, the parts that allocate).
//!
//! For the host, [`parse()`] walks Ethernet, up to two VLAN/QinQ tags and IPv4/IPv6 once and returns
//! the header lengths as [`Headers`]; everything else works on the offsets that follow from them:
//! [`swap_five_tuple`] (testpmd's 5tswap), the software checksum offloads [`fill_ipv4_cksum`] and
//! [`fill_l4_cksum`], [`insert_tag`] for VLAN insertion, [`build_udp`] for generated traffic,
//! [`flow_hash`] for spreading flows, and [`tunnel`] for VXLAN and Geneve outer headers.
//!
//! For plugins (the SDK's `net` is [`view`]), header views checked once and then read at fixed
//! offsets, a fast path for the frames that dominate traffic, and [`cksum`], the Internet checksum
//! full and incremental, which the host's fills use too. The host's walk and the views are tuned for
//! different machines; a test holds them to the same answer on every frame (`agree.rs`), and the flow
//! hash walks with the host's parse.
//!
//! All of it works on plain `&[u8]`/`&mut [u8]`, never panics on malformed or truncated frames, never
//! changes a frame's length and (except [`build_udp`] and building a [`tunnel::Outer`]) never
//! allocates. The host's field offsets live in `field`; each header's length is checked once, then
//! read through fixed-size arrays.

#![cfg_attr(not(test), no_std)]
// Without `alloc`, the helpers only the allocating parts use go unused.
#![cfg_attr(not(feature = "alloc"), allow(dead_code, unused_imports))]

#[cfg(any(test, feature = "alloc"))]
extern crate alloc;

#[cfg(test)]
mod agree;
#[cfg(feature = "alloc")]
mod build;
pub mod cksum;
mod field;
#[cfg(feature = "alloc")]
mod gso;
pub mod hash;
mod parse;
mod reply;
mod swap;
mod tag;
#[cfg(any(test, feature = "testutil"))]
pub mod testutil;
pub mod tunnel;
pub mod view;

#[cfg(feature = "alloc")]
pub use build::build_udp;
pub use cksum::{fill_ipv4_cksum, fill_l4_cksum, finish_partial_l4, L4Checksum};
#[cfg(feature = "alloc")]
pub use gso::{complete_checksum, segment, segment_count, GsoError};
pub use hash::flow_hash;
pub use parse::parse;
pub use reply::{arp_reply, icmp4_echo_reply, icmp6_reply, NS_REPLY_LEN};
pub use swap::swap_five_tuple;
pub use tag::insert_tag;

/// Ethernet header length without tags.
pub const ETH_HLEN: usize = 14;

/// EtherType values (IEEE registry).
pub mod ethertype {
    /// IPv4.
    pub const IPV4: u16 = 0x0800;
    /// ARP.
    pub const ARP: u16 = 0x0806;
    /// IPv6.
    pub const IPV6: u16 = 0x86DD;
    /// 802.1Q customer VLAN tag (C-tag).
    pub const VLAN: u16 = 0x8100;
    /// 802.1ad service VLAN tag (S-tag, "QinQ").
    pub const QINQ: u16 = 0x88A8;
    /// The pre-standard QinQ outer tag some switches still send.
    pub const QINQ_9100: u16 = 0x9100;
    /// Transparent Ethernet Bridging: an Ethernet frame (Geneve's protocol type for L2 payloads).
    pub const TEB: u16 = 0x6558;
}

/// IP protocol numbers (IANA), also the IPv6 next-header values.
pub mod proto {
    /// IPv6 Hop-by-Hop Options.
    pub const HOPOPT: u8 = 0;
    /// ICMP (IPv4).
    pub const ICMP: u8 = 1;
    /// TCP.
    pub const TCP: u8 = 6;
    /// UDP.
    pub const UDP: u8 = 17;
    /// IPv6 Routing header.
    pub const IPV6_ROUTE: u8 = 43;
    /// IPv6 Fragment header.
    pub const IPV6_FRAG: u8 = 44;
    /// ICMPv6.
    pub const ICMPV6: u8 = 58;
    /// IPv6 "no next header".
    pub const IPV6_NONXT: u8 = 59;
    /// IPv6 Destination Options.
    pub const IPV6_OPTS: u8 = 60;
}

/// The network layer of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum L3 {
    /// Not IP, or truncated.
    #[default]
    Other,
    /// IPv4 with a valid IHL that fits the frame.
    Ipv4,
    /// IPv6 with a complete fixed header.
    Ipv6,
}

/// Where the headers of a frame are, found by [`parse()`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Headers {
    /// Ethernet header plus VLAN tags; 0 when the frame is shorter than 14 bytes.
    pub l2_len: u16,
    /// Number of VLAN/QinQ tags skipped (at most 2).
    pub vlans: u8,
    /// The network layer found.
    pub l3: L3,
    /// IPv4 header with options, or the IPv6 header with its extension headers; 0 for `L3::Other`.
    pub l3_len: u16,
    /// IP protocol, or the IPv6 next header after the extension headers (6 TCP, 17 UDP, ...); 0 when
    /// unknown.
    pub l4_proto: u8,
    /// TCP header length (data offset) or 8 for UDP, when the whole L4 header is in the frame; else 0.
    pub l4_len: u8,
    /// Whether the L4 checksum can be computed from this frame alone: false for fragments (IPv4 with
    /// MF or an offset, IPv6 with a Fragment header) and for IPv6 with a Routing header that has
    /// segments left (its pseudo-header uses the final destination, not the IPv6 header's).
    pub l4_whole: bool,
}

/// What a generated UDP frame looks like (the null/ring port template and the txonly engine).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameSpec {
    /// Frame length in bytes without FCS, 60..=9000 (tags included).
    pub size: usize,
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// Source IPv4 address.
    pub src_ip: [u8; 4],
    /// Destination IPv4 address.
    pub dst_ip: [u8; 4],
    /// UDP source port (the first flow's).
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
    /// 802.1Q TCI to tag the frame with, if any.
    pub vlan: Option<u16>,
}

/// Offset of the UDP source port in a frame built by [`build_udp`] with this spec.
pub fn udp_src_port_offset(spec: &FrameSpec) -> usize {
    ETH_HLEN + if spec.vlan.is_some() { 4 } else { 0 } + 20
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Frames that reach every branch: a few tags with real TPIDs, an IP-ish EtherType, version/IHL,
    /// flags and protocol bytes from interesting sets, random everything else, cut anywhere.
    fn frames() -> impl Strategy<Value = Vec<u8>> {
        let tpid = prop::sample::select(vec![ethertype::VLAN, ethertype::QINQ, 0x9100]);
        let etype = prop::sample::select(vec![ethertype::IPV4, ethertype::IPV6, ethertype::ARP, 0x8100]);
        let proto = prop::sample::select(vec![6u8, 17, 1, 0]);
        (
            prop::collection::vec(tpid, 0..=3),
            etype,
            prop_oneof![prop::sample::select(vec![0x45u8, 0x46, 0x4F, 0x44, 0x60, 0x6F]), any::<u8>()],
            prop::sample::select(vec![0x00u8, 0x20, 0x40, 0x01, 0x3F]),
            proto,
            prop::collection::vec(any::<u8>(), 0..200),
            0usize..200,
        )
            .prop_map(|(tags, etype, ver_ihl, frag_hi, proto, mut bytes, cut)| {
                let mut pos = 12;
                let put = |b: &mut Vec<u8>, at: usize, v: &[u8]| {
                    if let Some(d) = b.get_mut(at..at + v.len()) {
                        d.copy_from_slice(v);
                    }
                };
                for t in tags {
                    put(&mut bytes, pos, &t.to_be_bytes());
                    pos += 4;
                }
                put(&mut bytes, pos, &etype.to_be_bytes());
                let l3 = pos + 2;
                put(&mut bytes, l3, &[ver_ihl]);
                if etype == ethertype::IPV6 {
                    put(&mut bytes, l3 + 6, &[proto]);
                } else {
                    put(&mut bytes, l3 + 6, &[frag_hi]);
                    put(&mut bytes, l3 + 9, &[proto]);
                }
                bytes.truncate(cut);
                bytes
            })
    }

    /// Whether `g` differs from `f` only in the IPv4 header checksum and the TCP/UDP checksum that
    /// `h` places.
    fn only_checksums_changed(f: &[u8], g: &[u8], h: &Headers) -> bool {
        let l3 = usize::from(h.l2_len);
        let l4 = l3 + usize::from(h.l3_len);
        let ip = l3 + 10..l3 + 12;
        let l4c = match h.l4_proto {
            6 => l4 + 16..l4 + 18,
            17 => l4 + 6..l4 + 8,
            _ => 0..0,
        };
        f.iter().zip(g).enumerate().all(|(i, (a, b))| a == b || ip.contains(&i) || l4c.contains(&i))
    }

    fn any_headers() -> impl Strategy<Value = Headers> {
        let l3 = prop::sample::select(vec![L3::Other, L3::Ipv4, L3::Ipv6]);
        (0u16..300, 0u8..3, l3, 0u16..300, prop::sample::select(vec![6u8, 17, 0]), 0u8..80, any::<bool>()).prop_map(
            |(l2_len, vlans, l3, l3_len, l4_proto, l4_len, l4_whole)| Headers {
                l2_len,
                vlans,
                l3,
                l3_len,
                l4_proto,
                l4_len,
                l4_whole,
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Nothing panics or changes the length, on arbitrary bytes; the parse result is in range;
        /// 5tswap is an involution and does not change what parse sees.
        #[test]
        fn arbitrary_bytes(f in prop_oneof![frames(), prop::collection::vec(any::<u8>(), 0..200)]) {
            let h = parse(&f);
            prop_assert!(usize::from(h.l2_len) + usize::from(h.l3_len) + usize::from(h.l4_len) <= f.len());
            prop_assert!(h.vlans <= 2);
            if f.len() < ETH_HLEN {
                prop_assert_eq!(h, Headers::default());
            }

            let mut g = f.clone();
            swap_five_tuple(&mut g);
            prop_assert_eq!(parse(&g), h);
            swap_five_tuple(&mut g);
            prop_assert_eq!(&g, &f);

            let ip_ok = fill_ipv4_cksum(&mut g, &h);
            prop_assert_eq!(ip_ok, h.l3 == L3::Ipv4);
            let l4_ok = fill_l4_cksum(&mut g, &h);
            if !ip_ok && !l4_ok {
                prop_assert_eq!(&g, &f);
            }
            prop_assert_eq!(parse(&g), h);
            prop_assert!(only_checksums_changed(&f, &g, &h));
        }

        /// The fills never panic with headers that do not match the frame.
        #[test]
        fn mismatched_headers(f in prop::collection::vec(any::<u8>(), 0..200), h in any_headers()) {
            let mut g = f.clone();
            let ip_ok = fill_ipv4_cksum(&mut g, &h);
            let l4_ok = fill_l4_cksum(&mut g, &h);
            if !ip_ok && !l4_ok {
                prop_assert_eq!(&g, &f);
            }
            prop_assert!(only_checksums_changed(&f, &g, &h));
        }

        /// The MACs move 4 bytes to the front, the tag follows them, the rest is untouched.
        #[test]
        fn insert_tag_moves_the_macs_and_writes_the_tag(f in prop::collection::vec(any::<u8>(), 0..200), tci: u16) {
            let mut g = f.clone();
            insert_tag(&mut g, ethertype::VLAN, tci);
            if f.len() < 16 {
                prop_assert_eq!(&g, &f);
            } else {
                prop_assert_eq!(&g[..12], &f[4..16]);
                prop_assert_eq!(&g[12..14], &ethertype::VLAN.to_be_bytes()[..]);
                prop_assert_eq!(&g[14..16], &tci.to_be_bytes()[..]);
                prop_assert_eq!(&g[16..], &f[16..]);
            }
        }
    }
}
