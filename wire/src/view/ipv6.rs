//! IPv6 fixed header (RFC 8200) and the walk over its extension headers.

use super::{proto, range, range_mut, rd, rd16, rd32, rd8, wr, wr8};

/// The most extension headers [`Ipv6::upper`] walks through before giving up. RFC 8200 expects a
/// handful at most; the bound keeps a crafted chain from costing more than a few reads.
pub const MAX_EXT_HEADERS: usize = 8;

/// An IPv6 fixed-header view. [`Ipv6::new`] checks the length (40 bytes) and the version.
#[derive(Debug, Clone, Copy)]
pub struct Ipv6<T> {
    buf: T,
}

/// Where the upper-layer header of an IPv6 packet is: [`Ipv6::upper`]'s result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Upper {
    /// The upper-layer protocol: the first next-header value that is not an extension header walked
    /// (TCP, UDP, ICMPv6, ..., or [`proto::IPV6_NONXT`]).
    pub proto: u8,
    /// Offset of the upper-layer header from the start of the IPv6 header (40 without extension
    /// headers). May equal the buffer's length when the window ends there.
    pub offset: usize,
    /// The fragment offset (8-byte units) of the Fragment header crossed, 0 without one.
    pub frag_offset: u16,
    /// The M flag of the Fragment header crossed, false without one.
    pub more_fragments: bool,
}

impl Upper {
    /// Whether the packet is a fragment, first or not. An "atomic fragment" (a Fragment header with
    /// offset 0 and no M flag, RFC 6946) is not: it is a whole packet.
    pub fn is_fragment(&self) -> bool {
        self.frag_offset != 0 || self.more_fragments
    }
}

impl<T> Ipv6<T> {
    /// Length of the fixed header.
    pub const LEN: usize = 40;
}

impl<T: AsRef<[u8]>> Ipv6<T> {
    /// A view of the header at the start of `buf`; `None` if `buf` is shorter than 40 bytes or the
    /// version is not 6.
    pub fn new(buf: T) -> Option<Self> {
        let b = buf.as_ref();
        (b.len() >= Self::LEN && rd8(b, 0) >> 4 == 6).then_some(Ipv6 { buf })
    }

    /// The buffer back.
    pub fn into_inner(self) -> T {
        self.buf
    }

    /// The version field (6 in a checked view).
    pub fn version(&self) -> u8 {
        rd8(self.buf.as_ref(), 0) >> 4
    }

    /// Traffic class: DSCP (6 bits) and ECN (2 bits).
    pub fn traffic_class(&self) -> u8 {
        (rd16(self.buf.as_ref(), 0) >> 4) as u8
    }

    /// Differentiated services code point.
    pub fn dscp(&self) -> u8 {
        self.traffic_class() >> 2
    }

    /// Explicit congestion notification (3 is CE).
    pub fn ecn(&self) -> u8 {
        self.traffic_class() & 3
    }

    /// Flow label (20 bits).
    pub fn flow_label(&self) -> u32 {
        rd32(self.buf.as_ref(), 0) & 0x000F_FFFF
    }

    /// Payload length: the bytes after the fixed header, extension headers included.
    pub fn payload_len(&self) -> u16 {
        rd16(self.buf.as_ref(), 4)
    }

    /// The type of the header after the fixed header: an extension header or the upper layer.
    pub fn next_header(&self) -> u8 {
        rd8(self.buf.as_ref(), 6)
    }

    /// Hop limit.
    pub fn hop_limit(&self) -> u8 {
        rd8(self.buf.as_ref(), 7)
    }

    /// Source address.
    pub fn src(&self) -> [u8; 16] {
        rd(self.buf.as_ref(), 8)
    }

    /// Destination address (the next hop's, if there is a Routing header).
    pub fn dst(&self) -> [u8; 16] {
        rd(self.buf.as_ref(), 24)
    }

    /// The bytes after the fixed header (extension headers included), to the payload length or the
    /// end of the buffer, whichever comes first.
    pub fn payload(&self) -> &[u8] {
        let b = self.buf.as_ref();
        range(b, Self::LEN, b.len().min(Self::LEN + usize::from(self.payload_len())))
    }

    /// Walks the extension headers (Hop-by-Hop, Routing, Fragment, Destination Options) to the upper
    /// layer. `None` if an extension header is cut by the end of the buffer, or if there are more
    /// than [`MAX_EXT_HEADERS`]. Other next-header values, AH and ESP included, end the walk.
    ///
    /// After a Fragment header with a non-zero offset the walk stops there: what follows is fragment
    /// data, not headers. `proto` is then the Fragment header's next header (usually the upper
    /// layer's protocol, whose header is in the first fragment) and `offset` the data's.
    pub fn upper(&self) -> Option<Upper> {
        let b = self.buf.as_ref();
        let mut up = Upper { proto: self.next_header(), offset: Self::LEN, frag_offset: 0, more_fragments: false };
        for _ in 0..=MAX_EXT_HEADERS {
            let len = match up.proto {
                // Length in 8-octet units, not counting the first 8 octets.
                proto::HOPOPT | proto::IPV6_ROUTE | proto::IPV6_OPTS => (usize::from(*b.get(up.offset + 1)?) + 1) * 8,
                proto::IPV6_FRAG => {
                    let fo = rd16(b.get(up.offset..)?, 2);
                    up.frag_offset = fo >> 3;
                    up.more_fragments = fo & 1 != 0;
                    8
                }
                _ => return Some(up),
            };
            // The whole extension header must be in the window, like the views' fixed headers.
            let end = up.offset + len;
            if end > b.len() {
                return None;
            }
            up.proto = rd8(b, up.offset);
            up.offset = end;
            if up.frag_offset != 0 {
                return Some(up);
            }
        }
        // The loop ran one more time than the bound allows: the chain has too many headers.
        None
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv6<T> {
    /// Sets the traffic class (DSCP and ECN).
    pub fn set_traffic_class(&mut self, tc: u8) {
        let word = (rd16(self.buf.as_ref(), 0) & 0xF00F) | (u16::from(tc) << 4);
        wr(self.buf.as_mut(), 0, word.to_be_bytes());
    }

    /// Sets the DSCP (low 6 bits), keeping the ECN bits.
    pub fn set_dscp(&mut self, dscp: u8) {
        self.set_traffic_class((dscp << 2) | self.ecn());
    }

    /// Sets the ECN bits (low 2 bits), keeping the DSCP.
    pub fn set_ecn(&mut self, ecn: u8) {
        self.set_traffic_class((self.dscp() << 2) | (ecn & 3));
    }

    /// Sets the flow label (its low 20 bits).
    pub fn set_flow_label(&mut self, label: u32) {
        let word = (rd32(self.buf.as_ref(), 0) & 0xFFF0_0000) | (label & 0x000F_FFFF);
        wr(self.buf.as_mut(), 0, word.to_be_bytes());
    }

    /// Sets the payload length.
    pub fn set_payload_len(&mut self, len: u16) {
        wr(self.buf.as_mut(), 4, len.to_be_bytes());
    }

    /// Sets the next header of the fixed header.
    pub fn set_next_header(&mut self, next: u8) {
        wr8(self.buf.as_mut(), 6, next);
    }

    /// Sets the hop limit.
    pub fn set_hop_limit(&mut self, hops: u8) {
        wr8(self.buf.as_mut(), 7, hops);
    }

    /// Decrements the hop limit and returns the new value; `None` (nothing changed) when it is 0.
    /// IPv6 has no header checksum, so there is nothing else to patch.
    pub fn decrement_hop_limit(&mut self) -> Option<u8> {
        let hops = self.hop_limit().checked_sub(1)?;
        self.set_hop_limit(hops);
        Some(hops)
    }

    /// Sets the source address. The L4 checksum covers it: see
    /// [`Udp::update_checksum_addr_v6`](super::Udp::update_checksum_addr_v6).
    pub fn set_src(&mut self, addr: [u8; 16]) {
        wr(self.buf.as_mut(), 8, addr);
    }

    /// Sets the destination address (see [`set_src`](Ipv6::set_src) for the L4 checksum).
    pub fn set_dst(&mut self, addr: [u8; 16]) {
        wr(self.buf.as_mut(), 24, addr);
    }

    /// The payload as [`payload`](Ipv6::payload) bounds it, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let plen = usize::from(self.payload_len());
        let b = self.buf.as_mut();
        let end = b.len().min(Self::LEN + plen);
        range_mut(b, Self::LEN, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    const DST: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

    /// A fixed header (TC 0xB8, flow 0x12345, hop limit 64) then `ext` as the payload.
    fn packet(next: u8, ext: &[u8]) -> ([u8; 256], usize) {
        let mut p = [0u8; 256];
        p[..8].copy_from_slice(&[0x6B, 0x81, 0x23, 0x45, 0, ext.len() as u8, next, 64]);
        p[8..24].copy_from_slice(&SRC);
        p[24..40].copy_from_slice(&DST);
        p[40..40 + ext.len()].copy_from_slice(ext);
        (p, 40 + ext.len())
    }

    #[test]
    fn fixed_header_fields_and_setters() {
        let (mut p, n) = packet(proto::UDP, &[0; 8]);
        let ip = Ipv6::new(&p[..n]).unwrap();
        assert_eq!((ip.version(), ip.traffic_class(), ip.dscp(), ip.ecn()), (6, 0xB8, 46, 0));
        assert_eq!((ip.flow_label(), ip.payload_len(), ip.next_header(), ip.hop_limit()), (0x12345, 8, 17, 64));
        assert_eq!((ip.src(), ip.dst(), ip.payload().len()), (SRC, DST, 8));
        let mut ip = Ipv6::new(&mut p[..]).unwrap();
        assert_eq!(ip.payload().len(), 8); // padding past the payload length left out
        ip.set_ecn(3);
        ip.set_dscp(10);
        assert_eq!(ip.traffic_class(), 0x2B);
        ip.set_flow_label(0xFFFF_FFFF);
        assert_eq!((ip.flow_label(), ip.traffic_class(), ip.version()), (0xFFFFF, 0x2B, 6));
        ip.set_traffic_class(0xFF);
        assert_eq!((ip.flow_label(), ip.traffic_class(), ip.version()), (0xFFFFF, 0xFF, 6));
        ip.set_payload_len(1);
        ip.set_next_header(proto::TCP);
        ip.set_hop_limit(1);
        assert_eq!(ip.decrement_hop_limit(), Some(0));
        assert_eq!(ip.decrement_hop_limit(), None);
        ip.set_src(DST);
        ip.set_dst(SRC);
        ip.payload_mut()[0] = 0xEE;
        assert_eq!(p[..8], [0x6F, 0xFF, 0xFF, 0xFF, 0, 1, 6, 0]);
        assert_eq!((&p[8..24], &p[24..40], p[40]), (&DST[..], &SRC[..], 0xEE));
    }

    #[test]
    fn rejects_short_and_wrong_version() {
        let (mut p, _) = packet(proto::UDP, &[]);
        for len in 0..40 {
            assert!(Ipv6::new(&p[..len]).is_none());
        }
        p[0] = 0x45;
        assert!(Ipv6::new(&p[..]).is_none());
    }

    #[test]
    fn upper_without_extensions() {
        let (p, n) = packet(proto::TCP, &[]);
        let up = Ipv6::new(&p[..n]).unwrap().upper().unwrap();
        assert_eq!(up, Upper { proto: proto::TCP, offset: 40, frag_offset: 0, more_fragments: false });
        assert!(!up.is_fragment());
    }

    #[test]
    fn upper_walks_extension_chain() {
        // Hop-by-hop (8 bytes, router alert) -> routing (24 bytes) -> fragment (offset 0, M) -> dest opts (16) -> UDP.
        let mut ext = [0u8; 56];
        ext[..8].copy_from_slice(&[proto::IPV6_ROUTE, 0, 5, 2, 0, 0, 1, 0]);
        ext[8..10].copy_from_slice(&[proto::IPV6_FRAG, 2]);
        ext[32..40].copy_from_slice(&[proto::IPV6_OPTS, 0, 0, 1, 0xde, 0xad, 0xbe, 0xef]);
        ext[40..42].copy_from_slice(&[proto::UDP, 1]);
        let (p, n) = packet(proto::HOPOPT, &ext);
        let ip = Ipv6::new(&p[..n]).unwrap();
        let up = ip.upper().unwrap();
        assert_eq!(up, Upper { proto: proto::UDP, offset: 96, frag_offset: 0, more_fragments: true });
        assert!(up.is_fragment());
        // Every cut inside the chain is reported, never read past.
        for len in 40..n {
            assert_eq!(Ipv6::new(&p[..len]).unwrap().upper(), None, "prefix {len}");
        }
    }

    #[test]
    fn non_first_fragment_and_atomic_fragment() {
        let (p, n) = packet(proto::IPV6_FRAG, &[proto::TCP, 0, 0x05, 0x18, 1, 2, 3, 4]);
        let up = Ipv6::new(&p[..n]).unwrap().upper().unwrap();
        assert_eq!((up.proto, up.offset, up.frag_offset, up.more_fragments), (proto::TCP, 48, 0xA3, false));
        // A non-first fragment whose data starts with what looks like an options header: not walked.
        let (p, n) = packet(proto::IPV6_FRAG, &[proto::IPV6_OPTS, 0, 0, 0x08, 1, 2, 3, 4, proto::UDP, 200]);
        let up = Ipv6::new(&p[..n]).unwrap().upper().unwrap();
        assert_eq!((up.proto, up.offset, up.frag_offset, up.is_fragment()), (proto::IPV6_OPTS, 48, 1, true));
        let (p, n) = packet(proto::IPV6_FRAG, &[proto::ICMPV6, 0, 0, 0, 1, 2, 3, 4]);
        let up = Ipv6::new(&p[..n]).unwrap().upper().unwrap();
        assert_eq!((up.proto, up.offset, up.is_fragment()), (proto::ICMPV6, 48, false));
    }

    #[test]
    fn too_many_extension_headers() {
        // n destination-options headers of 8 bytes each, then "no next header".
        let chain = |n: usize| {
            let mut ext = [0u8; 80];
            for i in 0..n {
                ext[i * 8] = if i + 1 == n { proto::IPV6_NONXT } else { proto::IPV6_OPTS };
            }
            packet(proto::IPV6_OPTS, &ext[..n * 8])
        };
        let (p, n) = chain(MAX_EXT_HEADERS);
        let up = Ipv6::new(&p[..n]).unwrap().upper().unwrap();
        assert_eq!((up.proto, up.offset), (proto::IPV6_NONXT, 40 + 8 * MAX_EXT_HEADERS));
        let (p, n) = chain(MAX_EXT_HEADERS + 1);
        assert_eq!(Ipv6::new(&p[..n]).unwrap().upper(), None);
    }
}
