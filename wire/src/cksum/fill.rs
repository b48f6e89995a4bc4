//! The IPv4 header and TCP/UDP checksum fills of the software TX offloads, and the completion of a
//! partial checksum, on a frame whose headers [`crate::parse()`] found.

use super::udp_nonzero;
use super::wide::{add_carry, checksum, fold, sum};
use crate::field::{be16, ipv4, ipv6, put_be16, tcp, udp};
use crate::proto;
use crate::{Headers, L3};

/// Writes the IPv4 header checksum. Returns false (frame unchanged) unless `h.l3 == Ipv4`.
///
/// Also returns false when `h` does not fit `frame` (`l3_len` below 20 or past the frame's end).
#[inline]
pub fn fill_ipv4_cksum(frame: &mut [u8], h: &Headers) -> bool {
    let l3_len = usize::from(h.l3_len);
    if h.l3 != L3::Ipv4 || l3_len < ipv4::MIN_LEN {
        return false;
    }
    let Some(hdr) = frame.get_mut(usize::from(h.l2_len)..).and_then(|s| s.get_mut(..l3_len)) else {
        return false;
    };
    put_be16(hdr, ipv4::CHECKSUM, 0);
    let c = checksum(hdr);
    put_be16(hdr, ipv4::CHECKSUM, c);
    true
}

/// Where a frame's TCP or UDP segment is, for its checksum: the segment's range in the frame, the
/// checksum field's offset in the segment, and the pseudo-header's sum (addresses, protocol and
/// length). None unless `h.l4_proto` is TCP or UDP and the whole segment is in the frame (per the IP
/// length field, clamped to the frame).
///
/// "Unless" includes: `h.l4_len` too small for the protocol's header (as [`super::parse()`] reports
/// for truncated headers and non-first fragments), an IP length too short for the L4 header, a
/// fragment (IPv4 MF or offset, an IPv6 Fragment header: the segment is not in one frame), an IPv6
/// Routing header with segments left (`h.l4_whole` false), and `h` not fitting `frame`.
#[inline]
fn l4_segment(frame: &[u8], h: &Headers) -> Option<(core::ops::Range<usize>, usize, u64)> {
    let (csum_at, min_hlen) = match h.l4_proto {
        proto::TCP => (tcp::CHECKSUM, tcp::MIN_LEN),
        proto::UDP => (udp::CHECKSUM, udp::LEN),
        _ => return None,
    };
    let (l2_len, l3_len, l4_hlen) = (usize::from(h.l2_len), usize::from(h.l3_len), usize::from(h.l4_len));
    if l4_hlen < min_hlen || !h.l4_whole {
        return None;
    }
    let (ip, l4) = frame.get(l2_len..)?.split_at_checked(l3_len)?;
    // Pseudo-header sum (without the length) and the segment length the IP header claims.
    let (pseudo, ip_seg_len) = match h.l3 {
        L3::Ipv4 => {
            let ip = ip.first_chunk::<{ ipv4::MIN_LEN }>()?;
            // Also when `h` is stale: a fragment's segment is not in this frame.
            if be16(ip, ipv4::FLAGS_FRAG) & (ipv4::MORE_FRAGMENTS | ipv4::FRAG_OFFSET_MASK) != 0 {
                return None;
            }
            let addrs = ip.get(ipv4::SRC..ipv4::SRC + 2 * ipv4::ADDR_LEN).unwrap_or_default();
            let seg_len = usize::from(be16(ip, ipv4::TOTAL_LEN)).saturating_sub(l3_len);
            (add_carry(sum(addrs), u64::from(h.l4_proto)), seg_len)
        }
        L3::Ipv6 => {
            let ip = ip.first_chunk::<{ ipv6::LEN }>()?;
            let addrs = ip.get(ipv6::SRC..ipv6::SRC + 2 * ipv6::ADDR_LEN).unwrap_or_default();
            // The payload length counts the extension headers too.
            let seg_len = usize::from(be16(ip, ipv6::PAYLOAD_LEN)).saturating_sub(l3_len - ipv6::LEN);
            (add_carry(sum(addrs), u64::from(h.l4_proto)), seg_len)
        }
        L3::Other => return None,
    };
    let seg_len = ip_seg_len.min(l4.len());
    if seg_len < l4_hlen {
        return None;
    }
    let start = l2_len + l3_len;
    Some((start..start + seg_len, csum_at, add_carry(pseudo, seg_len as u64)))
}

/// Writes the TCP or UDP checksum (with the IPv4/IPv6 pseudo-header) when the frame has a whole
/// TCP or UDP segment (`l4_segment` says when); returns false (frame unchanged) otherwise. A
/// computed UDP checksum of 0 is sent as 0xFFFF.
#[inline]
pub fn fill_l4_cksum(frame: &mut [u8], h: &Headers) -> bool {
    let Some((range, csum_at, pseudo)) = l4_segment(frame, h) else { return false };
    let seg = &mut frame[range];
    put_be16(seg, csum_at, 0);
    let c = !fold(add_carry(pseudo, sum(seg)));
    let c = if h.l4_proto == proto::UDP { udp_nonzero(c) } else { c };
    put_be16(seg, csum_at, c);
    true
}

/// What [`finish_partial_l4`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L4Checksum {
    /// Right (or none: UDP over IPv4 with 0), or not a whole TCP/UDP segment: left as it is.
    Fine,
    /// Partial (it held the pseudo-header's sum, as a sender's kernel leaves it for the device):
    /// completed.
    Completed,
    /// Wrong, and not partial: left as it is (the receiver drops it, as it would have).
    Wrong,
}

/// Completes a TCP or UDP checksum that the sender's kernel left partial (`CHECKSUM_PARTIAL`: the
/// field holds the pseudo-header's folded sum, for the device to finish) when nothing says so: a
/// frame taken over AF_XDP from a local sender has no metadata. A right checksum is left alone;
/// a wrong one that is not the pseudo-header's sum too (a corrupt frame stays corrupt). The cost
/// is one sum over the segment.
pub fn finish_partial_l4(frame: &mut [u8], h: &Headers) -> L4Checksum {
    let Some((range, csum_at, pseudo)) = l4_segment(frame, h) else { return L4Checksum::Fine };
    let seg = &mut frame[range];
    let field = seg.get(csum_at..csum_at + 2).map_or(0, |b| u16::from_be_bytes([b[0], b[1]]));
    if field == 0 && h.l4_proto == proto::UDP && h.l3 == L3::Ipv4 {
        return L4Checksum::Fine;
    }
    if fold(add_carry(pseudo, sum(seg))) == 0xFFFF {
        return L4Checksum::Fine;
    }
    if field != fold(pseudo) {
        return L4Checksum::Wrong;
    }
    put_be16(seg, csum_at, 0);
    let c = !fold(add_carry(pseudo, sum(seg)));
    let c = if h.l4_proto == proto::UDP { udp_nonzero(c) } else { c };
    put_be16(seg, csum_at, c);
    L4Checksum::Completed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;
    use crate::testutil::{assert_checksums, frame, with_ext, Ip, L4};

    #[test]
    fn a_partial_checksum_is_completed_a_right_one_kept_a_wrong_one_left() {
        for ip in [Ip::V4, Ip::V6] {
            for l4 in [L4::Tcp, L4::Udp] {
                for len in [0, 1, 333, 1400] {
                    let good = frame(1, ip, l4, len);
                    let h = parse(&good);
                    let (range, at, pseudo) = l4_segment(&good, &h).unwrap();
                    let at = range.start + at;
                    // What a sender's kernel leaves for the device: the pseudo-header's folded sum.
                    let mut partial = good.clone();
                    partial[at..at + 2].copy_from_slice(&fold(pseudo).to_be_bytes());
                    assert_eq!(finish_partial_l4(&mut partial, &h), L4Checksum::Completed, "{ip:?} {l4:?} {len}");
                    assert_eq!(partial, good, "{ip:?} {l4:?} {len}");
                    let mut right = good.clone();
                    assert_eq!(finish_partial_l4(&mut right, &h), L4Checksum::Fine);
                    assert_eq!(right, good);
                    let mut wrong = good.clone();
                    wrong[at] ^= 0x5a;
                    let before = wrong.clone();
                    assert_eq!(finish_partial_l4(&mut wrong, &h), L4Checksum::Wrong);
                    assert_eq!(wrong, before, "a corrupt frame stays as it came");
                }
            }
        }
        let mut none = frame(0, Ip::V4, L4::Udp, 10);
        let h = parse(&none);
        let at = 14 + 20 + 6;
        none[at..at + 2].fill(0);
        assert_eq!(finish_partial_l4(&mut none, &h), L4Checksum::Fine, "UDP over IPv4 without a checksum");
    }

    #[test]
    fn fills_every_fixture() {
        for vlans in 0..=2 {
            for ip in [Ip::V4, Ip::V4Opts(8), Ip::V4Opts(40), Ip::V6] {
                for l4 in [L4::Udp, L4::Tcp, L4::TcpOpts(12)] {
                    for len in [0, 1, 2, 7, 8, 9, 15, 16, 17, 333, 1400] {
                        let good = frame(vlans, ip, l4, len);
                        let h = parse(&good);
                        let mut f = good.clone();
                        // Scribble over both checksums, then fill them back in.
                        let l3 = usize::from(h.l2_len);
                        let l4_off = l3 + usize::from(h.l3_len);
                        if ip != Ip::V6 {
                            f[l3 + ipv4::CHECKSUM] ^= 0x5a;
                        }
                        let at = if l4 == L4::Udp { udp::CHECKSUM } else { tcp::CHECKSUM };
                        f[l4_off + at + 1] ^= 0xa5;
                        assert_eq!(fill_ipv4_cksum(&mut f, &h), ip != Ip::V6);
                        assert!(fill_l4_cksum(&mut f, &h));
                        assert_eq!(f, good, "{vlans} tags, {ip:?}, {l4:?}, {len} B");
                        assert_checksums(&f);
                    }
                }
            }
        }
    }

    #[test]
    fn ethernet_padding_is_not_summed() {
        // 14 + 20 + 8 + 2 = 44 bytes, padded to 60 with garbage.
        let mut f = frame(0, Ip::V4, L4::Udp, 2);
        f.resize(60, 0xEE);
        let h = parse(&f);
        f[40..42].fill(0x77);
        assert!(fill_l4_cksum(&mut f, &h));
        assert_checksums(&f);
        assert!(f[44..].iter().all(|&b| b == 0xEE));
    }

    #[test]
    fn ip_length_past_the_frame_is_clamped() {
        let mut f = frame(0, Ip::V6, L4::Tcp, 100);
        f.truncate(f.len() - 10);
        let h = parse(&f);
        assert!(fill_l4_cksum(&mut f, &h));
        // The checksum covers what is in the frame: pseudo-header with the clamped length + segment.
        let seg = &f[54..];
        let total = add_carry(add_carry(sum(&f[22..54]), 6), seg.len() as u64);
        assert_eq!(fold(add_carry(total, sum(seg))), 0xFFFF);
    }

    #[test]
    fn zero_udp_checksum_is_sent_as_ffff() {
        let mut f = frame(0, Ip::V4, L4::Udp, 2);
        let h = parse(&f);
        assert!(fill_l4_cksum(&mut f, &h));
        // Choose the two payload bytes so that the checksum computes to 0 (sum = 0xFFFF).
        let c = u16::from_be_bytes([f[40], f[41]]);
        let p = u16::from_be_bytes([f[42], f[43]]);
        // Adding `c` to the payload word brings the sum to 0xFFFF (one's complement).
        let s = u32::from(p) + u32::from(c);
        let p2 = ((s & 0xFFFF) + (s >> 16)) as u16;
        f[42..44].copy_from_slice(&p2.to_be_bytes());
        assert!(fill_l4_cksum(&mut f, &h));
        assert_eq!(u16::from_be_bytes([f[40], f[41]]), 0xFFFF);
        assert_checksums(&f);
        // The same sum over TCP is written as 0.
        let mut f = frame(0, Ip::V4, L4::Tcp, 2);
        let h = parse(&f);
        assert!(fill_l4_cksum(&mut f, &h));
        let c = u16::from_be_bytes([f[50], f[51]]);
        let p = u16::from_be_bytes([f[54], f[55]]);
        let s = u32::from(p) + u32::from(c);
        let p2 = ((s & 0xFFFF) + (s >> 16)) as u16;
        f[54..56].copy_from_slice(&p2.to_be_bytes());
        assert!(fill_l4_cksum(&mut f, &h));
        assert_eq!(u16::from_be_bytes([f[50], f[51]]), 0);
        assert_checksums(&f);
    }

    #[test]
    fn ipv6_with_extension_headers_gets_its_checksum() {
        use etherparse::{NetSlice, SlicedPacket, TransportSlice};
        for l4 in [L4::Udp, L4::Tcp] {
            let mut f = with_ext(&frame(0, Ip::V6, l4, 33), &[(0, 8), (60, 16)]);
            let h = parse(&f);
            let at = 14 + usize::from(h.l3_len) + if l4 == L4::Udp { 6 } else { 16 };
            f[at..at + 2].copy_from_slice(&[0x12, 0x34]);
            assert!(fill_l4_cksum(&mut f, &h), "{l4:?}");
            let s = SlicedPacket::from_ethernet(&f).unwrap();
            let Some(NetSlice::Ipv6(ip)) = s.net else { panic!() };
            let ip = ip.header().to_header();
            match s.transport {
                Some(TransportSlice::Udp(u)) => {
                    assert_eq!(u.checksum(), u.to_header().calc_checksum_ipv6(&ip, u.payload()).unwrap())
                }
                Some(TransportSlice::Tcp(t)) => {
                    assert_eq!(t.checksum(), t.to_header().calc_checksum_ipv6(&ip, t.payload()).unwrap())
                }
                _ => panic!("{l4:?}"),
            }
        }
    }

    #[test]
    fn refuses_what_it_cannot_fill() {
        let good = frame(1, Ip::V4, L4::Udp, 20);
        let h = parse(&good);
        let check = |f: &mut Vec<u8>, h: &Headers| {
            let before = f.clone();
            assert!(!fill_l4_cksum(f, h), "{h:?}");
            assert_eq!(*f, before);
        };
        // Not TCP/UDP, no L3, L4 header missing or too short.
        check(&mut good.clone(), &Headers { l4_proto: 1, ..h });
        check(&mut good.clone(), &Headers { l3: L3::Other, ..h });
        check(&mut good.clone(), &Headers { l4_len: 0, ..h });
        check(&mut good.clone(), &Headers { l4_proto: 6, ..h });
        // Headers past the end of the frame.
        check(&mut good.clone(), &Headers { l2_len: 60, ..h });
        check(&mut good.clone(), &Headers { l3_len: 1000, ..h });
        check(&mut good[..45].to_vec(), &h);
        // IP total length shorter than IP + UDP headers.
        let mut f = good.clone();
        f[20..22].copy_from_slice(&27u16.to_be_bytes());
        check(&mut f, &h);
        // Fragments.
        for flags in [0x20, 0x00] {
            let mut f = good.clone();
            f[24] = flags;
            f[25] = if flags == 0 { 1 } else { 0 };
            check(&mut f, &h);
        }
        // The IPv4 header fill wants IPv4 that fits.
        let before = good.clone();
        let mut f = good.clone();
        assert!(!fill_ipv4_cksum(&mut f, &Headers { l3: L3::Ipv6, ..h }));
        assert!(!fill_ipv4_cksum(&mut f, &Headers { l3_len: 16, ..h }));
        assert!(!fill_ipv4_cksum(&mut f, &Headers { l2_len: 50, ..h }));
        assert!(!fill_ipv4_cksum(&mut f[..37], &h));
        assert_eq!(f, before);
    }
}
