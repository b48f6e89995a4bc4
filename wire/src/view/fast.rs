//! The fast path for the frames that dominate real traffic: untagged or single-tagged Ethernet,
//! IPv4 without options or IPv6 without extension headers, and their UDP, TCP or ICMP header.
//!
//! [`parse`] (or [`parse_mut`]) checks a frame's lengths once, layer by layer, and hands out the
//! same views as the general path ([`Ipv4`], [`Ipv6`], [`Udp`], [`Tcp`], [`Icmp`]) over
//! **fixed-size arrays**: every getter and setter then reads or writes a constant offset of an
//! array of known length, which the compiler turns into a plain load or store with no bounds check
//! (each view's accessors check their offsets against the buffer's length; on an array that
//! comparison is decided at compile time). Setters that keep checksums right are the views' own
//! incremental ones (RFC 1624), which work on the bytes as they lie, without byte swaps.
//!
//! Anything else ([`Frame::Other`]: two or more VLAN tags, IPv4 options, IPv6 extension
//! headers, headers cut short by the window, the transport header included, malformed headers) is for the general views
//! ([`Headers::parse`](super::Headers::parse)); [`Frame::NotIp`] says the frame is certainly not IP
//! (ARP, LLDP, ...), so a policy about IP can stop there.
//!
//! ```
//! use wasmdp_wire::view::fast::{self, Frame, L4};
//! # let mut frame = [0u8; 60];
//! # frame[12..14].copy_from_slice(&[0x08, 0x00]);
//! # frame[14..34].copy_from_slice(&[0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
//! # frame[34..38].copy_from_slice(&[0x30, 0x39, 0x00, 0x35]);
//! match fast::parse(&frame) {
//!     Frame::V4(v4) => {
//!         assert_eq!(v4.ip.dst(), [10, 0, 0, 2]);
//!         let L4::Udp(udp) = v4.l4 else { panic!("UDP") };
//!         assert_eq!(udp.dst_port(), 53);
//!     }
//!     Frame::V6(_) | Frame::NotIp => {}
//!     Frame::Other => { /* the general views: Headers::parse */ }
//! }
//! ```

use super::{ethertype, proto, Icmp, Ipv4, Ipv6, Tcp, Udp};

/// `N` bytes of `h` from `at`: a field of a header read at a fixed offset. With `at` a constant
/// it is one load with no bounds check (the examples' fixed-offset paths read their words so, a
/// 4- or 8-byte field at a time, where a byte each cost cranelift an address per byte).
#[inline(always)]
pub fn bytes_at<const N: usize, const L: usize>(h: &[u8; L], at: usize) -> [u8; N] {
    let mut w = [0; N];
    w.copy_from_slice(&h[at..at + N]);
    w
}

/// A frame as the fast path sees it.
pub enum Frame<A, B, C, D> {
    /// IPv4 without options.
    V4(V4<A, C, D>),
    /// IPv6 without extension headers.
    V6(V6<B, C, D>),
    /// Untagged or single-tagged, and neither IPv4 nor IPv6: certainly not IP.
    NotIp,
    /// Not for the fast path: see the module's documentation. Use the general views.
    Other,
}

/// [`Frame`] read only.
pub type FrameRef<'a> = Frame<&'a [u8; 20], &'a [u8; 40], &'a [u8; 8], &'a [u8; 20]>;
/// [`Frame`] to change.
pub type FrameMut<'a> = Frame<&'a mut [u8; 20], &'a mut [u8; 40], &'a mut [u8; 8], &'a mut [u8; 20]>;

/// An IPv4 packet without options: its header and its transport header.
pub struct V4<A, C, D> {
    /// Bytes before the IPv4 header: 14, or 18 behind one VLAN tag.
    pub l3_offset: usize,
    /// The IPv4 header (20 bytes).
    pub ip: Ipv4<A>,
    /// The transport header.
    pub l4: L4<C, D>,
}

/// An IPv6 packet without extension headers: its header and its transport header.
pub struct V6<B, C, D> {
    /// Bytes before the IPv6 header: 14, or 18 behind one VLAN tag.
    pub l3_offset: usize,
    /// The IPv6 header (40 bytes).
    pub ip: Ipv6<B>,
    /// The transport header.
    pub l4: L4<C, D>,
}

/// The transport header of a fast-path packet.
pub enum L4<C, D> {
    /// UDP (8 bytes).
    Udp(Udp<C>),
    /// TCP: its fixed 20 bytes (ports, sequence numbers, flags, window, checksum). The options
    /// and the data are not in this view (its `options()` and `payload()` are empty): use the
    /// general [`Tcp`] view on the window for them.
    Tcp(Tcp<D>),
    /// ICMP or ICMPv6 (8 bytes).
    Icmp(Icmp<C>),
    /// Another protocol, or a fragment other than the first (no transport header).
    None,
}

impl<C, D> L4<C, D> {
    /// Byte length of the header in the view (0 for `None`): what a policy that changed it marks
    /// to be copied back, after the IP header.
    #[inline(always)]
    pub fn len(&self) -> usize {
        match self {
            L4::Udp(_) | L4::Icmp(_) => 8,
            L4::Tcp(_) => 20,
            L4::None => 0,
        }
    }

    /// Whether there is no transport header in the view.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        matches!(self, L4::None)
    }
}

/// Where a frame's headers are: what [`parse`] and [`parse_mut`] share.
#[derive(Clone, Copy)]
enum Found {
    /// IPv4 or IPv6 at `l3`, with a transport header of `l4` kind right after the IP header.
    Ip {
        v6: bool,
        l3: usize,
        l4: Kind,
    },
    NotIp,
    Other,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Udp,
    Tcp,
    Icmp,
    None,
}

/// An EtherType as its two bytes lie in the frame, read as one native word: compared with
/// constants in the same form, it needs no byte swap (which WebAssembly has no instruction for).
#[inline(always)]
const fn wire16(b: [u8; 2]) -> u16 {
    u16::from_ne_bytes(b)
}

const IPV4: u16 = wire16(ethertype::IPV4.to_be_bytes());
const IPV6: u16 = wire16(ethertype::IPV6.to_be_bytes());
const TAGS: [u16; 3] = [
    wire16(ethertype::VLAN.to_be_bytes()),
    wire16(ethertype::QINQ.to_be_bytes()),
    wire16(ethertype::QINQ_9100.to_be_bytes()),
];

/// Finds the headers, checking each length once; the common case (untagged IPv4) first.
#[inline(always)]
fn find(f: &[u8]) -> Found {
    let Some(eth) = f.first_chunk::<18>() else {
        return Found::Other;
    };
    let (mut l3, mut et) = (14, wire16([eth[12], eth[13]]));
    if et != IPV4 && et != IPV6 {
        if !TAGS.contains(&et) {
            return Found::NotIp;
        }
        (l3, et) = (18, wire16([eth[16], eth[17]]));
        if et != IPV4 && et != IPV6 {
            // A second tag is the general views' to walk.
            return if TAGS.contains(&et) { Found::Other } else { Found::NotIp };
        }
    }
    let rest = f.get(l3..).unwrap_or_default();
    let (v6, l4, next) = if et == IPV4 {
        let Some((ip, l4)) = rest.split_first_chunk::<20>() else { return Found::Other };
        // Version 4, no options, a total length that holds the header.
        if ip[0] != 0x45 || u16::from_be_bytes([ip[2], ip[3]]) < 20 {
            return Found::Other;
        }
        // A fragment after the first (an offset in the low 13 bits) has no transport header.
        if wire16([ip[6], ip[7]]) & wire16([0x1F, 0xFF]) != 0 {
            return Found::Ip { v6: false, l3, l4: Kind::None };
        }
        (false, l4, ip[9])
    } else {
        let Some((ip, l4)) = rest.split_first_chunk::<40>() else { return Found::Other };
        // The extension headers the general views walk ([`Ipv6::upper`]) are theirs.
        let ext = matches!(ip[6], proto::HOPOPT | proto::IPV6_ROUTE | proto::IPV6_FRAG | proto::IPV6_OPTS);
        if ip[0] >> 4 != 6 || ext {
            return Found::Other;
        }
        (true, l4, ip[6])
    };
    // A transport header cut by the window, or a TCP data offset under 5 (malformed): what to make
    // of it is the general views' (and the policy's) call.
    let kind = match next {
        proto::UDP if l4.len() >= 8 => Kind::Udp,
        proto::TCP if l4.len() >= 20 && l4[12] >= 0x50 => Kind::Tcp,
        proto::ICMP if !v6 && l4.len() >= 8 => Kind::Icmp,
        proto::ICMPV6 if v6 && l4.len() >= 8 => Kind::Icmp,
        proto::UDP | proto::TCP => return Found::Other,
        proto::ICMP if !v6 => return Found::Other,
        proto::ICMPV6 if v6 => return Found::Other,
        _ => Kind::None,
    };
    Found::Ip { v6, l3, l4: kind }
}

/// The frame's headers, read only. Never panics, whatever the bytes.
#[inline(always)]
pub fn parse(f: &[u8]) -> FrameRef<'_> {
    let found = find(f);
    let Found::Ip { v6, l3, l4 } = found else {
        return if matches!(found, Found::NotIp) { Frame::NotIp } else { Frame::Other };
    };
    let rest = f.get(l3..).unwrap_or_default();
    if v6 {
        let Some((ip, tail)) = rest.split_first_chunk::<40>() else { return Frame::Other };
        let Some(ip) = Ipv6::new(ip) else { return Frame::Other };
        Frame::V6(V6 { l3_offset: l3, ip, l4: l4_ref(l4, tail) })
    } else {
        let Some((ip, tail)) = rest.split_first_chunk::<20>() else { return Frame::Other };
        Frame::V4(V4 { l3_offset: l3, ip: Ipv4::parsed(ip), l4: l4_ref(l4, tail) })
    }
}

/// The frame's headers, to change in place. Never panics, whatever the bytes.
#[inline(always)]
pub fn parse_mut(f: &mut [u8]) -> FrameMut<'_> {
    let found = find(f);
    let Found::Ip { v6, l3, l4 } = found else {
        return if matches!(found, Found::NotIp) { Frame::NotIp } else { Frame::Other };
    };
    let rest = f.get_mut(l3..).unwrap_or_default();
    if v6 {
        let Some((ip, tail)) = rest.split_first_chunk_mut::<40>() else { return Frame::Other };
        let Some(ip) = Ipv6::new(ip) else { return Frame::Other };
        Frame::V6(V6 { l3_offset: l3, ip, l4: l4_mut(l4, tail) })
    } else {
        let Some((ip, tail)) = rest.split_first_chunk_mut::<20>() else { return Frame::Other };
        Frame::V4(V4 { l3_offset: l3, ip: Ipv4::parsed(ip), l4: l4_mut(l4, tail) })
    }
}

#[inline(always)]
fn l4_ref(kind: Kind, tail: &[u8]) -> L4<&[u8; 8], &[u8; 20]> {
    match kind {
        Kind::Udp => tail.first_chunk::<8>().map_or(L4::None, |b| L4::Udp(Udp { buf: b })),
        Kind::Icmp => tail.first_chunk::<8>().and_then(Icmp::new).map_or(L4::None, L4::Icmp),
        Kind::Tcp => tail.first_chunk::<20>().map_or(L4::None, |b| L4::Tcp(Tcp { buf: b })),
        Kind::None => L4::None,
    }
}

#[inline(always)]
fn l4_mut(kind: Kind, tail: &mut [u8]) -> L4<&mut [u8; 8], &mut [u8; 20]> {
    match kind {
        Kind::Udp => tail.first_chunk_mut::<8>().map_or(L4::None, |b| L4::Udp(Udp { buf: b })),
        Kind::Icmp => tail.first_chunk_mut::<8>().and_then(Icmp::new).map_or(L4::None, L4::Icmp),
        Kind::Tcp => tail.first_chunk_mut::<20>().map_or(L4::None, |b| L4::Tcp(Tcp { buf: b })),
        Kind::None => L4::None,
    }
}

impl V4<&mut [u8; 20], &mut [u8; 8], &mut [u8; 20]> {
    /// Sets the destination address, updating the IPv4 header checksum and the TCP or UDP
    /// checksum, which covers it (a UDP checksum of 0, "none", stays 0), incrementally. ICMP has no
    /// pseudo-header. In a first fragment the transport checksum is the whole datagram's and is
    /// updated too; in a later one (no transport header) the IP header alone changes, as it must.
    #[inline(always)]
    pub fn set_dst_nat(&mut self, addr: [u8; 4]) {
        let old = self.ip.dst();
        self.fix_l4(old, addr);
        self.ip.set_dst_incremental(addr);
    }

    /// [`V4::set_dst_nat`] for the source address.
    #[inline(always)]
    pub fn set_src_nat(&mut self, addr: [u8; 4]) {
        let old = self.ip.src();
        self.fix_l4(old, addr);
        self.ip.set_src_incremental(addr);
    }

    #[inline(always)]
    fn fix_l4(&mut self, old: [u8; 4], new: [u8; 4]) {
        match &mut self.l4 {
            L4::Udp(u) => u.update_checksum_addr_v4(old, new),
            L4::Tcp(t) => t.update_checksum_addr_v4(old, new),
            L4::Icmp(_) | L4::None => {}
        }
    }

    /// Bytes from the frame's start to the end of the transport header in the view: what a
    /// policy that changed the headers marks to be copied back
    /// (the SDK's `Window::set_dirty`).
    #[inline(always)]
    pub fn headers_len(&self) -> usize {
        self.l3_offset + 20 + self.l4.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::{Headers, L3Kind};
    use std::vec::Vec;

    /// Ethernet (with `tags` tags) + IPv4 (IHL `ihl`, protocol `proto_`) + a transport header to port
    /// 53 (read as UDP, TCP or anything) and data: 28 bytes after the IP header.
    fn v4(tags: usize, ihl: u8, proto_: u8) -> Vec<u8> {
        let mut f = Vec::from([2u8, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2]);
        for _ in 0..tags {
            f.extend([0x81, 0x00, 0x00, 0x07]);
        }
        f.extend([0x08, 0x00]);
        let hlen = usize::from(ihl) * 4;
        let total = (hlen + 28) as u16;
        f.extend([0x40 | ihl, 0, (total >> 8) as u8, total as u8, 0, 1, 0, 0, 64, proto_, 0, 0]);
        f.extend([10, 0, 0, 1, 198, 18, 0, 7]);
        f.resize(f.len() + hlen - 20, 1);
        f.extend([0x04, 0xd2, 0x00, 0x35, 0x00, 28, 0, 0]);
        f.extend([0, 0, 0, 0, 0x50, 0x18, 0, 0, 0, 0, 0, 0]);
        // The datagram the lengths announce, all there.
        f.resize(12 + 4 * tags + 2 + usize::from(total), 0);
        f
    }

    #[test]
    fn common_frames_take_the_fast_path_and_agree_with_the_general_views() {
        for tags in [0, 1] {
            for p in [proto::UDP, proto::TCP, proto::ICMP, 47] {
                let f = v4(tags, 5, p);
                let Frame::V4(v) = parse(&f) else { panic!("{tags} tags, protocol {p}: not fast") };
                let h = Headers::parse(&f).unwrap();
                let l3 = h.l3.unwrap();
                assert_eq!((v.l3_offset, l3.kind, v.ip.protocol()), (l3.offset, L3Kind::V4, p));
                assert_eq!(v.ip.dst(), [198, 18, 0, 7]);
                match (v.l4, p) {
                    (L4::Udp(u), proto::UDP) => assert_eq!(u.dst_port(), 53),
                    (L4::Tcp(t), proto::TCP) => assert_eq!((t.dst_port(), t.flags()), (53, 0x18)),
                    (L4::Icmp(_), proto::ICMP) | (L4::None, 47) => {}
                    _ => panic!("protocol {p}: wrong transport view"),
                }
            }
        }
    }

    #[test]
    fn what_is_not_common_goes_to_the_general_views_and_non_ip_says_so() {
        assert!(matches!(parse(&v4(2, 5, proto::UDP)), Frame::Other), "two tags");
        assert!(matches!(parse(&v4(0, 6, proto::UDP)), Frame::Other), "IPv4 options");
        assert!(matches!(parse(&v4(0, 5, proto::UDP)[..30]), Frame::Other), "cut in the IP header");
        let mut arp = v4(0, 5, proto::UDP);
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert!(matches!(parse(&arp), Frame::NotIp));
        // A UDP header cut by the window: the general views decide.
        let f = v4(0, 5, proto::UDP);
        assert!(matches!(parse(&f[..41]), Frame::Other));
        assert!(matches!(parse(&f[..42]), Frame::V4(V4 { l4: L4::Udp(_), .. })));
        // A later fragment: no transport header, whatever the bytes there.
        let mut frag = v4(0, 5, proto::UDP);
        frag[21] = 1;
        assert!(matches!(parse(&frag), Frame::V4(V4 { l4: L4::None, .. })));
        // A TCP data offset under 5 is malformed: the general views decide.
        let mut bad = v4(0, 5, proto::TCP);
        bad[46] = 0x40;
        assert!(matches!(parse(&bad), Frame::Other));
        for n in 0..=f.len() {
            let _ = parse(&f[..n]);
            let _ = parse_mut(&mut f.clone()[..n]);
        }
    }

    #[test]
    fn ipv6_without_extension_headers_is_fast_and_with_them_is_not() {
        let mut f = Vec::from([0u8; 12]);
        f.extend([0x86, 0xdd, 0x60, 0, 0, 0, 0, 8, proto::UDP, 64]);
        f.extend([0u8; 32]);
        f.extend([0x04, 0xd2, 0x00, 0x35, 0x00, 8, 0, 0]);
        let Frame::V6(v) = parse(&f) else { panic!("not fast") };
        assert!(matches!(v.l4, L4::Udp(u) if u.dst_port() == 53));
        f[20] = proto::HOPOPT;
        assert!(matches!(parse(&f), Frame::Other));
    }

    #[test]
    fn nat_setters_give_the_checksums_a_full_computation_gives() {
        for p in [proto::UDP, proto::TCP] {
            let mut f = v4(1, 5, p);
            crate::view::Ipv4::new(&mut f[18..]).unwrap().fill_checksum();
            let l4 = 38;
            let full = |f: &mut [u8]| {
                let (ip, seg) = f[18..].split_at_mut(20);
                let ip = crate::view::Ipv4::new(&*ip).unwrap();
                if p == proto::UDP {
                    let c = Udp::new(&seg[..]).unwrap().compute_checksum_v4(&ip).unwrap();
                    seg[6..8].copy_from_slice(&c.to_be_bytes());
                } else {
                    let c = Tcp::new(&seg[..]).unwrap().compute_checksum_v4(&ip).unwrap();
                    seg[16..18].copy_from_slice(&c.to_be_bytes());
                }
            };
            full(&mut f);
            let mut want = f.clone();
            want[34..38].copy_from_slice(&[10, 9, 9, 9]);
            crate::view::Ipv4::new(&mut want[18..]).unwrap().fill_checksum();
            full(&mut want);
            let Frame::V4(mut v) = parse_mut(&mut f) else { panic!("not fast") };
            v.set_dst_nat([10, 9, 9, 9]);
            assert_eq!(v.headers_len(), l4 + if p == proto::UDP { 8 } else { 20 });
            assert_eq!(f, want, "protocol {p}");
        }
    }
}
