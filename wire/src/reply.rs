//! Turning requests into replies in place, for the `icmpecho` engine: ARP request -> reply, ICMP
//! echo request -> reply, ICMPv6 echo request -> reply, neighbour solicitation -> advertisement.
//! Each function checks the frame fully and returns `None` (frame unchanged) when it does not apply,
//! or the length of the reply (the frame may have to be cut to it).

use super::cksum::wide::{add_carry, checksum, fold, sum};
use super::{ethertype, Headers, L3};

const ARP_REQUEST: u16 = 1;
const ARP_REPLY: u16 = 2;
const ICMP_ECHO_REQUEST: u8 = 8;
const ICMP_ECHO_REPLY: u8 = 0;
const ICMP6_ECHO_REQUEST: u8 = 128;
const ICMP6_ECHO_REPLY: u8 = 129;
const ND_SOLICIT: u8 = 135;
const ND_ADVERT: u8 = 136;

/// Bytes after the L2 header a neighbour advertisement needs.
pub const NS_REPLY_LEN: usize = 72;

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// Ethernet: reply to the sender, from `mac`.
fn turn_ethernet(frame: &mut [u8], mac: [u8; 6]) {
    let (dst, src) = frame.split_at_mut(6);
    dst.copy_from_slice(&src[..6]);
    src[..6].copy_from_slice(&mac);
}

/// An ARP request for one of `ips` becomes the reply, from `mac`.
pub fn arp_reply(frame: &mut [u8], h: &Headers, mac: [u8; 6], ips: &[[u8; 4]]) -> Option<usize> {
    let l2 = h.l2_len as usize;
    if l2 < 14 || be16(frame, l2 - 2) != ethertype::ARP || frame.len() < l2 + 28 {
        return None;
    }
    let arp = &mut frame[l2..l2 + 28];
    // Ethernet/IPv4 ARP: htype 1, ptype 0x0800, hlen 6, plen 4.
    if be16(arp, 0) != 1 || be16(arp, 2) != ethertype::IPV4 || arp[4] != 6 || arp[5] != 4 || be16(arp, 6) != ARP_REQUEST
    {
        return None;
    }
    let target: [u8; 4] = [arp[24], arp[25], arp[26], arp[27]];
    if !ips.contains(&target) {
        return None;
    }
    let (sha, spa) = ([arp[8], arp[9], arp[10], arp[11], arp[12], arp[13]], [arp[14], arp[15], arp[16], arp[17]]);
    arp[6..8].copy_from_slice(&ARP_REPLY.to_be_bytes());
    arp[8..14].copy_from_slice(&mac);
    arp[14..18].copy_from_slice(&target);
    arp[18..24].copy_from_slice(&sha);
    arp[24..28].copy_from_slice(&spa);
    turn_ethernet(frame, mac);
    Some(frame.len())
}

/// An ICMP echo request to one of `ips` becomes the echo reply, from `mac`.
pub fn icmp4_echo_reply(frame: &mut [u8], h: &Headers, mac: [u8; 6], ips: &[[u8; 4]]) -> Option<usize> {
    let (l2, l3) = (h.l2_len as usize, h.l3_len as usize);
    if h.l3 != L3::Ipv4 || h.l4_proto != 1 {
        return None;
    }
    let ip = &frame[l2..];
    let total = be16(ip, 2) as usize;
    let frag = be16(ip, 6) & 0x3fff;
    if frag != 0 || total < l3 + 8 || l2 + total > frame.len() || !ips.contains(&[ip[16], ip[17], ip[18], ip[19]]) {
        return None;
    }
    if ip[l3] != ICMP_ECHO_REQUEST || ip[l3 + 1] != 0 {
        return None;
    }
    let ip = &mut frame[l2..l2 + total];
    let (src, dst): ([u8; 4], [u8; 4]) = ([ip[12], ip[13], ip[14], ip[15]], [ip[16], ip[17], ip[18], ip[19]]);
    ip[12..16].copy_from_slice(&dst);
    ip[16..20].copy_from_slice(&src);
    ip[8] = 64;
    ip[10..12].fill(0);
    let ck = checksum(&ip[..l3]);
    ip[10..12].copy_from_slice(&ck.to_be_bytes());
    let icmp = &mut ip[l3..];
    icmp[0] = ICMP_ECHO_REPLY;
    icmp[2..4].fill(0);
    let ck = checksum(icmp);
    icmp[2..4].copy_from_slice(&ck.to_be_bytes());
    turn_ethernet(frame, mac);
    Some(frame.len())
}

/// ICMPv6 checksum over the pseudo-header and `msg`.
fn icmp6_checksum(src: &[u8], dst: &[u8], msg: &[u8]) -> u16 {
    let mut s = add_carry(sum(src), sum(dst));
    s = add_carry(s, msg.len() as u64);
    s = add_carry(s, 58);
    !fold(add_carry(s, sum(msg)))
}

/// An ICMPv6 echo request to, or a neighbour solicitation for, one of `ips` becomes the echo reply
/// or the neighbour advertisement (solicited, override, with our link-layer address), from `mac`.
/// An advertisement is 72 bytes of IPv6: a solicitation without options is 64, so the caller gives a
/// frame of at least [`NS_REPLY_LEN`] bytes after the L2 header (see the `icmpecho` engine). A
/// solicitation from the unspecified address (duplicate address detection) is answered to all
/// nodes, `ff02::1`, at their multicast MAC.
pub fn icmp6_reply(frame: &mut [u8], h: &Headers, mac: [u8; 6], ips: &[[u8; 16]]) -> Option<usize> {
    let l2 = h.l2_len as usize;
    if h.l3 != L3::Ipv6 || h.l4_proto != 58 || frame.len() < l2 + 40 + 8 {
        return None;
    }
    let plen = be16(frame, l2 + 4) as usize;
    if l2 + 40 + plen > frame.len() || plen < 8 {
        return None;
    }
    let mut len = frame.len();
    let ip = &frame[l2..l2 + 40 + plen];
    let (src, dst): ([u8; 16], [u8; 16]) =
        (ip[8..24].try_into().unwrap_or([0; 16]), ip[24..40].try_into().unwrap_or([0; 16]));
    match ip[40] {
        ICMP6_ECHO_REQUEST if ips.contains(&dst) => {
            let ip = &mut frame[l2..l2 + 40 + plen];
            ip[8..24].copy_from_slice(&dst);
            ip[24..40].copy_from_slice(&src);
            ip[7] = 64;
            ip[40] = ICMP6_ECHO_REPLY;
            ip[42..44].fill(0);
            let ck = icmp6_checksum(&dst, &src, &ip[40..]);
            ip[42..44].copy_from_slice(&ck.to_be_bytes());
        }
        ND_SOLICIT if plen >= 24 && ips.contains(&ip[48..64].try_into().unwrap_or([0; 16])) => {
            let target: [u8; 16] = ip[48..64].try_into().unwrap_or([0; 16]);
            // An unspecified source (duplicate address detection) is answered to all nodes.
            let to = if src == [0; 16] { [0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1] } else { src };
            // The advertisement: 24 bytes + a target link-layer address option (8): 32 bytes.
            if frame.len() < l2 + 40 + 32 {
                return None;
            }
            let ip = &mut frame[l2..l2 + 72];
            ip[4..6].copy_from_slice(&32u16.to_be_bytes());
            ip[7] = 255;
            ip[8..24].copy_from_slice(&target);
            ip[24..40].copy_from_slice(&to);
            let msg = &mut ip[40..72];
            msg[0] = ND_ADVERT;
            msg[1] = 0;
            msg[2..4].fill(0);
            msg[4] = if src == [0; 16] { 0x20 } else { 0x60 }; // (solicited when asked) + override
            msg[5..8].fill(0);
            msg[8..24].copy_from_slice(&target);
            msg[24] = 2; // target link-layer address option
            msg[25] = 1; // length in units of 8 bytes
            msg[26..32].copy_from_slice(&mac);
            let ck = icmp6_checksum(&target, &to, msg);
            msg[2..4].copy_from_slice(&ck.to_be_bytes());
            // A longer solicitation (more options) is cut to the advertisement.
            len = l2 + 72;
            if src == [0; 16] {
                // To all nodes (ff02::1): their multicast MAC, 33:33 and the address's last 32 bits.
                frame[..6].copy_from_slice(&[0x33, 0x33, 0, 0, 0, 1]);
                frame[6..12].copy_from_slice(&mac);
                return Some(len);
            }
        }
        _ => return None,
    }
    turn_ethernet(frame, mac);
    Some(len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        /// On arbitrary bytes: no panic; a frame that is not a request for us is left exactly as it
        /// was; a reply never claims more bytes than the frame has and always comes from our MAC.
        fn arbitrary_bytes_never_panic_and_replies_come_from_us(
            frame in proptest::collection::vec(any::<u8>(), 0..160)
        ) {
            let h = crate::parse(&frame);
            type Builder = fn(&mut [u8], &crate::Headers) -> Option<usize>;
            let builders: [Builder; 3] = [
                |f, h| arp_reply(f, h, [1; 6], &[[0; 4]]),
                |f, h| icmp4_echo_reply(f, h, [1; 6], &[[0; 4]]),
                |f, h| icmp6_reply(f, h, [1; 6], &[[0; 16]]),
            ];
            for build in builders {
                let mut g = frame.clone();
                match build(&mut g, &h) {
                    None => prop_assert_eq!(&g, &frame),
                    Some(n) => {
                        prop_assert!(n <= frame.len() && n >= 14);
                        prop_assert_eq!(&g[6..12], &[1u8; 6][..]);
                    }
                }
            }
        }
    }
}
