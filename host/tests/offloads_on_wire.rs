//! TX offloads are visible on the wire: a stream transmits on a ring port with offloads, the frames
//! arrive at the peer and are decoded with etherparse.

use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use std::sync::Arc;
use std::time::Duration;
use wasmdp::engines;
use wasmdp::lcore::{Retry, Stream, StreamParts};
use wasmdp::mbuf::{Burst, Pool, PoolConfig};
use wasmdp::ports::open_all;
use wasmdp::simd::Simd;
use wasmdp::stats::StreamInfo;

/// Sends one burst of the template (corrupting its checksums first) from `a` through a stream with
/// the given engine, and returns the frames that arrive at `b`.
fn through(port_a: &str, engine: &str) -> Vec<Vec<u8>> {
    let yaml = format!(
        "ports:\n  - {{name: a, driver: ring, ring: {{peer: b}}, {port_a}}}\n  - {{name: b, driver: ring, ring: {{peer: a}}}}\n"
    );
    let cfg = wasmdp::config::parse(&yaml, "test").unwrap();
    let pool = Pool::new(PoolConfig { size: 256, cache_size: 16, ..Default::default() }).unwrap();
    let mut cache = pool.cache();
    let mut ports = open_all(&cfg).unwrap();
    // Feed the stream through b -> a's RX, with IPv4 and UDP checksums zeroed so that only the
    // offload can make them right again.
    let mut feed = ports[1].txqs[0].take().unwrap();
    let mut burst = Burst::new();
    for _ in 0..8 {
        let mut p = cache.alloc().unwrap();
        let mut frame = ports[0].template.bytes().to_vec();
        let l2 = if frame[12] == 0x81 { 18 } else { 14 };
        frame[l2 + 10..l2 + 12].fill(0);
        frame[l2 + 26..l2 + 28].fill(0x55);
        p.copy_from(&frame).unwrap();
        burst.push(p);
    }
    assert_eq!(feed.tx_burst(&mut cache, &mut burst), 8);
    let e = engines::lookup(engine).unwrap();
    let a = &mut ports[0];
    let info = StreamInfo { rx_port: 0, rx_queue: 0, tx_port: 0, tx_queue: 0, engine: e.name, lcore: None };
    let mut stream = Stream::new(StreamParts {
        info,
        rxq: a.rxqs[0].take().unwrap(),
        txq: a.txqs[0].take().unwrap(),
        run: e.run.get(Simd::detect()),
        needs_rx: true,
        burst_size: 32,
        retry: Retry { count: 0, delay: Duration::ZERO },
        sw_offloads: a.driver.software_offloads,
        tx: a.tx,
        tx_mac: a.mac,
        peer_mac: a.peer_mac,
        template: a.template.clone(),
        seed_bursts: 0,
        policy: None,
        inject: None,
    });
    assert_eq!(stream.poll(&mut cache), 8);
    let mut rx = ports[1].rxqs[0].take().unwrap();
    let got = rx.rx_burst(&mut cache, &mut burst, 32);
    assert_eq!(got.packets, 8);
    let frames = burst.iter().map(|p| p.data().to_vec()).collect();
    cache.free_burst(&mut burst);
    stream.drain(&mut cache);
    drop(stream);
    drop(cache);
    assert_eq!(pool.available(), 256);
    let _: Arc<Pool> = pool;
    frames
}

fn checksums_ok(f: &[u8]) -> bool {
    let s = SlicedPacket::from_ethernet(f).unwrap();
    let Some(NetSlice::Ipv4(ip)) = s.net else { return false };
    let h = ip.header().to_header();
    let Some(TransportSlice::Udp(udp)) = s.transport else { return false };
    h.header_checksum == h.calc_header_checksum()
        && udp.checksum() == udp.to_header().calc_checksum_ipv4(&h, udp.payload()).unwrap()
}

fn tags(f: &[u8]) -> Vec<(u16, u16)> {
    let mut out = Vec::new();
    let mut at = 12;
    while at + 4 <= f.len() && matches!(u16::from_be_bytes([f[at], f[at + 1]]), 0x8100 | 0x88a8) {
        out.push((u16::from_be_bytes([f[at], f[at + 1]]), u16::from_be_bytes([f[at + 2], f[at + 3]])));
        at += 4;
    }
    out
}

#[test]
fn vlan_insert_tags_every_frame_and_checksums_are_filled() {
    for engine in ["io", "macswap", "mac", "5tswap", "copy"] {
        let frames = through("tx_offloads: [vlan_insert, ipv4_cksum, udp_cksum], tx_vlan: 100", engine);
        for f in &frames {
            assert_eq!(tags(f), [(0x8100, 100)], "{engine}");
            assert!(checksums_ok(f), "{engine}: checksums");
            assert_eq!(f.len(), 68);
        }
    }
}

#[test]
fn qinq_insert_puts_the_outer_8021ad_tag_first() {
    let frames = through("tx_offloads: [qinq_insert], tx_vlan: 10, tx_vlan_outer: 20", "macswap");
    for f in &frames {
        assert_eq!(tags(f), [(0x88a8, 20), (0x8100, 10)]);
        assert!(!checksums_ok(f), "checksums were not asked for and stay broken");
    }
}

#[test]
fn checksums_on_an_already_tagged_frame_use_the_real_l2_length() {
    let frames = through("frame: {vlan: 3}, tx_offloads: [ipv4_cksum, udp_cksum]", "macswap");
    for f in &frames {
        assert_eq!(tags(f), [(0x8100, 3)]);
        assert!(checksums_ok(f));
    }
}

#[test]
fn without_offloads_frames_pass_unchanged() {
    let frames = through("frame: {size: 128}", "io");
    assert!(frames.iter().all(|f| f.len() == 128 && tags(f).is_empty()));
}
