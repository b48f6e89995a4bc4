//! IPv4 header (RFC 791), options included.

use super::{cksum, range, range_mut, rd, rd16, rd8, wr, wr8};

/// An IPv4 header view. [`Ipv4::new`] checks the version, the IHL (at least 5, and the whole header
/// with its options in the buffer) and that the total length covers the header. The packet itself
/// may extend past the buffer (a window): [`payload`](Ipv4::payload) is cut by whichever ends first.
#[derive(Debug, Clone, Copy)]
pub struct Ipv4<T> {
    buf: T,
}

impl<T> Ipv4<T> {
    /// Length of a header without options.
    pub const MIN_LEN: usize = 20;
    /// "Don't fragment", in [`flags`](Ipv4::flags).
    pub const DF: u8 = 0b010;
    /// "More fragments", in [`flags`](Ipv4::flags).
    pub const MF: u8 = 0b001;
}

/// Offset of the checksum field.
const CKSUM: usize = 10;

impl<T: AsRef<[u8]>> Ipv4<T> {
    /// A view of the header at the start of `buf`; `None` unless it is an IPv4 header (version 4,
    /// IHL >= 5) that is all in `buf`, options included, with a total length of at least its length.
    #[inline(always)]
    pub fn new(buf: T) -> Option<Self> {
        let b = buf.as_ref();
        let vihl = *b.first()?;
        let hlen = usize::from(vihl & 0x0F) * 4;
        let ok = vihl >> 4 == 4 && hlen >= Self::MIN_LEN && b.len() >= hlen && usize::from(rd16(b, 2)) >= hlen;
        ok.then_some(Ipv4 { buf })
    }

    /// A view of a header [`Headers::parse`](super::Headers::parse) has checked (see
    /// [`Headers::ipv4_mut`](super::Headers::ipv4_mut)).
    #[inline(always)]
    pub(super) fn parsed(buf: T) -> Self {
        Ipv4 { buf }
    }

    /// The buffer back.
    pub fn into_inner(self) -> T {
        self.buf
    }

    /// The version field (4 in a checked view).
    pub fn version(&self) -> u8 {
        rd8(self.buf.as_ref(), 0) >> 4
    }

    /// The header length in 32-bit words (5..=15).
    pub fn ihl(&self) -> u8 {
        rd8(self.buf.as_ref(), 0) & 0x0F
    }

    /// The header length in bytes, options included (20..=60).
    pub fn header_len(&self) -> usize {
        usize::from(self.ihl()) * 4
    }

    /// Differentiated services code point (the high 6 bits of the old TOS byte).
    pub fn dscp(&self) -> u8 {
        rd8(self.buf.as_ref(), 1) >> 2
    }

    /// Explicit congestion notification (the low 2 bits of the old TOS byte; 3 is CE).
    pub fn ecn(&self) -> u8 {
        rd8(self.buf.as_ref(), 1) & 3
    }

    /// Total length of the packet (header and payload) in bytes.
    pub fn total_len(&self) -> u16 {
        rd16(self.buf.as_ref(), 2)
    }

    /// Identification (for fragment reassembly).
    pub fn id(&self) -> u16 {
        rd16(self.buf.as_ref(), 4)
    }

    /// The three flag bits: reserved, [`DF`](Ipv4::DF), [`MF`](Ipv4::MF).
    pub fn flags(&self) -> u8 {
        rd8(self.buf.as_ref(), 6) >> 5
    }

    /// The fragment offset, in units of 8 bytes.
    pub fn frag_offset(&self) -> u16 {
        rd16(self.buf.as_ref(), 6) & 0x1FFF
    }

    /// Whether this is a fragment, first or not (MF set or a non-zero offset).
    pub fn is_fragment(&self) -> bool {
        self.flags() & Self::MF != 0 || self.frag_offset() != 0
    }

    /// Time to live.
    pub fn ttl(&self) -> u8 {
        rd8(self.buf.as_ref(), 8)
    }

    /// The payload's protocol ([`proto`](super::proto)).
    pub fn protocol(&self) -> u8 {
        rd8(self.buf.as_ref(), 9)
    }

    /// The header checksum field.
    pub fn checksum(&self) -> u16 {
        rd16(self.buf.as_ref(), CKSUM)
    }

    /// Source address.
    pub fn src(&self) -> [u8; 4] {
        rd(self.buf.as_ref(), 12)
    }

    /// Destination address.
    pub fn dst(&self) -> [u8; 4] {
        rd(self.buf.as_ref(), 16)
    }

    /// The header bytes, options included.
    pub fn header(&self) -> &[u8] {
        range(self.buf.as_ref(), 0, self.header_len())
    }

    /// The options, between the fixed header and the payload (empty when IHL is 5).
    pub fn options(&self) -> &[u8] {
        range(self.buf.as_ref(), Self::MIN_LEN, self.header_len())
    }

    /// The payload: from the end of the header to the total length, or to the end of the buffer if
    /// that comes first. Bytes after the total length (Ethernet padding) are left out.
    pub fn payload(&self) -> &[u8] {
        let b = self.buf.as_ref();
        range(b, self.header_len(), b.len().min(usize::from(self.total_len())))
    }

    /// Whether the header checksum is right: the header summed with its checksum folds to 0.
    pub fn checksum_ok(&self) -> bool {
        cksum::fold(cksum::sum(self.header(), 0)) == 0
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4<T> {
    /// Sets the DSCP (its low 6 bits), keeping the ECN bits. The checksum is not updated.
    pub fn set_dscp(&mut self, dscp: u8) {
        let tos = (dscp << 2) | self.ecn();
        wr8(self.buf.as_mut(), 1, tos);
    }

    /// Sets the ECN bits (the low 2 bits of `ecn`). The checksum is not updated.
    pub fn set_ecn(&mut self, ecn: u8) {
        let tos = (self.dscp() << 2) | (ecn & 3);
        wr8(self.buf.as_mut(), 1, tos);
    }

    /// Sets the total length. The checksum is not updated.
    pub fn set_total_len(&mut self, len: u16) {
        wr(self.buf.as_mut(), 2, len.to_be_bytes());
    }

    /// Sets the identification. The checksum is not updated.
    pub fn set_id(&mut self, id: u16) {
        wr(self.buf.as_mut(), 4, id.to_be_bytes());
    }

    /// Sets the flags (low 3 bits) and the fragment offset (low 13 bits, in 8-byte units). The
    /// checksum is not updated.
    pub fn set_flags_frag(&mut self, flags: u8, frag_offset: u16) {
        let word = (u16::from(flags & 7) << 13) | (frag_offset & 0x1FFF);
        wr(self.buf.as_mut(), 6, word.to_be_bytes());
    }

    /// Sets the TTL. The checksum is not updated.
    pub fn set_ttl(&mut self, ttl: u8) {
        wr8(self.buf.as_mut(), 8, ttl);
    }

    /// Sets the protocol. The checksum is not updated.
    pub fn set_protocol(&mut self, proto: u8) {
        wr8(self.buf.as_mut(), 9, proto);
    }

    /// Sets the header checksum field.
    pub fn set_checksum(&mut self, cksum: u16) {
        wr(self.buf.as_mut(), CKSUM, cksum.to_be_bytes());
    }

    /// Sets the source address. The checksum is not updated.
    pub fn set_src(&mut self, addr: [u8; 4]) {
        wr(self.buf.as_mut(), 12, addr);
    }

    /// Sets the destination address. The checksum is not updated.
    pub fn set_dst(&mut self, addr: [u8; 4]) {
        wr(self.buf.as_mut(), 16, addr);
    }

    /// The options, writable.
    pub fn options_mut(&mut self) -> &mut [u8] {
        let hlen = self.header_len();
        range_mut(self.buf.as_mut(), Self::MIN_LEN, hlen)
    }

    /// The payload as [`payload`](Ipv4::payload) bounds it, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let (hlen, total) = (self.header_len(), usize::from(self.total_len()));
        let b = self.buf.as_mut();
        let end = b.len().min(total);
        range_mut(b, hlen, end)
    }

    /// Recomputes the header checksum from scratch (after several changes, or on a new header).
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let c = cksum::checksum(self.header());
        self.set_checksum(c);
    }

    /// Replaces the 16-bit word at the even offset `at` with the bytes `new` and patches the
    /// checksum (RFC 1624), the cheap path when one field changes: the rest of the header is not
    /// read, and nothing is byte-swapped ([`cksum::update16_bytes`]).
    #[inline(always)]
    fn replace_word(&mut self, at: usize, new: [u8; 2]) {
        super::replace_word(self.buf.as_mut(), at, new, CKSUM);
    }

    /// Sets the source address and updates the header checksum incrementally. The L4 checksum, which
    /// covers the address too, is the caller's: see
    /// [`Udp::update_checksum_addr_v4`](super::Udp::update_checksum_addr_v4).
    #[inline(always)]
    pub fn set_src_incremental(&mut self, addr: [u8; 4]) {
        let c = cksum::update32_bytes(rd(self.buf.as_ref(), CKSUM), self.src(), addr);
        self.set_src(addr);
        wr(self.buf.as_mut(), CKSUM, c);
    }

    /// Sets the destination address and updates the header checksum incrementally (see
    /// [`set_src_incremental`](Ipv4::set_src_incremental)).
    #[inline(always)]
    pub fn set_dst_incremental(&mut self, addr: [u8; 4]) {
        let c = cksum::update32_bytes(rd(self.buf.as_ref(), CKSUM), self.dst(), addr);
        self.set_dst(addr);
        wr(self.buf.as_mut(), CKSUM, c);
    }

    /// Sets the TTL and updates the header checksum incrementally.
    #[inline(always)]
    pub fn set_ttl_incremental(&mut self, ttl: u8) {
        self.replace_word(8, [ttl, self.protocol()]);
    }

    /// Decrements the TTL, updating the checksum, and returns the new TTL; `None` (and nothing
    /// changed) when it is already 0. A router drops the packet when this returns `None` or `Some(0)`.
    #[inline(always)]
    pub fn decrement_ttl(&mut self) -> Option<u8> {
        let ttl = self.ttl().checked_sub(1)?;
        self.set_ttl_incremental(ttl);
        Some(ttl)
    }

    /// Sets the total length and updates the header checksum incrementally.
    #[inline(always)]
    pub fn set_total_len_incremental(&mut self, len: u16) {
        self.replace_word(2, len.to_be_bytes());
    }

    /// Sets the ECN bits (the low 2 bits of `ecn`, e.g. 3 to mark CE) and updates the checksum.
    #[inline(always)]
    pub fn set_ecn_incremental(&mut self, ecn: u8) {
        // The word at 0 is version/IHL then TOS: keep the first byte, put the new TOS in the second.
        self.replace_word(0, [rd8(self.buf.as_ref(), 0), (self.dscp() << 2) | (ecn & 3)]);
    }

    /// Sets the DSCP (its low 6 bits) and updates the checksum.
    #[inline(always)]
    pub fn set_dscp_incremental(&mut self, dscp: u8) {
        self.replace_word(0, [rd8(self.buf.as_ref(), 0), (dscp << 2) | self.ecn()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Wikipedia/RFC 1071-style example: UDP, 192.168.0.1 -> 192.168.0.199, checksum 0xb861.
    const HDR: [u8; 20] =
        [0x45, 0, 0, 0x73, 0, 0, 0x40, 0, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0, 1, 0xc0, 0xa8, 0, 0xc7];

    /// `HDR` followed by `n` payload bytes 0, 1, 2, ...
    fn packet<const N: usize>() -> [u8; N] {
        let mut p = [0u8; N];
        p[..20].copy_from_slice(&HDR);
        for (i, b) in p[20..].iter_mut().enumerate() {
            *b = i as u8;
        }
        p
    }

    #[test]
    fn fields_of_known_header() {
        let ip = Ipv4::new(&HDR[..]).unwrap();
        assert_eq!((ip.version(), ip.ihl(), ip.header_len(), ip.dscp(), ip.ecn()), (4, 5, 20, 0, 0));
        assert_eq!((ip.total_len(), ip.id(), ip.flags(), ip.frag_offset()), (0x73, 0, Ipv4::<&[u8]>::DF, 0));
        assert_eq!((ip.ttl(), ip.protocol(), ip.checksum()), (64, 17, 0xb861));
        assert_eq!((ip.src(), ip.dst()), ([192, 168, 0, 1], [192, 168, 0, 199]));
        assert!(!ip.is_fragment());
        assert!(ip.checksum_ok());
        assert!(ip.options().is_empty());
        // The window holds the header only: the payload is cut by the buffer.
        assert!(ip.payload().is_empty());
    }

    #[test]
    fn fill_checksum_recomputes_known_value() {
        let mut h = HDR;
        let mut ip = Ipv4::new(&mut h[..]).unwrap();
        ip.set_checksum(0x1234);
        assert!(!ip.checksum_ok());
        ip.fill_checksum();
        assert_eq!(ip.checksum(), 0xb861);
        assert!(ip.checksum_ok());
    }

    #[test]
    fn payload_is_bounded_by_total_len_and_buffer() {
        let mut p: [u8; 40] = packet();
        p[2..4].copy_from_slice(&30u16.to_be_bytes());
        let ip = Ipv4::new(&p[..]).unwrap();
        assert_eq!(ip.payload(), &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]); // padding after 30 bytes left out
        let ip = Ipv4::new(&p[..25]).unwrap();
        assert_eq!(ip.payload(), &[0, 1, 2, 3, 4]);
        let mut ip = Ipv4::new(&mut p[..]).unwrap();
        ip.payload_mut()[0] = 0xAA;
        assert_eq!(p[20], 0xAA);
    }

    #[test]
    fn options_and_setters() {
        let mut p = [0u8; 28];
        p[..20].copy_from_slice(&HDR);
        p[0] = 0x47; // IHL 7: 8 bytes of options
        p[20..28].copy_from_slice(&[0x94, 0x04, 0, 0, 1, 1, 1, 0]); // router alert, NOP, NOP, NOP, EOL
        let mut ip = Ipv4::new(&mut p[..]).unwrap();
        assert_eq!((ip.header_len(), ip.options().len(), ip.options()[0]), (28, 8, 0x94));
        ip.options_mut()[7] = 1;
        ip.set_dscp(46);
        ip.set_ecn(2);
        ip.set_id(0xBEEF);
        ip.set_flags_frag(Ipv4::<&[u8]>::MF, 0x1FFF);
        ip.set_ttl(7);
        ip.set_protocol(6);
        ip.set_src([1, 2, 3, 4]);
        ip.set_dst([5, 6, 7, 8]);
        ip.set_total_len(28);
        ip.fill_checksum();
        assert_eq!((ip.dscp(), ip.ecn(), ip.id(), ip.flags(), ip.frag_offset()), (46, 2, 0xBEEF, 1, 0x1FFF));
        assert_eq!(
            (ip.ttl(), ip.protocol(), ip.src(), ip.dst(), ip.total_len()),
            (7, 6, [1, 2, 3, 4], [5, 6, 7, 8], 28)
        );
        assert!(ip.is_fragment() && ip.checksum_ok());
        assert_eq!(p[27], 1);
    }

    #[test]
    fn incremental_setters_match_fill_checksum() {
        let mut a = HDR;
        let mut b = HDR;
        let addrs = [[10, 0, 0, 1], [255, 255, 255, 255], [0, 0, 0, 0], [172, 16, 254, 3], [192, 168, 0, 1]];
        for (i, addr) in addrs.into_iter().enumerate() {
            let mut x = Ipv4::new(&mut a[..]).unwrap();
            let mut y = Ipv4::new(&mut b[..]).unwrap();
            x.set_src_incremental(addr);
            x.set_dst_incremental(addrs[(i + 1) % addrs.len()]);
            x.set_ttl_incremental(i as u8 * 60);
            x.set_total_len_incremental(20 + i as u16 * 300);
            x.set_dscp_incremental(i as u8 * 10);
            x.set_ecn_incremental(i as u8);
            y.set_src(addr);
            y.set_dst(addrs[(i + 1) % addrs.len()]);
            y.set_ttl(i as u8 * 60);
            y.set_total_len(20 + i as u16 * 300);
            y.set_dscp(i as u8 * 10);
            y.set_ecn(i as u8);
            y.fill_checksum();
            assert_eq!(a, b, "step {i}");
            assert!(Ipv4::new(&a[..]).unwrap().checksum_ok());
        }
    }

    #[test]
    fn decrement_ttl() {
        let mut h = HDR;
        let mut ip = Ipv4::new(&mut h[..]).unwrap();
        assert_eq!(ip.decrement_ttl(), Some(63));
        assert_eq!(ip.checksum(), 0xb961);
        ip.set_ttl_incremental(0);
        assert_eq!(ip.decrement_ttl(), None);
        assert!(ip.checksum_ok());
    }

    #[test]
    fn rejects_malformed_and_truncated() {
        for len in 0..20 {
            assert!(Ipv4::new(&HDR[..len]).is_none(), "prefix {len}");
        }
        let bad = |f: fn(&mut [u8; 20])| {
            let mut h = HDR;
            f(&mut h);
            Ipv4::new(&h[..]).is_none()
        };
        assert!(bad(|h| h[0] = 0x65)); // version 6
        assert!(bad(|h| h[0] = 0x44)); // IHL 4
        assert!(bad(|h| h[0] = 0x46)); // IHL 6: options past the buffer
        assert!(bad(|h| h[2..4].copy_from_slice(&19u16.to_be_bytes()))); // total length < header
        assert!(Ipv4::new(&HDR[..]).is_some());
    }
}
