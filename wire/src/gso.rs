//! Software segmentation of TCP and UDP super-frames (what a NIC's TSO/USO, or the kernel's GSO, does),
//! and completing a checksum the sender left partial. For frames a kernel hands over before it
//! segmented them or finished their checksum: a sender with offloads on, seen through AF_PACKET.
//!
//! A TCP super-frame of payload `P` and segment size `mss` becomes `ceil(P / mss)` frames, each the
//! headers followed by one slice of the payload, with: the IPv4 total length, identification (+1 per
//! segment) and header checksum, or the IPv6 payload length, rewritten; the TCP sequence number
//! advanced by the bytes before it; FIN and PSH kept on the last segment only, CWR on the first only;
//! the TCP checksum computed. UDP super-frames (UDP GSO) become datagrams of `mss` payload bytes, each
//! with its own UDP length and checksum.

use super::cksum::wide::{add_carry, fold, sum};
use super::field::{ipv4, ipv6, put_be16, tcp, udp};
use super::{fill_ipv4_cksum, fill_l4_cksum, Headers, L3};
use crate::proto;
use alloc::vec::Vec;

/// Why a frame cannot be segmented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GsoError {
    /// Not IPv4/IPv6 with a complete TCP or UDP header, or a fragment.
    NotSegmentable,
    /// A segment size of 0, or segments that would not fit a buffer.
    BadSize,
}

/// How many segments `frame` (with headers `h`) becomes when cut into payloads of `mss` bytes, once
/// [`segment`] accepts it.
pub fn segment_count(frame: &[u8], h: &Headers, mss: usize) -> usize {
    let hdrs = usize::from(h.l2_len) + usize::from(h.l3_len) + usize::from(h.l4_len);
    frame.len().saturating_sub(hdrs).div_ceil(mss.max(1)).max(1)
}

/// The frames `frame` (with headers `h`) becomes when cut into payloads of `mss` bytes, those of
/// numbers in `range` only (a super-frame of more segments than a burst holds is taken over several
/// calls): for each, `emit(i, frame)` with the segment number and its bytes, built in `scratch`
/// (reused). Returns the number of segments of the whole frame. `max_frame` is the largest frame a
/// buffer holds. Every check is made before the first segment is emitted.
pub fn segment(
    frame: &[u8],
    h: &Headers,
    mss: usize,
    max_frame: usize,
    range: core::ops::Range<usize>,
    scratch: &mut Vec<u8>,
    mut emit: impl FnMut(usize, &[u8]),
) -> Result<usize, GsoError> {
    let hdrs = usize::from(h.l2_len) + usize::from(h.l3_len) + usize::from(h.l4_len);
    let is_tcp = h.l4_proto == proto::TCP && usize::from(h.l4_len) >= tcp::MIN_LEN;
    let is_udp = h.l4_proto == proto::UDP && usize::from(h.l4_len) == udp::LEN;
    if h.l3 == L3::Other || !(is_tcp || is_udp) || !h.l4_whole || hdrs > frame.len() {
        return Err(GsoError::NotSegmentable);
    }
    if mss == 0 || hdrs + mss > max_frame {
        return Err(GsoError::BadSize);
    }
    let payload = &frame[hdrs..];
    let n = payload.len().div_ceil(mss).max(1);
    for i in range.start..range.end.min(n) {
        let chunk = payload.get(i * mss..).map_or(&[][..], |rest| &rest[..rest.len().min(mss)]);
        scratch.clear();
        scratch.extend_from_slice(&frame[..hdrs]);
        scratch.extend_from_slice(chunk);
        fix_segment(scratch, h, i, i + 1 == n, mss);
        emit(i, scratch);
    }
    Ok(n)
}

/// Rewrites the headers of segment `i` (of payload size `mss` before it) in `seg`.
fn fix_segment(seg: &mut [u8], h: &Headers, i: usize, last: bool, mss: usize) {
    let l3 = usize::from(h.l2_len);
    let l4 = l3 + usize::from(h.l3_len);
    let len = seg.len();
    match h.l3 {
        L3::Ipv4 => {
            put_be16(seg, l3 + ipv4::TOTAL_LEN, (len - l3) as u16);
            if let Some(b) = seg.get_mut(l3 + 4..l3 + 6) {
                let id = u16::from_be_bytes([b[0], b[1]]).wrapping_add(i as u16);
                b.copy_from_slice(&id.to_be_bytes());
            }
        }
        L3::Ipv6 => put_be16(seg, l3 + ipv6::PAYLOAD_LEN, (len - l3 - ipv6::LEN) as u16),
        L3::Other => {}
    }
    if h.l4_proto == proto::TCP {
        let seq_at = l4 + 4;
        if let Some(b) = seg.get_mut(seq_at..seq_at + 4) {
            let seq = u32::from_be_bytes([b[0], b[1], b[2], b[3]]).wrapping_add((i * mss) as u32);
            b.copy_from_slice(&seq.to_be_bytes());
        }
        if let Some(flags) = seg.get_mut(l4 + 13) {
            const FIN: u8 = 0x01;
            const PSH: u8 = 0x08;
            const CWR: u8 = 0x80;
            if !last {
                *flags &= !(FIN | PSH);
            }
            if i != 0 {
                *flags &= !CWR;
            }
        }
    } else {
        put_be16(seg, l4 + udp::LENGTH, (len - l4) as u16);
    }
    let h2 = Headers { l4_whole: true, ..*h };
    if h.l3 == L3::Ipv4 {
        fill_ipv4_cksum(seg, &h2);
    }
    fill_l4_cksum(seg, &h2);
}

/// Completes a checksum the sender left partial (`CHECKSUM_PARTIAL`): the one's complement sum of
/// the bytes from `start` to the end of the frame, whose 16-bit field at `start + offset` holds the
/// pseudo-header sum, complemented into that field. False (frame unchanged) when the field is not
/// inside the frame.
pub fn complete_checksum(frame: &mut [u8], start: usize, offset: usize) -> bool {
    let Some(at) = start.checked_add(offset) else { return false };
    if at + 2 > frame.len() || start >= frame.len() {
        return false;
    }
    let total = add_carry(sum(&frame[start..]), 0);
    let mut c = !fold(total);
    // A UDP checksum of 0 means "none": send 0xFFFF (its one's complement twin) instead.
    if c == 0 {
        c = 0xFFFF;
    }
    put_be16(frame, at, c);
    true
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::super::testutil::{frame, Ip, L4};
    use super::*;
    use etherparse::{NetSlice, SlicedPacket, TransportSlice};

    /// Checks every segment with etherparse, and that their payloads put together are the
    /// original's.
    fn check(f: &[u8], mss: usize) -> usize {
        let h = parse(f);
        let hdrs = usize::from(h.l2_len + h.l3_len + u16::from(h.l4_len));
        let mut payload = Vec::new();
        let mut seqs = Vec::new();
        let mut scratch = Vec::new();
        let n = segment(f, &h, mss, 9000, 0..usize::MAX, &mut scratch, |i, s| {
            let p = SlicedPacket::from_ethernet(s).unwrap();
            let (ip4, ip6) = match &p.net {
                Some(NetSlice::Ipv4(ip)) => {
                    let hd = ip.header().to_header();
                    assert_eq!(hd.header_checksum, hd.calc_header_checksum(), "segment {i}");
                    assert_eq!(usize::from(hd.total_len), s.len() - 14);
                    (Some(hd), None)
                }
                Some(NetSlice::Ipv6(ip)) => (None, Some(ip.header().to_header())),
                _ => panic!(),
            };
            match p.transport {
                Some(TransportSlice::Tcp(t)) => {
                    let want = match (&ip4, &ip6) {
                        (Some(v4), _) => t.to_header().calc_checksum_ipv4(v4, t.payload()).unwrap(),
                        (_, Some(v6)) => t.to_header().calc_checksum_ipv6(v6, t.payload()).unwrap(),
                        _ => unreachable!(),
                    };
                    assert_eq!(t.checksum(), want, "segment {i}");
                    seqs.push(t.sequence_number());
                    payload.extend_from_slice(t.payload());
                }
                Some(TransportSlice::Udp(u)) => {
                    let want = match (&ip4, &ip6) {
                        (Some(v4), _) => u.to_header().calc_checksum_ipv4(v4, u.payload()).unwrap(),
                        (_, Some(v6)) => u.to_header().calc_checksum_ipv6(v6, u.payload()).unwrap(),
                        _ => unreachable!(),
                    };
                    assert_eq!(u.checksum(), want, "segment {i}");
                    payload.extend_from_slice(u.payload());
                }
                _ => panic!(),
            }
        })
        .unwrap();
        assert_eq!(payload, f[hdrs..]);
        for w in seqs.windows(2) {
            assert_eq!(w[1].wrapping_sub(w[0]) as usize, mss, "sequence numbers advance by the segment size");
        }
        n
    }

    #[test]
    fn tcp_and_udp_super_frames_become_valid_segments() {
        for ip in [Ip::V4, Ip::V6] {
            for l4 in [L4::Tcp, L4::TcpOpts(12), L4::Udp] {
                let f = frame(0, ip, l4, 5000);
                assert_eq!(check(&f, 1448), 4, "{ip:?} {l4:?}");
                assert_eq!(check(&f, 5000), 1);
                assert_eq!(check(&f, 1000), 5);
            }
        }
    }

    #[test]
    fn a_frame_taken_in_pieces_gives_the_segments_of_the_whole() {
        let f = frame(0, Ip::V4, L4::Tcp, 60_000);
        let h = parse(&f);
        assert_eq!(segment_count(&f, &h, 64), 938);
        let mut scratch = Vec::new();
        let mut whole = Vec::new();
        segment(&f, &h, 64, 9000, 0..usize::MAX, &mut scratch, |i, s| whole.push((i, s.to_vec()))).unwrap();
        let mut pieces = Vec::new();
        for start in (0..938).step_by(100) {
            let n = segment(&f, &h, 64, 9000, start..start + 100, &mut scratch, |i, s| pieces.push((i, s.to_vec())));
            assert_eq!(n, Ok(938));
        }
        assert_eq!(whole.len(), 938);
        assert!(pieces == whole, "the pieces are the segments of the whole, in order");
    }

    #[test]
    fn fin_and_psh_only_on_the_last_segment() {
        let mut f = frame(0, Ip::V4, L4::Tcp, 3000);
        f[14 + 20 + 13] = 0x19 | 0x80; // FIN PSH ACK CWR
        let h = parse(&f);
        let mut flags = Vec::new();
        let mut scratch = Vec::new();
        segment(&f, &h, 1000, 9000, 0..3, &mut scratch, |_, s| flags.push(s[14 + 20 + 13])).unwrap();
        assert_eq!(flags, [0x90, 0x10, 0x11 | 0x08]);
    }

    #[test]
    fn what_cannot_be_segmented_is_said() {
        let mut scratch = Vec::new();
        let f = frame(0, Ip::V4, L4::Tcp, 3000);
        let h = parse(&f);
        assert_eq!(segment(&f, &h, 0, 9000, 0..9, &mut scratch, |_, _| {}), Err(GsoError::BadSize));
        assert_eq!(segment(&f, &h, 3000, 1500, 0..9, &mut scratch, |_, _| {}), Err(GsoError::BadSize));
        let mut g = f.clone();
        g[14 + 6] = 0x20; // a fragment
        assert_eq!(segment(&g, &parse(&g), 1000, 9000, 0..9, &mut scratch, |_, _| {}), Err(GsoError::NotSegmentable));
    }

    #[test]
    fn a_partial_checksum_is_completed() {
        for l4 in [L4::Tcp, L4::Udp] {
            let mut f = frame(0, Ip::V4, l4, 333);
            let good = f.clone();
            let (start, off) = (14 + 20, if l4 == L4::Udp { 6 } else { 16 });
            // What a sender with CHECKSUM_PARTIAL puts there: the pseudo-header sum, not complemented.
            let ip = &good[14..34];
            let pseudo = add_carry(add_carry(sum(&ip[12..20]), u64::from(ip[9])), (f.len() - start) as u64);
            put_be16(&mut f, start + off, fold(pseudo));
            assert!(complete_checksum(&mut f, start, off));
            assert_eq!(f, good, "{l4:?}");
            assert!(!complete_checksum(&mut f, start, 10_000));
        }
    }
}
