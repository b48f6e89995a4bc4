//! [`flow_hash`]: the hash of a frame's flow (addresses, protocol, ports) that the host uses (the
//! entropy of tunnel source ports, RFC 7348 section 5) and plugins can compute on a window
//! (`wasmdp_abi::hash` re-exports it), so both agree on which packets belong together.
//!
//! What is hashed: the IPv4 or IPv6 addresses, the protocol and, for TCP and UDP packets that are not
//! fragments, the two ports; frames that are not IP hash their MACs and EtherType. Up to two VLAN tags
//! (0x8100, 0x88A8, 0x9100) are skipped; IPv6 extension headers (hop-by-hop, routing, destination
//! options, fragment; at most 8) are walked. All packets of one flow hash alike, the fragments of a
//! flow with each other (their ports are not in every fragment, so never in the hash). Never panics.

use crate::{ethertype, parse, proto, ETH_HLEN as ETH, L3};

/// The flow hash of the frame starting with `frame` (a whole frame or its first bytes).
#[inline]
pub fn flow_hash(frame: &[u8]) -> u32 {
    // The common case straight: untagged IPv4 without options, not a fragment, with its ports.
    if let Some(f) = frame.first_chunk::<{ ETH + 24 }>() {
        // The fragment word (flags and offset) as one masked test: neither MF nor an offset.
        let fragment = u16::from_ne_bytes([f[ETH + 6], f[ETH + 7]]) & u16::from_ne_bytes([0x3F, 0xFF]) != 0;
        let plain = f[12..14] == ethertype::IPV4.to_be_bytes() && f[ETH] == 0x45 && !fragment;
        if plain {
            let proto = f[ETH + 9];
            let addrs = u64_at(f, ETH + 12);
            // The ports where the protocol has them, kept by a mask rather than a branch.
            let ports = u32_at(f, ETH + 20) & PORTS_KEPT[usize::from(proto)];
            return mix(addrs, u64::from(ports) << 8 | u64::from(proto));
        }
    }
    slow(frame)
}

/// Per IP protocol number, the mask a flow's ports are hashed through: all ones for TCP and UDP,
/// zero for the protocols whose first four bytes are not ports.
static PORTS_KEPT: [u32; 256] = {
    let mut t = [0; 256];
    t[proto::TCP as usize] = u32::MAX;
    t[proto::UDP as usize] = u32::MAX;
    t
};

/// Tags, options, IPv6, fragments, non-IP: the headers found by [`parse`](crate::parse())'s own
/// L2 and L3 walks, so the hash and the parse agree on where a frame's flow is.
#[cold]
fn slow(frame: &[u8]) -> u32 {
    let found = parse::l2(frame).and_then(|(etype, _, ip)| Some((ip, parse::l3(etype, ip)?)));
    match found {
        Some((ip, l3)) => {
            let addrs = match l3.kind {
                L3::Ipv6 => (0..4).fold(0u64, |acc, i| acc.rotate_left(17) ^ u64_at(ip, 8 + 8 * i)),
                _ => u64_at(ip, 12),
            };
            let ports = !l3.fragment && matches!(l3.proto, proto::TCP | proto::UDP) && ip.len() >= l3.len + 4;
            let ports = if ports { u32_at(ip, l3.len) } else { 0 };
            mix(addrs, u64::from(ports) << 8 | u64::from(l3.proto))
        }
        None => {
            let etype = parse::l2(frame).map_or_else(|| u16_at(frame, 12), |(etype, _, _)| etype);
            mix(u64_at(frame, 0) ^ u64_at(frame, 6).rotate_left(16), u64::from(etype))
        }
    }
}

/// The u64 at `at` (native byte order: only equality matters), 0 where the bytes end.
#[inline(always)]
fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..).and_then(<[u8]>::first_chunk::<8>).map_or(0, |c| u64::from_ne_bytes(*c))
}

/// The u32 at `at` (native byte order), 0 where the bytes end.
#[inline(always)]
fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..).and_then(<[u8]>::first_chunk::<4>).map_or(0, |c| u32::from_ne_bytes(*c))
}

/// The big-endian u16 at `at`, 0 where the bytes end.
#[inline(always)]
fn u16_at(b: &[u8], at: usize) -> u16 {
    b.get(at..).and_then(<[u8]>::first_chunk::<2>).map_or(0, |c| u16::from_be_bytes(*c))
}

/// Two words to 32 mixed bits: one 64x64->128 multiply with its halves folded (the folded-multiply
/// step of wyhash and foldhash): strong enough to spread flows, a few instructions long.
#[inline(always)]
fn mix(a: u64, b: u64) -> u32 {
    let (hi, lo) = mul_wide(a ^ 0x9E37_79B9_7F4A_7C15, b ^ 0xD6E8_FEB8_6659_FD93);
    let y = hi ^ lo;
    (y >> 32) as u32 ^ y as u32
}

/// The 128-bit product of `a` and `b` as (high, low) halves.
#[cfg(not(target_arch = "wasm32"))]
#[inline(always)]
fn mul_wide(a: u64, b: u64) -> (u64, u64) {
    let x = u128::from(a) * u128::from(b);
    ((x >> 64) as u64, x as u64)
}

/// The same product on WebAssembly, where a `u128` multiply is a call of compiler-rt's `__multi3`
/// (a large part of a flow-hashing plugin's work): four 32x32->64 multiplies, inline.
#[cfg(target_arch = "wasm32")]
#[inline(always)]
fn mul_wide(a: u64, b: u64) -> (u64, u64) {
    mul_wide_halves(a, b)
}

/// `mul_wide` from 32-bit halves (compiled everywhere, to be tested against `u128`).
#[cfg_attr(not(any(test, target_arch = "wasm32")), allow(dead_code))]
#[inline(always)]
fn mul_wide_halves(a: u64, b: u64) -> (u64, u64) {
    const LOW: u64 = 0xFFFF_FFFF;
    let (a0, a1, b0, b1) = (a & LOW, a >> 32, b & LOW, b >> 32);
    let (p00, p01, p10, p11) = (a0 * b0, a0 * b1, a1 * b0, a1 * b1);
    // Each term is below 2^32: no overflow.
    let mid = (p00 >> 32) + (p01 & LOW) + (p10 & LOW);
    (p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32), (p00 & LOW) | mid << 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_halves_product_is_the_u128_product() {
        let mut x = 0x0123_4567_89ab_cdefu64;
        let fixed = [(0, 0), (u64::MAX, u64::MAX), (u64::MAX, 1), (1 << 63, 2), (LOWISH, LOWISH)];
        let random = core::iter::repeat_with(move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x, x.rotate_left(23) ^ 0x9E37_79B9_7F4A_7C15)
        });
        for (a, b) in fixed.into_iter().chain(random.take(10_000)) {
            let p = u128::from(a) * u128::from(b);
            assert_eq!(mul_wide_halves(a, b), ((p >> 64) as u64, p as u64), "{a:#x} * {b:#x}");
        }
    }

    const LOWISH: u64 = 0xFFFF_FFFF;

    /// Untagged IPv4 UDP from `src:sport` to 10.0.0.2:53, with `tags` 802.1Q tags.
    fn udp4(src: [u8; 4], sport: u16, tags: usize) -> [u8; 64] {
        let mut f = [0u8; 64];
        let mut at = 12;
        for _ in 0..tags {
            f[at..at + 4].copy_from_slice(&[0x81, 0x00, 0x00, 0x05]);
            at += 4;
        }
        f[at..at + 2].copy_from_slice(&[0x08, 0x00]);
        let ip = at + 2;
        f[ip] = 0x45;
        f[ip + 9] = proto::UDP;
        f[ip + 12..ip + 16].copy_from_slice(&src);
        f[ip + 16..ip + 20].copy_from_slice(&[10, 0, 0, 2]);
        f[ip + 20..ip + 22].copy_from_slice(&sport.to_be_bytes());
        f[ip + 22..ip + 24].copy_from_slice(&53u16.to_be_bytes());
        f
    }

    #[test]
    fn the_flow_decides_not_the_payload_or_the_tags() {
        let a = udp4([10, 0, 0, 1], 1000, 0);
        let mut b = a;
        b[60] ^= 0xFF;
        assert_eq!(flow_hash(&a), flow_hash(&b));
        // The tagged frames take the slow path and must agree with the fast one.
        assert_eq!(flow_hash(&a), flow_hash(&udp4([10, 0, 0, 1], 1000, 1)));
        assert_eq!(flow_hash(&a), flow_hash(&udp4([10, 0, 0, 1], 1000, 2)));
        assert_ne!(flow_hash(&a), flow_hash(&udp4([10, 0, 0, 1], 1001, 0)));
        assert_ne!(flow_hash(&a), flow_hash(&udp4([10, 0, 0, 3], 1000, 0)));
    }

    #[test]
    fn fragments_hash_without_ports_and_alike() {
        let mut first = udp4([10, 0, 0, 1], 1000, 0);
        first[ETH + 6] = 0x20; // MF
        let mut later = udp4([10, 0, 0, 1], 7, 0);
        later[ETH + 7] = 0x10; // offset 16
        assert_eq!(flow_hash(&first), flow_hash(&later));
    }

    #[test]
    fn ipv6_extension_headers_are_walked() {
        let mut f = [0u8; 100];
        f[12..14].copy_from_slice(&[0x86, 0xDD]);
        f[ETH] = 0x60;
        f[ETH + 6] = 0; // hop-by-hop
        f[ETH + 8] = 1;
        f[ETH + 40] = proto::UDP; // next after hop-by-hop
        f[ETH + 41] = 0; // 8 bytes
        f[ETH + 48..ETH + 50].copy_from_slice(&1000u16.to_be_bytes());
        let mut g = f;
        g[ETH + 49] ^= 1; // another source port
        assert_ne!(flow_hash(&f), flow_hash(&g));
        let mut h = f;
        h[ETH + 80] ^= 1; // payload
        assert_eq!(flow_hash(&f), flow_hash(&h));
    }

    /// The straight path takes a frame only where the parse-based one agrees: any byte of the
    /// EtherType, the version and header length, the fragment word and the protocol changed
    /// (every value of each byte), the two give the same hash.
    #[test]
    fn the_straight_path_agrees_with_the_parse() {
        let base = udp4([10, 0, 0, 1], 1000, 0);
        for at in [12, 13, ETH, ETH + 1, ETH + 6, ETH + 7, ETH + 9] {
            for b in 0..=255u8 {
                let mut f = base;
                f[at] = b;
                assert_eq!(flow_hash(&f), slow(&f), "byte {at} = {b:#04x}");
            }
        }
    }

    #[test]
    fn any_prefix_hashes_without_panicking() {
        let f = udp4([10, 0, 0, 1], 1000, 2);
        for n in 0..=f.len() {
            flow_hash(&f[..n]);
        }
    }
}

#[cfg(test)]
mod frame_tests {
    use super::*;
    use etherparse::PacketBuilder;

    fn udp4(src: [u8; 4], sport: u16, vlan: Option<u16>) -> Vec<u8> {
        let b = PacketBuilder::ethernet2([1; 6], [2; 6]);
        let b = match vlan {
            Some(v) => b.single_vlan(etherparse::VlanId::try_new(v).unwrap()).ipv4(src, [10, 0, 0, 2], 64),
            None => b.ipv4(src, [10, 0, 0, 2], 64),
        };
        let mut f = Vec::new();
        b.udp(sport, 53).write(&mut f, &[7; 30]).unwrap();
        f
    }

    #[test]
    fn the_flow_decides_not_the_payload_or_the_tag() {
        let a = udp4([10, 0, 0, 1], 1000, None);
        let mut b = a.clone();
        *b.last_mut().unwrap() ^= 0xFF;
        assert_eq!(flow_hash(&a), flow_hash(&b), "payload must not matter");
        assert_eq!(flow_hash(&a), flow_hash(&udp4([10, 0, 0, 1], 1000, Some(5))), "the tag path agrees");
        assert_ne!(flow_hash(&a), flow_hash(&udp4([10, 0, 0, 1], 1001, None)));
        assert_ne!(flow_hash(&a), flow_hash(&udp4([10, 0, 0, 3], 1000, None)));
    }

    #[test]
    fn flows_spread_over_the_source_port_range() {
        // 4096 flows over 16384 ports: each quarter of the range gets its share within 10%.
        let mut quarters = [0u32; 4];
        for sport in 0..4096u16 {
            let p = crate::tunnel::src_port(flow_hash(&udp4([10, 0, 0, 1], sport, None)));
            assert!(p >= crate::tunnel::SRC_PORT_MIN);
            quarters[usize::from((p - crate::tunnel::SRC_PORT_MIN) / 4096)] += 1;
        }
        assert!(quarters.iter().all(|&q| (921..=1127).contains(&q)), "{quarters:?}");
    }

    #[test]
    fn short_and_odd_frames_hash_without_panicking() {
        for n in 0..80 {
            let f: Vec<u8> = (0..n).map(|i| i as u8).collect();
            flow_hash(&f);
        }
        let mut v6 = Vec::new();
        PacketBuilder::ethernet2([1; 6], [2; 6])
            .ipv6([1; 16], [2; 16], 64)
            .tcp(1, 2, 3, 4)
            .write(&mut v6, &[])
            .unwrap();
        let mut other = v6.clone();
        other[54] ^= 1; // the TCP source port
        assert_ne!(flow_hash(&v6), flow_hash(&other));
    }
}
