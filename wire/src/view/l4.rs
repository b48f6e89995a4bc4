//! UDP (RFC 768), TCP (RFC 9293) and ICMP (RFC 792, RFC 4443) header views. Their pseudo-header
//! checksums are in `l4cksum.rs`.

use super::{cksum, range, range_mut, rd, rd16, rd32, rd8, tail, tail_mut, wr, wr8};

/// A UDP header view ([`Udp::LEN`] bytes). The length field is not checked by [`Udp::new`] (a
/// window may end before the datagram does); [`payload`](Udp::payload) bounds itself.
#[derive(Debug, Clone, Copy)]
pub struct Udp<T> {
    // Visible to `l4cksum`, which adds the checksum methods.
    pub(super) buf: T,
}

impl<T> Udp<T> {
    /// Header length.
    pub const LEN: usize = 8;
}

impl<T: AsRef<[u8]>> Udp<T> {
    /// A view of the header at the start of `buf`; `None` if `buf` is shorter than 8 bytes.
    #[inline]
    pub fn new(buf: T) -> Option<Self> {
        (buf.as_ref().len() >= Self::LEN).then_some(Udp { buf })
    }

    /// The buffer back.
    pub fn into_inner(self) -> T {
        self.buf
    }

    /// Source port.
    pub fn src_port(&self) -> u16 {
        rd16(self.buf.as_ref(), 0)
    }

    /// Destination port.
    pub fn dst_port(&self) -> u16 {
        rd16(self.buf.as_ref(), 2)
    }

    /// The length field: header and data, in bytes.
    pub fn len(&self) -> u16 {
        rd16(self.buf.as_ref(), 4)
    }

    /// Whether the length field says there is no data (8) or is malformed (less than 8).
    pub fn is_empty(&self) -> bool {
        self.len() <= 8
    }

    /// The checksum field (0: none was computed, allowed over IPv4).
    pub fn checksum(&self) -> u16 {
        rd16(self.buf.as_ref(), 6)
    }

    /// The data after the header, to the length field or the end of the buffer, whichever comes
    /// first. A length field under 8 (malformed, or 0 in an IPv6 jumbogram) bounds nothing: the data
    /// then runs to the end of the buffer.
    pub fn payload(&self) -> &[u8] {
        let b = self.buf.as_ref();
        range(b, Self::LEN, self.end(b.len()))
    }

    /// Where the datagram ends in a buffer of `buf_len` bytes (see [`payload`](Udp::payload)).
    fn end(&self, buf_len: usize) -> usize {
        match usize::from(self.len()) {
            len if len >= Self::LEN => len.min(buf_len),
            _ => buf_len,
        }
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Udp<T> {
    /// Sets the source port. The checksum is not updated.
    pub fn set_src_port(&mut self, port: u16) {
        wr(self.buf.as_mut(), 0, port.to_be_bytes());
    }

    /// Sets the destination port. The checksum is not updated.
    pub fn set_dst_port(&mut self, port: u16) {
        wr(self.buf.as_mut(), 2, port.to_be_bytes());
    }

    /// Sets the length field. The checksum is not updated.
    pub fn set_len(&mut self, len: u16) {
        wr(self.buf.as_mut(), 4, len.to_be_bytes());
    }

    /// Sets the checksum field.
    pub fn set_checksum(&mut self, cksum: u16) {
        wr(self.buf.as_mut(), 6, cksum.to_be_bytes());
    }

    /// The data as [`payload`](Udp::payload) bounds it, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = self.end(self.buf.as_ref().len());
        range_mut(self.buf.as_mut(), Self::LEN, end)
    }
}

/// TCP flag bits, as in [`Tcp::flags`] (the byte at offset 13).
pub mod tcp_flags {
    /// No more data from sender.
    pub const FIN: u8 = 0x01;
    /// Synchronize sequence numbers.
    pub const SYN: u8 = 0x02;
    /// Reset the connection.
    pub const RST: u8 = 0x04;
    /// Push function.
    pub const PSH: u8 = 0x08;
    /// The acknowledgment field is significant.
    pub const ACK: u8 = 0x10;
    /// The urgent pointer field is significant.
    pub const URG: u8 = 0x20;
    /// ECN-Echo (RFC 3168).
    pub const ECE: u8 = 0x40;
    /// Congestion window reduced (RFC 3168).
    pub const CWR: u8 = 0x80;
}

/// A TCP header view. [`Tcp::new`] checks the data offset (at least 5 words, and the header with
/// its options in the buffer).
#[derive(Debug, Clone, Copy)]
pub struct Tcp<T> {
    // Visible to `l4cksum`, which adds the checksum methods.
    pub(super) buf: T,
}

impl<T> Tcp<T> {
    /// Length of a header without options.
    pub const MIN_LEN: usize = 20;
}

impl<T: AsRef<[u8]>> Tcp<T> {
    /// A view of the header at the start of `buf`; `None` unless the data offset is at least 5 and
    /// the whole header, options included, is in `buf`.
    #[inline]
    pub fn new(buf: T) -> Option<Self> {
        let b = buf.as_ref();
        let hlen = usize::from(rd8(b, 12) >> 4) * 4;
        (b.len() >= Self::MIN_LEN && hlen >= Self::MIN_LEN && b.len() >= hlen).then_some(Tcp { buf })
    }

    /// The buffer back.
    pub fn into_inner(self) -> T {
        self.buf
    }

    /// Source port.
    pub fn src_port(&self) -> u16 {
        rd16(self.buf.as_ref(), 0)
    }

    /// Destination port.
    pub fn dst_port(&self) -> u16 {
        rd16(self.buf.as_ref(), 2)
    }

    /// Sequence number.
    pub fn seq(&self) -> u32 {
        rd32(self.buf.as_ref(), 4)
    }

    /// Acknowledgment number.
    pub fn ack(&self) -> u32 {
        rd32(self.buf.as_ref(), 8)
    }

    /// The data offset: the header length in 32-bit words (5..=15).
    pub fn data_offset(&self) -> u8 {
        rd8(self.buf.as_ref(), 12) >> 4
    }

    /// The header length in bytes, options included (20..=60).
    pub fn header_len(&self) -> usize {
        usize::from(self.data_offset()) * 4
    }

    /// The flags byte ([`tcp_flags`]); the 4 bits before it (reserved, and the retired NS) are left out.
    pub fn flags(&self) -> u8 {
        rd8(self.buf.as_ref(), 13)
    }

    /// Whether all the bits of `flags` ([`tcp_flags`]) are set.
    pub fn has_flags(&self, flags: u8) -> bool {
        self.flags() & flags == flags
    }

    /// Receive window (unscaled).
    pub fn window(&self) -> u16 {
        rd16(self.buf.as_ref(), 14)
    }

    /// The checksum field.
    pub fn checksum(&self) -> u16 {
        rd16(self.buf.as_ref(), 16)
    }

    /// The urgent pointer.
    pub fn urgent_ptr(&self) -> u16 {
        rd16(self.buf.as_ref(), 18)
    }

    /// The options, between the fixed header and the data.
    pub fn options(&self) -> &[u8] {
        range(self.buf.as_ref(), Self::MIN_LEN, self.header_len())
    }

    /// The data after the header, to the end of the buffer. TCP has no length field: give the view
    /// the IP payload ([`Ipv4::payload`](super::Ipv4::payload)) to leave out Ethernet padding.
    pub fn payload(&self) -> &[u8] {
        tail(self.buf.as_ref(), self.header_len())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Tcp<T> {
    /// Sets the source port. The checksum is not updated.
    pub fn set_src_port(&mut self, port: u16) {
        wr(self.buf.as_mut(), 0, port.to_be_bytes());
    }

    /// Sets the destination port. The checksum is not updated.
    pub fn set_dst_port(&mut self, port: u16) {
        wr(self.buf.as_mut(), 2, port.to_be_bytes());
    }

    /// Sets the sequence number. The checksum is not updated.
    pub fn set_seq(&mut self, seq: u32) {
        wr(self.buf.as_mut(), 4, seq.to_be_bytes());
    }

    /// Sets the acknowledgment number. The checksum is not updated.
    pub fn set_ack(&mut self, ack: u32) {
        wr(self.buf.as_mut(), 8, ack.to_be_bytes());
    }

    /// Sets the flags byte. The checksum is not updated.
    pub fn set_flags(&mut self, flags: u8) {
        wr8(self.buf.as_mut(), 13, flags);
    }

    /// Sets the receive window. The checksum is not updated.
    pub fn set_window(&mut self, window: u16) {
        wr(self.buf.as_mut(), 14, window.to_be_bytes());
    }

    /// Sets the checksum field.
    pub fn set_checksum(&mut self, cksum: u16) {
        wr(self.buf.as_mut(), 16, cksum.to_be_bytes());
    }

    /// Sets the urgent pointer. The checksum is not updated.
    pub fn set_urgent_ptr(&mut self, ptr: u16) {
        wr(self.buf.as_mut(), 18, ptr.to_be_bytes());
    }

    /// The options, writable.
    pub fn options_mut(&mut self) -> &mut [u8] {
        let hlen = self.header_len();
        range_mut(self.buf.as_mut(), Self::MIN_LEN, hlen)
    }

    /// The data, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let hlen = self.header_len();
        tail_mut(self.buf.as_mut(), hlen)
    }
}

/// An ICMP or ICMPv6 header view: type, code, checksum and the 4 type-specific bytes
/// ([`Icmp::LEN`] bytes).
#[derive(Debug, Clone, Copy)]
pub struct Icmp<T> {
    buf: T,
}

impl<T> Icmp<T> {
    /// Header length (with the 4-byte "rest of header").
    pub const LEN: usize = 8;
}

impl<T: AsRef<[u8]>> Icmp<T> {
    /// A view of the header at the start of `buf`; `None` if `buf` is shorter than 8 bytes.
    #[inline]
    pub fn new(buf: T) -> Option<Self> {
        (buf.as_ref().len() >= Self::LEN).then_some(Icmp { buf })
    }

    /// The buffer back.
    pub fn into_inner(self) -> T {
        self.buf
    }

    /// The message type (e.g. 8 echo request, 0 echo reply; ICMPv6 128 and 129).
    pub fn icmp_type(&self) -> u8 {
        rd8(self.buf.as_ref(), 0)
    }

    /// The code.
    pub fn code(&self) -> u8 {
        rd8(self.buf.as_ref(), 1)
    }

    /// The checksum field.
    pub fn checksum(&self) -> u16 {
        rd16(self.buf.as_ref(), 2)
    }

    /// The 4 type-specific bytes (identifier and sequence number of an echo, MTU of "too big", ...).
    pub fn rest(&self) -> [u8; 4] {
        rd(self.buf.as_ref(), 4)
    }

    /// The identifier of an echo request or reply (the first half of [`rest`](Icmp::rest)).
    pub fn echo_id(&self) -> u16 {
        rd16(self.buf.as_ref(), 4)
    }

    /// The sequence number of an echo request or reply.
    pub fn echo_seq(&self) -> u16 {
        rd16(self.buf.as_ref(), 6)
    }

    /// The bytes after the 8-byte header, to the end of the buffer.
    pub fn payload(&self) -> &[u8] {
        tail(self.buf.as_ref(), Self::LEN)
    }

    /// Whether the ICMPv4 checksum is right, the buffer holding the whole message (and no padding).
    /// ICMPv6 checksums cover a pseudo-header: use [`cksum::pseudo_v6`] and [`cksum::sum`].
    pub fn checksum_ok(&self) -> bool {
        cksum::checksum(self.buf.as_ref()) == 0
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Icmp<T> {
    /// Sets the message type. The checksum is not updated.
    pub fn set_icmp_type(&mut self, ty: u8) {
        wr8(self.buf.as_mut(), 0, ty);
    }

    /// Sets the code. The checksum is not updated.
    pub fn set_code(&mut self, code: u8) {
        wr8(self.buf.as_mut(), 1, code);
    }

    /// Sets the checksum field.
    pub fn set_checksum(&mut self, cksum: u16) {
        wr(self.buf.as_mut(), 2, cksum.to_be_bytes());
    }

    /// Sets the 4 type-specific bytes. The checksum is not updated.
    pub fn set_rest(&mut self, rest: [u8; 4]) {
        wr(self.buf.as_mut(), 4, rest);
    }

    /// Sets the echo identifier and updates the checksum incrementally (ICMP query NAT, RFC 5508).
    pub fn set_echo_id_incremental(&mut self, id: u16) {
        super::replace_word(self.buf.as_mut(), 4, id.to_be_bytes(), 2);
    }

    /// The bytes after the header, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        tail_mut(self.buf.as_mut(), Self::LEN)
    }

    /// Computes the ICMPv4 checksum over the whole buffer (which must hold exactly the message).
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let c = cksum::checksum(self.buf.as_ref());
        self.set_checksum(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn udp_fields_and_bounds() {
        let mut d = [0x30, 0x39, 0x00, 0x35, 0x00, 0x0a, 0x12, 0x34, 0xAB, 0xCD, 0, 0, 0];
        let u = Udp::new(&d[..]).unwrap();
        assert_eq!((u.src_port(), u.dst_port(), u.len(), u.checksum()), (12345, 53, 10, 0x1234));
        assert_eq!(u.payload(), &[0xAB, 0xCD]); // padding after the length left out
        assert!(!u.is_empty());
        assert_eq!(Udp::new(&d[..9]).unwrap().payload(), &[0xAB]); // window ends first
        let mut u = Udp::new(&mut d[..]).unwrap();
        u.set_len(3); // malformed: bounds nothing
        assert_eq!(u.payload().len(), 5);
        u.set_src_port(1);
        u.set_dst_port(2);
        u.set_len(9);
        u.set_checksum(0xFFFF);
        u.payload_mut()[0] = 0xEE;
        assert_eq!(d[..9], [0, 1, 0, 2, 0, 9, 0xFF, 0xFF, 0xEE]);
        for len in 0..8 {
            assert!(Udp::new(&d[..len]).is_none());
        }
    }

    /// A SYN to port 80 with an MSS option (data offset 6), from a capture.
    const SYN: [u8; 24] = [
        0xc3, 0x50, 0x00, 0x50, 0x12, 0x34, 0x56, 0x78, 0, 0, 0, 0, 0x60, 0x02, 0xfa, 0xf0, 0xab, 0xcd, 0, 0, 2, 4, 5,
        0xb4,
    ];

    #[test]
    fn tcp_fields_options_and_setters() {
        let t = Tcp::new(&SYN[..]).unwrap();
        assert_eq!((t.src_port(), t.dst_port(), t.seq(), t.ack()), (50000, 80, 0x1234_5678, 0));
        assert_eq!((t.data_offset(), t.header_len(), t.flags(), t.window()), (6, 24, tcp_flags::SYN, 64240));
        assert_eq!(
            (t.checksum(), t.urgent_ptr(), t.options(), t.payload()),
            (0xabcd, 0, &[2, 4, 5, 0xb4][..], &[][..])
        );
        assert!(t.has_flags(tcp_flags::SYN) && !t.has_flags(tcp_flags::SYN | tcp_flags::ACK));
        let mut s = [0u8; 26];
        s[..24].copy_from_slice(&SYN);
        let mut t = Tcp::new(&mut s[..]).unwrap();
        t.set_src_port(1);
        t.set_dst_port(2);
        t.set_seq(3);
        t.set_ack(4);
        t.set_flags(tcp_flags::SYN | tcp_flags::ACK | tcp_flags::ECE | tcp_flags::CWR);
        t.set_window(5);
        t.set_checksum(6);
        t.set_urgent_ptr(7);
        t.options_mut()[0] = 1;
        t.payload_mut().copy_from_slice(&[8, 9]);
        assert_eq!(s[..16], [0, 1, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0x60, 0xd2, 0, 5]);
        assert_eq!(s[16..], [0, 6, 0, 7, 1, 4, 5, 0xb4, 8, 9]);
    }

    #[test]
    fn tcp_rejects_bad_data_offset_and_truncation() {
        for len in 0..24 {
            assert!(Tcp::new(&SYN[..len]).is_none(), "prefix {len}");
        }
        let mut s = SYN;
        s[12] = 0x40; // 16 bytes: shorter than the fixed header
        assert!(Tcp::new(&s[..]).is_none());
        s[12] = 0xF0; // 60 bytes of header in a 24-byte buffer
        assert!(Tcp::new(&s[..]).is_none());
        s[12] = 0x50;
        assert_eq!(Tcp::new(&s[..]).unwrap().payload(), &[2, 4, 5, 0xb4]);
    }

    #[test]
    fn icmp_echo_checksum() {
        // An echo request, id 1, seq 1, 4 bytes of data "abcd": 0x0800 + 1 + 1 + 0x6162 + 0x6364 = 0xccc8, complemented.
        let mut m = [8, 0, 0, 0, 0, 1, 0, 1, b'a', b'b', b'c', b'd'];
        let mut i = Icmp::new(&mut m[..]).unwrap();
        i.fill_checksum();
        assert_eq!(i.checksum(), 0x3337);
        assert!(i.checksum_ok());
        assert_eq!((i.icmp_type(), i.code(), i.rest(), i.echo_id(), i.echo_seq()), (8, 0, [0, 1, 0, 1], 1, 1));
        assert_eq!(i.payload(), b"abcd");
        for id in [0, 1, 0x00ff, 0xfffe, 0xffff, 0x1234] {
            i.set_echo_id_incremental(id);
            assert!(i.checksum_ok(), "id {id}");
        }
        i.set_icmp_type(0);
        i.set_code(3);
        i.set_rest([9, 9, 9, 9]);
        i.payload_mut()[0] = b'z';
        i.set_checksum(1);
        assert_eq!(m[..9], [0, 3, 0, 1, 9, 9, 9, 9, b'z']);
        for len in 0..8 {
            assert!(Icmp::new(&m[..len]).is_none());
        }
    }
}
