//! Test fixtures shared by the `wire` tests: frames built by etherparse, and checksum checks done by
//! etherparse (independently of our own checksum code).

// Outside this crate's own tests only `assert_checksums` is used (the other fixtures are its tests').
#![cfg_attr(not(test), allow(dead_code))]

use alloc::vec;
use alloc::vec::Vec;
use etherparse::{
    ip_number, IpHeaders, Ipv4Header, Ipv6Header, NetHeaders, PacketBuilder, PacketBuilderStep, PacketHeaders,
    TransportHeader, VlanId,
};

pub(super) const SRC_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x01];
pub(super) const DST_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x02];
pub(super) const SRC_IP4: [u8; 4] = [192, 168, 1, 10];
pub(super) const DST_IP4: [u8; 4] = [10, 0, 0, 200];
pub(super) const SRC_IP6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xab, 0x01];
pub(super) const DST_IP6: [u8; 16] = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0, 0, 0, 0, 0xcd, 0x02];
pub(super) const SRC_PORT: u16 = 1234;
pub(super) const DST_PORT: u16 = 80;

/// Network layer of a fixture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ip {
    V4,
    /// IPv4 with this many bytes of options (a multiple of 4, at most 40).
    V4Opts(usize),
    V6,
}

/// Transport layer of a fixture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum L4 {
    Udp,
    Tcp,
    /// TCP with this many bytes of options (a multiple of 4, at most 40).
    TcpOpts(usize),
}

/// Payload bytes of a fixture: `len` bytes with an odd-looking pattern.
pub(super) fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(37).wrapping_add(11)).collect()
}

/// Builds an Ethernet frame with `vlans` (0, 1: 802.1Q, 2: 802.1ad + 802.1Q) tags, the given layers,
/// `payload_len` payload bytes and correct checksums (computed by etherparse).
pub(super) fn frame(vlans: usize, ip: Ip, l4: L4, payload_len: usize) -> Vec<u8> {
    let ip_headers = match ip {
        Ip::V4 | Ip::V4Opts(_) => {
            let mut h = Ipv4Header::new(0, 64, ip_number::UDP, SRC_IP4, DST_IP4).unwrap();
            if let Ip::V4Opts(n) = ip {
                // NOPs then an end-of-options list: valid option bytes of any length.
                let mut opts = vec![1u8; n];
                if let Some(last) = opts.last_mut() {
                    *last = 0;
                }
                h.options = opts.as_slice().try_into().unwrap();
            }
            IpHeaders::Ipv4(h, Default::default())
        }
        Ip::V6 => IpHeaders::Ipv6(
            Ipv6Header { hop_limit: 64, source: SRC_IP6, destination: DST_IP6, ..Default::default() },
            Default::default(),
        ),
    };
    let step = ip_step(vlans, ip_headers);
    let data = payload(payload_len);
    let mut out = Vec::new();
    match l4 {
        L4::Udp => step.udp(SRC_PORT, DST_PORT).write(&mut out, &data).unwrap(),
        L4::Tcp | L4::TcpOpts(_) => {
            let mut tcp = step.tcp(SRC_PORT, DST_PORT, 0x0102_0304, 4096).ack(0x0a0b_0c0d);
            if let L4::TcpOpts(n) = l4 {
                tcp = tcp.options_raw(&vec![1u8; n]).unwrap();
            }
            tcp.write(&mut out, &data).unwrap();
        }
    }
    out
}

fn ip_step(vlans: usize, ip: IpHeaders) -> PacketBuilderStep<IpHeaders> {
    let eth = PacketBuilder::ethernet2(SRC_MAC, DST_MAC);
    let vid = |v| VlanId::try_new(v).unwrap();
    match vlans {
        0 => eth.ip(ip),
        1 => eth.single_vlan(vid(100)).ip(ip),
        _ => eth.double_vlan(vid(200), vid(100)).ip(ip),
    }
}

/// Checks with etherparse that the frame's IPv4 header checksum (if any) and TCP/UDP checksum are
/// correct. Panics with a description otherwise.
pub fn assert_checksums(frame: &[u8]) {
    let p = PacketHeaders::from_ethernet_slice(frame).expect("etherparse rejects the frame");
    let payload = p.payload.slice();
    let transport = p.transport.expect("no transport header");
    match p.net.expect("no network header") {
        NetHeaders::Ipv4(ip, _) => {
            assert_eq!(ip.header_checksum, ip.calc_header_checksum(), "IPv4 header checksum");
            match transport {
                TransportHeader::Udp(u) => {
                    let want = u.calc_checksum_ipv4(&ip, payload).unwrap();
                    assert_eq!(u.checksum, want, "UDP/IPv4 checksum");
                }
                TransportHeader::Tcp(t) => {
                    let want = t.calc_checksum_ipv4(&ip, payload).unwrap();
                    assert_eq!(t.checksum, want, "TCP/IPv4 checksum");
                }
                other => panic!("unexpected transport {other:?}"),
            }
        }
        NetHeaders::Ipv6(ip, _) => match transport {
            TransportHeader::Udp(u) => {
                let want = u.calc_checksum_ipv6(&ip, payload).unwrap();
                assert_eq!(u.checksum, want, "UDP/IPv6 checksum");
            }
            TransportHeader::Tcp(t) => {
                let want = t.calc_checksum_ipv6(&ip, payload).unwrap();
                assert_eq!(t.checksum, want, "TCP/IPv6 checksum");
            }
            other => panic!("unexpected transport {other:?}"),
        },
    }
}

/// `frame` (untagged) with IPv6 extension headers (next-header, length in bytes) inserted after the fixed
/// header, chained, the last pointing at the original next header; the payload length grown.
pub(crate) fn with_ext(f: &[u8], exts: &[(u8, usize)]) -> Vec<u8> {
    let l3 = 14;
    let mut out = f[..l3 + 40].to_vec();
    let last = f[l3 + 6];
    out[l3 + 6] = exts[0].0;
    for (k, &(_, len)) in exts.iter().enumerate() {
        let next = exts.get(k + 1).map_or(last, |e| e.0);
        let mut e = vec![0u8; len];
        e[0] = next;
        e[1] = (len / 8 - 1) as u8;
        out.extend_from_slice(&e);
    }
    out.extend_from_slice(&f[l3 + 40..]);
    let plen = u16::from_be_bytes([f[l3 + 4], f[l3 + 5]]) as usize + exts.iter().map(|e| e.1).sum::<usize>();
    out[l3 + 4..l3 + 6].copy_from_slice(&(plen as u16).to_be_bytes());
    out
}
