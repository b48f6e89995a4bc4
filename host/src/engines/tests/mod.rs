//! Each engine on a burst of real frames, for every kernel variant this CPU supports.

use super::*;
use crate::mbuf::{flags, Pool, PoolConfig};
use crate::simd::Simd;
use crate::stats::Drops;
use crate::wire::FrameSpec;
use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use std::sync::Arc;

fn spec(size: usize, vlan: Option<u16>) -> FrameSpec {
    FrameSpec {
        size,
        dst_mac: [0xd0; 6],
        src_mac: [0x5a; 6],
        src_ip: [10, 0, 0, 1],
        dst_ip: [10, 0, 0, 2],
        src_port: 1111,
        dst_port: 2222,
        vlan,
    }
}

struct Bench {
    cache: PoolCache,
    template: Template,
    flow: u32,
    echo: EchoAddrs,
    scratch: Burst,
    tunnels: Tunnels,
    /// What the tunnel engines counted in the last `run`.
    tunnel: TunnelCounts,
    prefetch_flow: bool,
}

impl Bench {
    fn new() -> Bench {
        let pool = Pool::new(PoolConfig { size: 256, cache_size: 32, ..Default::default() }).unwrap();
        Bench::with(pool.cache(), Template::new(&spec(64, None), 1))
    }

    fn with(cache: PoolCache, template: Template) -> Bench {
        Bench {
            cache,
            template,
            flow: 0,
            echo: EchoAddrs::default(),
            scratch: Burst::new(),
            tunnels: Tunnels::default(),
            tunnel: TunnelCounts::default(),
            prefetch_flow: true,
        }
    }

    fn burst(&mut self, frames: &[Vec<u8>]) -> Burst {
        let mut b = Burst::new();
        for f in frames {
            let mut p = self.cache.alloc().unwrap();
            p.copy_from(f).unwrap();
            b.push(p);
        }
        b
    }

    fn run(&mut self, name: &str, simd: Simd, tx: TxOffloads, burst: &mut Burst) -> (Drops, u64) {
        let engine = lookup(name).unwrap();
        let mut ctx = FwdCtx {
            cache: &mut self.cache,
            tx,
            tx_mac: [0x77; 6],
            peer_mac: [0x88; 6],
            template: &self.template,
            flow: &mut self.flow,
            burst_size: 8,
            drops: Drops::default(),
            generated: 0,
            alloc_failed: 0,
            redirected_out: 0,
            echo: &self.echo,
            scratch: &mut self.scratch,
            tunnels: &self.tunnels,
            prefetch_flow: self.prefetch_flow,
            tunnel: Default::default(),
            outside: None,
        };
        (engine.run.get(simd))(&mut ctx, burst);
        self.tunnel = ctx.tunnel;
        (ctx.drops, ctx.generated)
    }

    fn finish(&mut self, mut b: Burst) -> Vec<Vec<u8>> {
        let out = b.iter().map(|p| p.data().to_vec()).collect();
        self.cache.free_burst(&mut b);
        out
    }
}

/// Frames of every kind the engines must handle: plain, tagged, short, empty.
fn mixed_frames() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = (0..9).map(|i| crate::wire::build_udp(&spec(60 + i * 7, None))).collect();
    v.push(crate::wire::build_udp(&spec(100, Some(7))));
    v.push(vec![1, 2, 3]);
    v.push(vec![]);
    v.push((0..14).collect());
    v
}

fn swapped(f: &[u8]) -> Vec<u8> {
    let mut o = f.to_vec();
    if f.len() >= 14 {
        o[..6].copy_from_slice(&f[6..12]);
        o[6..12].copy_from_slice(&f[..6]);
    }
    o
}

#[test]
fn the_table_lists_every_engine_once_with_its_documented_name() {
    let names: Vec<_> = ENGINES.iter().map(|e| e.name).collect();
    let want = ["io", "mac", "macswap", "5tswap", "copy", "rxonly", "txonly", "icmpecho"];
    let tunnels = ["vxlan_encap", "vxlan_decap", "geneve_encap", "geneve_decap"];
    assert_eq!(names, [&want[..], &tunnels[..]].concat());
    let abi: Vec<_> = ABI_ENGINES.iter().map(|e| e.name).collect();
    assert_eq!(abi, wasmdp_abi::engine::NAMES, "ABI ids name the engines the ABI crate says");
}

#[test]
fn macswap_swaps_every_frame_with_macs_and_leaves_the_rest() {
    for simd in Simd::supported() {
        let mut b = Bench::new();
        let frames = mixed_frames();
        let mut burst = b.burst(&frames);
        b.run("macswap", simd, TxOffloads::default(), &mut burst);
        let out = b.finish(burst);
        for (o, f) in out.iter().zip(&frames) {
            assert_eq!(o, &swapped(f), "{simd}: frame of {} bytes", f.len());
        }
    }
}

#[test]
fn macswap_swaps_frames_of_14_and_15_bytes_among_full_ones_in_every_group_of_four() {
    // The four-frame path takes groups whose frames all have 16 bytes; a group with a shorter
    // frame, wherever it is in the group, goes one frame at a time, and so does the last partial group.
    let full = crate::wire::build_udp(&spec(64, None));
    let short = |n: u8| (0..n).map(|i| i.wrapping_mul(17)).collect::<Vec<u8>>();
    for simd in Simd::supported() {
        for at in 0..4 {
            for len in [14, 15, 16] {
                let mut frames = vec![full.clone(); 9];
                frames[4 + at] = short(len);
                let mut b = Bench::new();
                let mut burst = b.burst(&frames);
                b.run("macswap", simd, TxOffloads::default(), &mut burst);
                let out = b.finish(burst);
                for (i, (o, f)) in out.iter().zip(&frames).enumerate() {
                    assert_eq!(o, &swapped(f), "{simd}: frame {i} of {} bytes", f.len());
                }
            }
        }
    }
}

#[test]
fn macswap_marks_offloads_with_lengths_from_the_headers() {
    let mut b = Bench::new();
    let frames = vec![crate::wire::build_udp(&spec(64, Some(5))); 5];
    let mut burst = b.burst(&frames);
    let tx = TxOffloads { flags: flags::TX_VLAN | flags::TX_IP_CKSUM, vlan_tci: 42, vlan_tci_outer: 0 };
    b.run("macswap", Simd::detect(), tx, &mut burst);
    for p in burst.iter() {
        let m = p.meta();
        assert_eq!(m.ol_flags, flags::TX_VLAN | flags::TX_IP_CKSUM | flags::TX_IPV4);
        assert_eq!((m.vlan_tci, m.l2_len, m.l3_len, m.l4_len), (42, 18, 20, 8));
    }
    b.finish(burst);
}

#[test]
fn mac_sets_source_to_the_tx_port_and_destination_to_its_peer() {
    let mut b = Bench::new();
    let frames = mixed_frames();
    let mut burst = b.burst(&frames);
    b.run("mac", Simd::scalar(), TxOffloads::default(), &mut burst);
    for (o, f) in b.finish(burst).iter().zip(&frames) {
        if f.len() >= 12 {
            assert_eq!((&o[..6], &o[6..12], &o[12..]), (&[0x88; 6][..], &[0x77; 6][..], &f[12..]));
        } else {
            assert_eq!(o, f);
        }
    }
}

#[test]
fn fivetswap_swaps_addresses_and_ports_and_checksums_stay_valid() {
    let mut b = Bench::new();
    let frames = vec![crate::wire::build_udp(&spec(80, None)), crate::wire::build_udp(&spec(80, Some(9)))];
    let mut burst = b.burst(&frames);
    b.run("5tswap", Simd::scalar(), TxOffloads::default(), &mut burst);
    for o in b.finish(burst) {
        let s = SlicedPacket::from_ethernet(&o).unwrap();
        assert_eq!((&o[6..12], &o[..6]), (&[0xd0; 6][..], &[0x5a; 6][..]));
        let Some(NetSlice::Ipv4(ip)) = s.net else { panic!("not ipv4") };
        assert_eq!((ip.header().source(), ip.header().destination()), ([10, 0, 0, 2], [10, 0, 0, 1]));
        let Some(TransportSlice::Udp(udp)) = s.transport else { panic!("not udp") };
        assert_eq!((udp.source_port(), udp.destination_port()), (2222, 1111));
        let expect = udp.to_header().calc_checksum_ipv4(&ip.header().to_header(), udp.payload()).unwrap();
        assert_eq!(udp.checksum(), expect);
    }
}

#[test]
fn copy_moves_every_frame_into_a_new_buffer_and_frees_the_old() {
    for simd in Simd::supported() {
        let mut b = Bench::new();
        let frames = mixed_frames();
        let mut burst = b.burst(&frames);
        let before: Vec<_> = burst.iter().map(|p| p.data_ptr()).collect();
        let (drops, _) = b.run("copy", simd, TxOffloads::default(), &mut burst);
        assert_eq!(drops, Drops::default());
        assert!(burst.iter().zip(&before).all(|(p, old)| p.data_ptr() != *old), "{simd}: not copied");
        assert_eq!(b.finish(burst), frames, "{simd}");
    }
}

#[test]
fn rxonly_frees_and_counts_everything_txonly_generates_a_burst() {
    let mut b = Bench::new();
    let mut burst = b.burst(&mixed_frames());
    let (drops, _) = b.run("rxonly", Simd::scalar(), TxOffloads::default(), &mut burst);
    assert_eq!((drops.engine, burst.len()), (mixed_frames().len() as u64, 0));
    let (_, generated) = b.run("txonly", Simd::scalar(), TxOffloads::default(), &mut burst);
    assert_eq!((generated, burst.len()), (8, 8));
    assert!(b.finish(burst).iter().all(|f| f == b.template.bytes()));
}

#[test]
fn io_leaves_frames_alone() {
    let mut b = Bench::new();
    let frames = mixed_frames();
    let mut burst = b.burst(&frames);
    b.run("io", Simd::scalar(), TxOffloads::default(), &mut burst);
    assert_eq!(b.finish(burst), frames);
}

#[test]
fn pool_is_whole_after_every_engine() {
    let pool = Pool::new(PoolConfig { size: 256, cache_size: 32, ..Default::default() }).unwrap();
    let mut b = Bench::with(pool.cache(), Template::new(&spec(64, None), 3));
    for e in ENGINES {
        let mut burst = b.burst(&mixed_frames());
        b.run(e.name, Simd::detect(), TxOffloads::default(), &mut burst);
        b.finish(burst);
    }
    drop(b);
    assert_eq!(pool.available(), 256);
    let _: Arc<Pool> = pool;
}

mod icmpecho {
    use super::*;
    use etherparse::{Icmpv4Type, Icmpv6Type, PacketBuilder};

    const US4: [u8; 4] = [10, 9, 0, 1];
    const US6: [u8; 16] = [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    const THEM6: [u8; 16] = [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

    fn bench(others: Option<EngineFn>) -> Bench {
        let mut b = Bench::new();
        b.echo = EchoAddrs { ipv4: vec![US4], ipv6: vec![US6], others };
        b
    }

    fn ping4(dst: [u8; 4]) -> Vec<u8> {
        let mut out = Vec::new();
        PacketBuilder::ethernet2([0xaa; 6], [0xff; 6])
            .ipv4([10, 9, 0, 2], dst, 64)
            .icmpv4_echo_request(7, 3)
            .write(&mut out, &[1, 2, 3, 4, 5, 6, 7, 8])
            .unwrap();
        out
    }

    fn arp_request(target: [u8; 4]) -> Vec<u8> {
        let mut f = vec![0xff; 6];
        f.extend([0xaa; 6]);
        f.extend([0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 1]);
        f.extend([0xaa; 6]);
        f.extend([10, 9, 0, 2]);
        f.extend([0; 6]);
        f.extend(target);
        f.resize(60, 0);
        f
    }

    #[test]
    fn arp_requests_for_our_address_get_a_reply_from_our_mac() {
        let mut b = bench(None);
        let mut burst = b.burst(&[arp_request(US4), arp_request([10, 9, 0, 99])]);
        let (drops, _) = b.run("icmpecho", Simd::scalar(), TxOffloads::default(), &mut burst);
        assert_eq!(drops.engine, 1, "the request for another address is dropped");
        let out = b.finish(burst);
        let r = &out[0];
        assert_eq!((&r[..6], &r[6..12]), (&[0xaa; 6][..], &[0x77; 6][..]));
        assert_eq!(&r[20..22], &[0, 2], "ARP reply");
        assert_eq!((&r[22..28], &r[28..32]), (&[0x77; 6][..], &US4[..]), "sender: us");
        assert_eq!((&r[32..38], &r[38..42]), (&[0xaa; 6][..], &[10, 9, 0, 2][..]), "target: the asker");
    }

    #[test]
    fn icmp_echo_requests_become_valid_replies() {
        let mut b = bench(None);
        let mut burst = b.burst(&[ping4(US4)]);
        b.run("icmpecho", Simd::scalar(), TxOffloads::default(), &mut burst);
        let out = b.finish(burst);
        let s = SlicedPacket::from_ethernet(&out[0]).unwrap();
        let Some(NetSlice::Ipv4(ip)) = &s.net else { panic!("not ipv4") };
        let h = ip.header().to_header();
        assert_eq!((h.source, h.destination), (US4, [10, 9, 0, 2]));
        assert_eq!(h.header_checksum, h.calc_header_checksum());
        let Some(TransportSlice::Icmpv4(icmp)) = s.transport else { panic!("not icmp") };
        assert!(matches!(icmp.icmp_type(), Icmpv4Type::EchoReply(e) if e.id == 7 && e.seq == 3));
        assert_eq!(icmp.checksum(), icmp.header().icmp_type.calc_checksum(icmp.payload()));
        assert_eq!(icmp.payload(), &[1, 2, 3, 4, 5, 6, 7, 8]);
    }

    #[test]
    fn icmpv6_echo_and_neighbour_solicitation_are_answered() {
        let mut echo = Vec::new();
        PacketBuilder::ethernet2([0xaa; 6], [0x33; 6])
            .ipv6(THEM6, US6, 64)
            .icmpv6_echo_request(1, 2)
            .write(&mut echo, &[9; 4])
            .unwrap();
        let mut ns = Vec::new();
        let mut body = US6.to_vec();
        body.extend([1, 1, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa]);
        PacketBuilder::ethernet2([0xaa; 6], [0x33; 6])
            .ipv6(THEM6, [0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0, 0, 1], 255)
            .icmpv6(Icmpv6Type::Unknown { type_u8: 135, code_u8: 0, bytes5to8: [0; 4] })
            .write(&mut ns, &body)
            .unwrap();
        let mut b = bench(None);
        let mut burst = b.burst(&[echo, ns]);
        b.run("icmpecho", Simd::scalar(), TxOffloads::default(), &mut burst);
        let out = b.finish(burst);
        assert_eq!(out.len(), 2);
        for (f, want) in out.iter().zip([129u8, 136]) {
            let s = SlicedPacket::from_ethernet(f).unwrap();
            let Some(NetSlice::Ipv6(ip)) = &s.net else { panic!("not ipv6") };
            let h = ip.header().to_header();
            assert_eq!((h.source, h.destination), (US6, THEM6));
            let Some(TransportSlice::Icmpv6(icmp)) = s.transport else { panic!("not icmpv6") };
            assert_eq!(icmp.type_u8(), want);
            let expect = icmp.header().icmp_type.calc_checksum(h.source, h.destination, icmp.payload()).unwrap();
            assert_eq!(icmp.checksum(), expect, "type {want}");
        }
        assert_eq!(&out[1][out[1].len() - 8..], &[2, 1, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77], "our MAC in the option");
    }

    #[test]
    fn other_packets_go_to_the_others_engine() {
        let io = lookup("io").unwrap().run.get(Simd::scalar());
        let mut b = bench(Some(io));
        let udp = crate::wire::build_udp(&spec(64, None));
        let mut burst = b.burst(&[udp.clone(), ping4(US4), ping4([1, 1, 1, 1])]);
        let (drops, _) = b.run("icmpecho", Simd::scalar(), TxOffloads::default(), &mut burst);
        assert_eq!(drops.engine, 0);
        let out = b.finish(burst);
        assert_eq!(out.len(), 3);
        assert!(out.contains(&udp) && out.contains(&ping4([1, 1, 1, 1])), "forwarded unchanged");
    }
}

mod tunnel;
