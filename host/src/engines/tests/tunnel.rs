//! The tunnel engines on bursts: encapsulation read back by etherparse, encapsulation then
//! decapsulation byte for byte, what is not ours, headroom, offloads, metadata.

use super::*;
use crate::config::TunnelOthers;
use crate::wire::tunnel::{Expect, Kind, Matcher, Outer, OuterSpec};
use etherparse::PacketBuilder;
use std::net::IpAddr;

const A4: [u8; 4] = [192, 0, 2, 1];
const B4: [u8; 4] = [192, 0, 2, 2];
const A6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xa];
const B6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xb];
const VNI: u32 = 4242;

fn ends(v6: bool) -> (IpAddr, IpAddr) {
    if v6 {
        (A6.into(), B6.into())
    } else {
        (A4.into(), B4.into())
    }
}

/// Tunnels of a stream whose TX port is end A (encapsulating towards B) and whose RX port is end B.
fn tunnels(kind: Kind, v6: bool, udp_checksum: bool, others: TunnelOthers) -> Tunnels {
    let (a, b) = ends(v6);
    let spec = OuterSpec {
        kind,
        src_mac: [0x77; 6],
        dst_mac: [0x88; 6],
        src_ip: a,
        dst_ip: b,
        dst_port: kind.default_port(),
        vni: VNI,
        ttl: 64,
        udp_checksum,
    };
    let mut t = Tunnels { others, ..Tunnels::default() };
    t.encap[kind.index()] = Some(Outer::new(&spec).unwrap());
    let zero_csum_v6 = !udp_checksum;
    t.decap[kind.index()] =
        Some(Matcher::new(Expect { kind, local: b, dst_port: kind.default_port(), vni: Some(VNI), zero_csum_v6 }));
    t
}

/// Inner frames of every shape a tunnel carries: IPv4 and IPv6, TCP, UDP and ICMP, tagged and not,
/// ARP, 60 to 1500 bytes.
fn varied() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (k, len) in [0usize, 1, 17, 100, 333, 800, 1400, 1446].into_iter().enumerate() {
        let eth = || PacketBuilder::ethernet2([2, 0, 0, 0, 0, k as u8], [2, 0, 0, 0, 1, k as u8]);
        let payload: Vec<u8> = (0..len).map(|i| (i * 7 + k) as u8).collect();
        let mut f = Vec::new();
        match k % 4 {
            0 => eth().ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64).udp(1000 + k as u16, 53).write(&mut f, &payload),
            1 => eth().ipv6([1; 16], [2; 16], 64).tcp(80, 4000, 1, 100).write(&mut f, &payload),
            2 => eth()
                .single_vlan(etherparse::VlanId::try_new(5).unwrap())
                .ipv4([10, 1, 0, 1], [10, 1, 0, 2], 9)
                .icmpv4_echo_request(1, 2)
                .write(&mut f, &payload),
            _ => eth()
                .single_vlan(etherparse::VlanId::try_new(6).unwrap())
                .ipv6([3; 16], [4; 16], 1)
                .udp(5, 6)
                .write(&mut f, &payload),
        }
        .unwrap();
        f.resize(f.len().max(60), 0);
        out.push(f);
    }
    let mut arp = vec![0xff; 6];
    arp.extend_from_slice(&[2, 0, 0, 0, 0, 9, 0x08, 0x06]);
    arp.resize(60, 0x11);
    out.push(arp);
    out
}

/// On every kernel variant this CPU has: the engines' loops are compiled per variant (AVX2 and
/// AVX-512 compare 32 bytes at a time).
#[test]
fn encap_then_decap_gives_back_every_frame_byte_for_byte() {
    for simd in Simd::supported() {
        for kind in Kind::ALL {
            for v6 in [false, true] {
                for csum in [false, true] {
                    let at = format!("{simd} {kind:?} v6={v6} csum={csum}");
                    let mut b = Bench::new();
                    b.tunnels = tunnels(kind, v6, csum, TunnelOthers::Drop);
                    let frames = varied();
                    let mut burst = b.burst(&frames);
                    let (drops, _) = b.run(&format!("{}_encap", kind.name()), simd, TxOffloads::default(), &mut burst);
                    assert_eq!((drops.total(), b.tunnel.encapsulated), (0, frames.len() as u64), "{at}");
                    let outer = if v6 { 70 } else { 50 };
                    assert!(burst.iter().zip(&frames).all(|(p, f)| p.len() == f.len() + outer));
                    let (drops, _) = b.run(&format!("{}_decap", kind.name()), simd, TxOffloads::default(), &mut burst);
                    assert_eq!((drops.total(), b.tunnel.decapsulated), (0, frames.len() as u64), "{at}");
                    for p in burst.iter() {
                        let f = p.flow();
                        assert_eq!((f.outer_l2_len, f.outer_l3_len), (14, if v6 { 40 } else { 20 }));
                        assert_eq!((f.tunnel_type, f.tunnel_id), (kind.tunnel_type(), VNI));
                        assert_ne!(p.meta().ol_flags & flags::RX_TUNNEL, 0);
                    }
                    assert_eq!(b.finish(burst), frames, "{at}");
                }
            }
        }
    }
}

/// Decapsulation marks for the TX port as every engine does, whether or not it has offloads (the
/// two are separate loops): stale flags go, `RX_TUNNEL` and the port's flags come, with the inner
/// frame's header lengths when it has offloads.
#[test]
fn decapsulated_packets_are_marked_for_the_tx_port_with_and_without_offloads() {
    let stale = flags::TX_TCP_CKSUM | flags::TX_VLAN | flags::RX_VLAN;
    for offloads in [false, true] {
        let mut b = Bench::new();
        b.tunnels = tunnels(Kind::Vxlan, false, false, TunnelOthers::Drop);
        let frames = varied();
        let mut burst = b.burst(&frames);
        b.run("vxlan_encap", Simd::detect(), TxOffloads::default(), &mut burst);
        for p in burst.iter_mut() {
            p.meta_mut().set_ol_flags(stale);
        }
        let tx = TxOffloads { flags: if offloads { flags::TX_IP_CKSUM } else { 0 }, ..Default::default() };
        b.run("vxlan_decap", Simd::detect(), tx, &mut burst);
        assert_eq!(b.tunnel.decapsulated, frames.len() as u64);
        for (p, f) in burst.iter().zip(&frames) {
            let m = p.meta();
            let inner = crate::wire::parse(f);
            let l3 = match inner.l3 {
                crate::wire::L3::Ipv4 => flags::TX_IPV4,
                crate::wire::L3::Ipv6 => flags::TX_IPV6,
                crate::wire::L3::Other => 0,
            };
            let want = if offloads { flags::RX_TUNNEL | flags::TX_IP_CKSUM | l3 } else { flags::RX_TUNNEL };
            assert_eq!(m.ol_flags, want, "offloads {offloads}, frame {:02x?}", &f[..14]);
            if offloads {
                assert_eq!((m.l2_len, m.l3_len), (inner.l2_len as u8, inner.l3_len), "the inner frame's lengths");
            }
        }
        assert_eq!(b.finish(burst), frames);
    }
}

#[test]
fn encapsulated_frames_read_back_with_entropy_in_the_source_port() {
    let mut b = Bench::new();
    b.tunnels = tunnels(Kind::Vxlan, false, true, TunnelOthers::Drop);
    let frames = varied();
    let mut burst = b.burst(&[frames.clone(), frames.clone()].concat());
    b.run("vxlan_encap", Simd::detect(), TxOffloads::default(), &mut burst);
    let out = b.finish(burst);
    let sport = |f: &[u8]| u16::from_be_bytes([f[34], f[35]]);
    for (i, o) in out.iter().enumerate() {
        crate::wire::testutil::assert_checksums(o);
        assert_eq!(&o[..12], &[[0x88; 6], [0x77; 6]].concat()[..]);
        assert!(sport(o) >= 49152, "source port {} outside the dynamic range", sport(o));
        assert_eq!(sport(o), sport(&out[i % frames.len()]), "one flow, one source port");
        assert_eq!(&o[50..], &frames[i % frames.len()][..]);
    }
    let ports: std::collections::HashSet<_> = out.iter().map(|o| sport(o)).collect();
    // Six flows: the UDP frames of k = 0 and 4 (other source ports), and one each for the IPv6 TCP,
    // the ICMP, the IPv6 UDP frames (same 5-tuple whatever k) and ARP.
    assert_eq!(ports.len(), 6, "one port per flow: {ports:?}");
}

#[test]
fn outer_checksums_go_to_the_offload_and_the_inner_is_untouched() {
    let mut b = Bench::new();
    b.tunnels = tunnels(Kind::Geneve, false, false, TunnelOthers::Drop);
    let frames = varied();
    let mut burst = b.burst(&frames);
    let tx = TxOffloads { flags: flags::TX_IP_CKSUM | flags::TX_UDP_CKSUM, ..Default::default() };
    b.run("geneve_encap", Simd::detect(), tx, &mut burst);
    for (p, f) in burst.iter_mut().zip(&frames) {
        let m = p.meta();
        assert_eq!(m.ol_flags, flags::TX_IP_CKSUM | flags::TX_UDP_CKSUM | flags::TX_IPV4);
        assert_eq!((m.l2_len, m.l3_len, m.l4_len), (14, 20, 8));
        assert_eq!(&p.data()[24..26], &[0, 0], "the IPv4 checksum is the offload's to fill");
        crate::offload::apply_sw(p, crate::offload::Caps { software: true, macsec: false }).unwrap();
        crate::wire::testutil::assert_checksums(p.data());
        assert_eq!(&p.data()[50..], &f[..], "inner bytes changed");
    }
    b.finish(burst);
}

#[test]
fn no_headroom_is_a_counted_drop_and_every_buffer_comes_back() {
    let pool = Pool::new(PoolConfig { size: 256, cache_size: 32, headroom: 48, ..Default::default() }).unwrap();
    let mut b = Bench::with(pool.cache(), Template::new(&spec(64, None), 1));
    b.tunnels = tunnels(Kind::Vxlan, false, false, TunnelOthers::Drop);
    let frames = varied();
    let mut burst = b.burst(&frames);
    let (drops, _) = b.run("vxlan_encap", Simd::detect(), TxOffloads::default(), &mut burst);
    assert_eq!((drops.headroom, drops.total(), burst.len()), (frames.len() as u64, frames.len() as u64, 0));
    drop(b);
    assert_eq!(pool.available(), 256, "a dropped packet leaked");
}

#[test]
fn frames_not_ours_are_dropped_or_passed_unchanged_in_order() {
    let mut enc = Bench::new();
    enc.tunnels = tunnels(Kind::Vxlan, false, false, TunnelOthers::Drop);
    let inner = varied();
    let mut burst = enc.burst(&inner);
    enc.run("vxlan_encap", Simd::detect(), TxOffloads::default(), &mut burst);
    let good = enc.finish(burst);
    // Interleave: good, plain inner frame, good with another VNI (checksum off, so no other change),
    // good cut to within its outer headers, ...
    let mut mixed = Vec::new();
    for (i, g) in good.iter().enumerate() {
        mixed.push((g.clone(), true));
        match i % 3 {
            0 => mixed.push((inner[i].clone(), false)),
            1 => mixed.push((
                {
                    let mut o = g.clone();
                    o[48] ^= 1;
                    o
                },
                false,
            )),
            _ => mixed.push((g[..45].to_vec(), false)),
        }
    }
    let frames: Vec<Vec<u8>> = mixed.iter().map(|m| m.0.clone()).collect();
    let bad = mixed.iter().filter(|m| !m.1).count() as u64;
    for (simd, others) in Simd::supported().into_iter().flat_map(|s| [(s, TunnelOthers::Drop), (s, TunnelOthers::Pass)])
    {
        let mut b = Bench::new();
        b.tunnels = tunnels(Kind::Vxlan, false, false, others);
        let mut burst = b.burst(&frames);
        let (drops, _) = b.run("vxlan_decap", simd, TxOffloads::default(), &mut burst);
        let out = b.finish(burst);
        let want: Vec<Vec<u8>> = mixed
            .iter()
            .filter(|m| m.1 || others == TunnelOthers::Pass)
            .map(|(f, ours)| if *ours { f[50..].to_vec() } else { f.clone() })
            .collect();
        assert_eq!(out, want, "{simd} {others:?}");
        let passed = if others == TunnelOthers::Pass { bad } else { 0 };
        let counts = (drops.tunnel, b.tunnel.passed, b.tunnel.decapsulated);
        assert_eq!(counts, (bad - passed, passed, good.len() as u64), "{simd} {others:?}");
    }
}

#[test]
fn ethernet_padding_after_the_outer_packet_is_not_carried_inside() {
    let inner: Vec<u8> = (0..14).collect();
    let mut f = Vec::new();
    let mut payload = vec![0x08, 0, 0, 0, 0, 0x10, 0x92, 0];
    payload.extend_from_slice(&inner);
    PacketBuilder::ethernet2([1; 6], [2; 6]).ipv4(B4, A4, 64).udp(50000, 4789).write(&mut f, &payload).unwrap();
    f.resize(70, 0xEE); // 64 bytes of packet, 6 of padding
    let mut b = Bench::new();
    let mut t = tunnels(Kind::Vxlan, false, false, TunnelOthers::Drop);
    t.decap[0] = Some(Matcher::new(Expect {
        kind: Kind::Vxlan,
        local: A4.into(),
        dst_port: 4789,
        vni: None,
        zero_csum_v6: false,
    }));
    b.tunnels = t;
    let mut burst = b.burst(&[f]);
    b.run("vxlan_decap", Simd::detect(), TxOffloads::default(), &mut burst);
    assert_eq!(b.finish(burst), vec![inner]);
}

#[test]
fn without_a_tunnel_section_everything_is_a_tunnel_drop() {
    for name in ["vxlan_encap", "vxlan_decap", "geneve_encap", "geneve_decap"] {
        let mut b = Bench::new();
        let mut burst = b.burst(&varied());
        let (drops, _) = b.run(name, Simd::detect(), TxOffloads::default(), &mut burst);
        assert_eq!((drops.tunnel, burst.len()), (varied().len() as u64, 0), "{name}");
    }
}

#[test]
fn prefetching_or_not_the_result_is_the_same() {
    for kind in Kind::ALL {
        let mut a = Bench::new();
        a.tunnels = tunnels(kind, true, true, TunnelOthers::Pass);
        let frames = varied();
        let mut burst = a.burst(&frames);
        a.run(&format!("{}_encap", kind.name()), Simd::detect(), TxOffloads::default(), &mut burst);
        let with = a.finish(burst);
        let mut b = Bench::new();
        b.tunnels = tunnels(kind, true, true, TunnelOthers::Pass);
        b.prefetch_flow = false;
        let mut burst = b.burst(&frames);
        b.run(&format!("{}_encap", kind.name()), Simd::detect(), TxOffloads::default(), &mut burst);
        assert_eq!(b.finish(burst), with);
    }
}
