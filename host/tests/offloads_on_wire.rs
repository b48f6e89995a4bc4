//! TX offloads are visible on the wire: a stream transmits on a ring port with offloads, the frames
//! arrive at the peer and are decoded with etherparse.

mod common;

use common::{tags, Wire};
use etherparse::{NetSlice, SlicedPacket, TransportSlice};

/// Sends 8 copies of a's template, with IPv4 and UDP checksums broken so that only the offload can
/// make them right again, through a stream with the given engine; returns what arrives at b.
fn through(port_a: &str, engine: &str) -> Vec<Vec<u8>> {
    let mut wire = Wire::new(&format!("engine: {engine}, {port_a}"));
    let mut frame = wire.template().to_vec();
    let l2 = if frame[12] == 0x81 { 18 } else { 14 };
    frame[l2 + 10..l2 + 12].fill(0);
    frame[l2 + 26..l2 + 28].fill(0x55);
    let out = wire.send(&vec![frame; 8]);
    assert_eq!(out.len(), 8);
    out
}

fn checksums_ok(f: &[u8]) -> bool {
    let s = SlicedPacket::from_ethernet(f).unwrap();
    let Some(NetSlice::Ipv4(ip)) = s.net else { return false };
    let h = ip.header().to_header();
    let Some(TransportSlice::Udp(udp)) = s.transport else { return false };
    h.header_checksum == h.calc_header_checksum()
        && udp.checksum() == udp.to_header().calc_checksum_ipv4(&h, udp.payload()).unwrap()
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

#[test]
fn udp_checksum_of_a_first_fragment_is_left_alone() {
    // A UDP checksum covers the whole datagram, which a fragment does not hold: the request is
    // ignored (as a NIC does), the IPv4 header checksum is still filled.
    let mut wire = Wire::new("engine: io, tx_offloads: [ipv4_cksum, udp_cksum]");
    let mut frame = wire.template().to_vec();
    frame[14 + 6] = 0x20; // MF, offset 0
    frame[14 + 10..14 + 12].fill(0);
    frame[14 + 26..14 + 28].copy_from_slice(&[0x55, 0x55]);
    let out = wire.send(&[frame.clone()]);
    let f = &out[0];
    assert_eq!(&f[40..42], &[0x55, 0x55], "UDP checksum untouched");
    let s = SlicedPacket::from_ethernet(f).unwrap();
    let Some(NetSlice::Ipv4(ip)) = s.net else { panic!() };
    let h = ip.header().to_header();
    assert_eq!(h.header_checksum, h.calc_header_checksum());
}

#[test]
fn checksums_behind_ipv6_extension_headers_are_filled() {
    // IPv6 + Hop-by-Hop (8 bytes) + Destination Options (8 bytes) + UDP, UDP checksum broken.
    let udp_payload = [7u8; 30];
    let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x86, 0xdd];
    let plen = (16 + 8 + udp_payload.len()) as u16;
    f.extend_from_slice(&[0x60, 0, 0, 0]);
    f.extend_from_slice(&plen.to_be_bytes());
    f.extend_from_slice(&[0, 64]); // next: hop-by-hop, hop limit
    f.extend_from_slice(&[0x20, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    f.extend_from_slice(&[0x20, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
    f.extend_from_slice(&[60, 0, 1, 4, 0, 0, 0, 0]); // hop-by-hop: next dest-opts, PadN
    f.extend_from_slice(&[17, 0, 1, 4, 0, 0, 0, 0]); // dest-opts: next UDP
    f.extend_from_slice(&1234u16.to_be_bytes());
    f.extend_from_slice(&53u16.to_be_bytes());
    f.extend_from_slice(&((8 + udp_payload.len()) as u16).to_be_bytes());
    f.extend_from_slice(&[0x12, 0x34]);
    f.extend_from_slice(&udp_payload);
    let mut wire = Wire::new("engine: io, tx_offloads: [udp_cksum]");
    let out = wire.send(&[f]);
    let s = SlicedPacket::from_ethernet(&out[0]).unwrap();
    let Some(NetSlice::Ipv6(ip)) = s.net else { panic!() };
    let Some(TransportSlice::Udp(udp)) = s.transport else { panic!("UDP not found: {:?}", s.transport) };
    let want = udp.to_header().calc_checksum_ipv6(&ip.header().to_header(), udp.payload()).unwrap();
    assert_eq!(udp.checksum(), want);
}
