//! [`insert_tag`]: VLAN insertion after the caller made 4 bytes of headroom.

use super::field::{eth, tag};

/// Bytes of the two MAC addresses.
const MACS_LEN: usize = 2 * eth::ADDR_LEN;
/// Bytes touched: the prepended headroom plus the MAC addresses.
const TOUCHED: usize = tag::LEN + MACS_LEN;

/// Turns `frame`, whose first 4 bytes were just prepended (garbage), into the same frame with a tag
/// `tpid`/`tci` inserted after the MAC addresses: moves the 12 MAC bytes to the front and writes the
/// tag at 12..16. Does nothing if `frame` is shorter than 16 bytes.
#[inline]
pub fn insert_tag(frame: &mut [u8], tpid: u16, tci: u16) {
    let Some(head) = frame.first_chunk_mut::<TOUCHED>() else {
        return;
    };
    head.copy_within(tag::LEN..TOUCHED, 0);
    let [t0, t1] = tpid.to_be_bytes();
    let [c0, c1] = tci.to_be_bytes();
    let new_tag = [t0, t1, c0, c1];
    if let Some(dst) = head.last_chunk_mut::<{ tag::LEN }>() {
        *dst = new_tag;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{assert_checksums, frame, Ip, DST_MAC, L4, SRC_MAC};
    use super::super::{ethertype, parse, Headers, L3};
    use super::*;
    use etherparse::{PacketHeaders, VlanHeader};

    /// Prepends 4 garbage bytes, as a driver would when it grows the headroom.
    fn with_headroom(f: &[u8]) -> Vec<u8> {
        let mut out = vec![0xA5; 4];
        out.extend_from_slice(f);
        out
    }

    #[test]
    fn byte_fixture() {
        let mut f = [
            0xEE, 0xEE, 0xEE, 0xEE, // headroom
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, // MACs
            0x08, 0x00, 0x45, // EtherType, start of IPv4
        ];
        insert_tag(&mut f, ethertype::VLAN, 0x2064);
        assert_eq!(f, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x81, 0x00, 0x20, 0x64, 0x08, 0x00, 0x45]);
    }

    #[test]
    fn etherparse_sees_the_tag() {
        for ip in [Ip::V4, Ip::V6] {
            let orig = frame(0, ip, L4::Udp, 30);
            let mut f = with_headroom(&orig);
            insert_tag(&mut f, ethertype::VLAN, 0xA07B); // PCP 5, DEI 0, VID 123
            let p = PacketHeaders::from_ethernet_slice(&f).unwrap();
            let e = p.link.clone().unwrap().ethernet2().unwrap();
            assert_eq!((e.source, e.destination), (SRC_MAC, DST_MAC));
            assert_eq!(e.ether_type.0, ethertype::VLAN);
            let Some(VlanHeader::Single(v)) = p.vlan else {
                panic!("no single tag: {:?}", p.vlan);
            };
            assert_eq!((v.pcp.value(), v.drop_eligible_indicator, v.vlan_id.value()), (5, false, 123));
            assert_eq!(f[16..], orig[12..]);
            assert_checksums(&f);
            assert_eq!(parse(&f).vlans, 1);
        }
    }

    #[test]
    fn stacks_to_qinq() {
        let orig = frame(0, Ip::V4, L4::Tcp, 0);
        let mut f = with_headroom(&orig);
        insert_tag(&mut f, ethertype::VLAN, 100);
        let mut f = with_headroom(&f);
        insert_tag(&mut f, ethertype::QINQ, 200);
        let h = parse(&f);
        let want = Headers { l2_len: 22, vlans: 2, l3: L3::Ipv4, l3_len: 20, l4_proto: 6, l4_len: 20, l4_whole: true };
        assert_eq!(h, want);
        let p = PacketHeaders::from_ethernet_slice(&f).unwrap();
        let Some(VlanHeader::Double(d)) = p.vlan else {
            panic!("no double tag: {:?}", p.vlan);
        };
        assert_eq!((d.outer.vlan_id.value(), d.inner.vlan_id.value()), (200, 100));
        assert_checksums(&f);
    }

    #[test]
    fn short_frames_are_unchanged() {
        for n in 0..16 {
            let mut f: Vec<u8> = (0..n).collect();
            insert_tag(&mut f, ethertype::VLAN, 1);
            assert_eq!(f, (0..n).collect::<Vec<u8>>());
        }
        let mut f: Vec<u8> = (0..16).collect();
        insert_tag(&mut f, ethertype::VLAN, 1);
        assert_eq!(f, [4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0x81, 0, 0, 1]);
    }
}
