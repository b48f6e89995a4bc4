//! [`flow_hash`]: the hash of a frame's flow (addresses, protocol, ports), for the entropy of tunnel
//! source ports (RFC 7348, section 5) and anything else that spreads flows. Defined once, in the ABI
//! crate, so that a plugin computing it on a window gets the host's value.

pub use wasmdp_abi::hash::flow_hash;

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
