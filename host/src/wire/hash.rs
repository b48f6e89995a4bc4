//! [`flow_hash`]: a hash of a frame's flow (addresses, protocol, ports), for the entropy of tunnel
//! source ports (RFC 7348, section 5) and anything else that spreads flows.

use super::field::{be16, eth, ipv4, ipv6, proto};
use super::{ethertype, parse, ETH_HLEN, L3};

/// Hashes the frame's 5-tuple: IPv4 or IPv6 addresses, protocol and, for TCP/UDP with the header in
/// this frame, the ports. Frames that are not IP hash their MACs and EtherType. Packets of one flow
/// hash alike; fragments of a flow hash alike with each other (without ports), not with its whole
/// packets. Never panics.
#[inline]
pub fn flow_hash(frame: &[u8]) -> u32 {
    // The common case straight: untagged IPv4 without options, not a fragment.
    if let Some(f) = frame.first_chunk::<{ ETH_HLEN + ipv4::MIN_LEN + 4 }>() {
        let ip = ETH_HLEN;
        let plain = be16(f, eth::ETHERTYPE) == ethertype::IPV4
            && f[ip + ipv4::VER_IHL] == 0x45
            && be16(f, ip + ipv4::FLAGS_FRAG) & (ipv4::MORE_FRAGMENTS | ipv4::FRAG_OFFSET_MASK) == 0;
        if plain {
            let p = f[ip + ipv4::PROTOCOL];
            let addrs = read_u64(f, ip + ipv4::SRC);
            let ports = if matches!(p, proto::TCP | proto::UDP) { read_u32(f, ip + ipv4::MIN_LEN) } else { 0 };
            return mix(addrs, u64::from(ports) << 8 | u64::from(p));
        }
    }
    slow(frame)
}

/// Tags, options, IPv6, fragments, non-IP.
#[cold]
fn slow(frame: &[u8]) -> u32 {
    let h = parse(frame);
    let l3 = usize::from(h.l2_len);
    let l4 = l3 + usize::from(h.l3_len);
    let ports = if h.l4_len != 0 && matches!(h.l4_proto, proto::TCP | proto::UDP) { read_u32(frame, l4) } else { 0 };
    let tail = u64::from(ports) << 8 | u64::from(h.l4_proto);
    match h.l3 {
        L3::Ipv4 => mix(read_u64(frame, l3 + ipv4::SRC), tail),
        L3::Ipv6 => {
            let a = l3 + ipv6::SRC;
            let addrs = (0..4).fold(0u64, |acc, i| acc.rotate_left(17) ^ read_u64(frame, a + 8 * i));
            mix(addrs, tail)
        }
        L3::Other => {
            let etype = frame
                .get(l3.saturating_sub(2)..)
                .and_then(<[u8]>::first_chunk::<2>)
                .map_or(0, |b| u64::from(u16::from_be_bytes(*b)));
            mix(read_u64(frame, eth::DST) ^ read_u64(frame, eth::SRC).rotate_left(16), etype)
        }
    }
}

/// The u64 at `at` (native byte order: only equality matters), 0 where the frame ends.
#[inline(always)]
fn read_u64(f: &[u8], at: usize) -> u64 {
    f.get(at..).and_then(<[u8]>::first_chunk::<8>).map_or(0, |b| u64::from_ne_bytes(*b))
}

/// The u32 at `at` (native byte order), 0 where the frame ends.
#[inline(always)]
fn read_u32(f: &[u8], at: usize) -> u32 {
    f.get(at..).and_then(<[u8]>::first_chunk::<4>).map_or(0, |b| u32::from_ne_bytes(*b))
}

/// Two words to 32 mixed bits: one 64x64->128 multiply, its halves folded (the folded-multiply step
/// of wyhash and foldhash), strong enough to spread flows and a few instructions long.
#[inline(always)]
fn mix(a: u64, b: u64) -> u32 {
    let x = u128::from(a ^ 0x9E37_79B9_7F4A_7C15) * u128::from(b ^ 0xD6E8_FEB8_6659_FD93);
    let y = (x >> 64) as u64 ^ x as u64;
    (y >> 32) as u32 ^ y as u32
}

#[cfg(test)]
mod tests {
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
            let p = crate::wire::tunnel::src_port(flow_hash(&udp4([10, 0, 0, 1], sport, None)));
            assert!(p >= crate::wire::tunnel::SRC_PORT_MIN);
            quarters[usize::from((p - crate::wire::tunnel::SRC_PORT_MIN) / 4096)] += 1;
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
