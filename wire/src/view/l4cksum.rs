//! UDP and TCP checksums over the IPv4 and IPv6 pseudo-headers: full computation from the L3 view,
//! and the incremental fixes that NAT needs when an address or a port changes (RFC 1624).
//!
//! The full computations take the IP header view because it knows what the L4 view cannot: the
//! addresses, and for TCP the segment length (the IP payload's; the buffer may hold Ethernet padding
//! after it, or end before it). They return `None` rather than a wrong checksum when the segment is
//! not all in the buffer.

use super::cksum::udp_nonzero;
use super::{cksum, proto, rd, rd16, wr, Ipv4, Ipv6, Tcp, Udp};

/// Offset of the UDP checksum field.
const UDP_CKSUM: usize = 6;
/// Offset of the TCP checksum field.
const TCP_CKSUM: usize = 16;

/// The checksum of `seg` with pseudo-header sum `pseudo`, as if its checksum field (at `at`) were 0:
/// adding the field's complement subtracts it, which spares copying the segment to clear it.
fn compute(seg: &[u8], at: usize, pseudo: u32) -> u16 {
    cksum::fold(cksum::sum(seg, pseudo) + u32::from(!rd16(seg, at)))
}

/// Whether `seg`, checksum field included, sums with `pseudo` to the all-ones that folds to 0.
fn verify(seg: &[u8], pseudo: u32) -> bool {
    cksum::fold(cksum::sum(seg, pseudo)) == 0
}

/// The pseudo-header sum of a `len`-byte `proto` segment carried by `ip`; `None` if `len` does not
/// fit the 16-bit length.
fn pseudo_v4<U: AsRef<[u8]>>(ip: &Ipv4<U>, proto: u8, len: usize) -> Option<u32> {
    Some(cksum::pseudo_v4(ip.src(), ip.dst(), proto, u16::try_from(len).ok()?))
}

/// [`pseudo_v4`] for IPv6. With a Routing header the pseudo-header wants the final destination, the
/// last address of the routing header, not the fixed header's: such packets are the caller's.
fn pseudo_v6<U: AsRef<[u8]>>(ip: &Ipv6<U>, proto: u8, len: usize) -> Option<u32> {
    Some(cksum::pseudo_v6(&ip.src(), &ip.dst(), proto, u32::try_from(len).ok()?))
}

/// The length of the upper-layer segment of `ip`: the total length minus the header.
fn seg_len_v4<U: AsRef<[u8]>>(ip: &Ipv4<U>) -> Option<usize> {
    usize::from(ip.total_len()).checked_sub(ip.header_len())
}

/// The length of the upper-layer segment of `ip`: the payload length minus the extension headers.
fn seg_len_v6<U: AsRef<[u8]>>(ip: &Ipv6<U>) -> Option<usize> {
    (Ipv6::<&[u8]>::LEN + usize::from(ip.payload_len())).checked_sub(ip.upper()?.offset)
}

impl<T: AsRef<[u8]>> Udp<T> {
    /// The datagram as its length field gives it, if that is at least 8 and all in the buffer.
    fn datagram(&self) -> Option<&[u8]> {
        let len = usize::from(self.len());
        self.buf.as_ref().get(..len).filter(|_| len >= Self::LEN)
    }

    /// The checksum the datagram should carry inside `ip` (the field's current value ignored). Never
    /// 0. `None` if the length field is under 8 or the datagram is not all in the buffer.
    pub fn compute_checksum_v4<U: AsRef<[u8]>>(&self, ip: &Ipv4<U>) -> Option<u16> {
        let d = self.datagram()?;
        Some(udp_nonzero(compute(d, UDP_CKSUM, pseudo_v4(ip, proto::UDP, d.len())?)))
    }

    /// [`compute_checksum_v4`](Udp::compute_checksum_v4) inside an IPv6 packet.
    pub fn compute_checksum_v6<U: AsRef<[u8]>>(&self, ip: &Ipv6<U>) -> Option<u16> {
        let d = self.datagram()?;
        Some(udp_nonzero(compute(d, UDP_CKSUM, pseudo_v6(ip, proto::UDP, d.len())?)))
    }

    /// Whether the checksum is right inside `ip`; a checksum of 0 ("none") is accepted over IPv4.
    /// `None` when it cannot be told (see [`compute_checksum_v4`](Udp::compute_checksum_v4)).
    pub fn checksum_ok_v4<U: AsRef<[u8]>>(&self, ip: &Ipv4<U>) -> Option<bool> {
        let d = self.datagram()?;
        Some(self.checksum() == 0 || verify(d, pseudo_v4(ip, proto::UDP, d.len())?))
    }

    /// Whether the checksum is right inside an IPv6 packet. A checksum of 0 is wrong there (RFC 8200;
    /// the tunnel exceptions of RFC 6935 are the caller's to allow).
    pub fn checksum_ok_v6<U: AsRef<[u8]>>(&self, ip: &Ipv6<U>) -> Option<bool> {
        let d = self.datagram()?;
        Some(self.checksum() != 0 && verify(d, pseudo_v6(ip, proto::UDP, d.len())?))
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Udp<T> {
    /// Computes and writes the checksum for the datagram inside `ip`; `false` (nothing written) when
    /// it cannot be computed (see [`compute_checksum_v4`](Udp::compute_checksum_v4)).
    pub fn fill_checksum_v4<U: AsRef<[u8]>>(&mut self, ip: &Ipv4<U>) -> bool {
        self.compute_checksum_v4(ip).map(|c| self.set_checksum(c)).is_some()
    }

    /// [`fill_checksum_v4`](Udp::fill_checksum_v4) inside an IPv6 packet.
    pub fn fill_checksum_v6<U: AsRef<[u8]>>(&mut self, ip: &Ipv6<U>) -> bool {
        self.compute_checksum_v6(ip).map(|c| self.set_checksum(c)).is_some()
    }

    /// Applies `update` to the checksum unless it is 0 ("none", which must stay so), keeping a
    /// result of 0 off the wire.
    fn patch(&mut self, update: impl FnOnce(u16) -> u16) {
        let c = self.checksum();
        if c != 0 {
            self.set_checksum(udp_nonzero(update(c)));
        }
    }

    /// Updates the checksum after an IPv4 address of the pseudo-header changed from `old` to `new`
    /// (the IP header's own checksum is [`Ipv4::set_src_incremental`]'s business).
    #[inline(always)]
    pub fn update_checksum_addr_v4(&mut self, old: [u8; 4], new: [u8; 4]) {
        // On the field's bytes (`cksum::update32_bytes`); 0 (no checksum) reads the same either way.
        let c: [u8; 2] = rd(self.buf.as_ref(), 6);
        if c != [0, 0] {
            let n = cksum::update32_bytes(c, old, new);
            wr(self.buf.as_mut(), 6, if n == [0, 0] { [0xFF, 0xFF] } else { n });
        }
    }

    /// Updates the checksum after an IPv6 address changed from `old` to `new`.
    pub fn update_checksum_addr_v6(&mut self, old: &[u8; 16], new: &[u8; 16]) {
        self.patch(|c| cksum::update_bytes(c, old, new));
    }

    /// Sets the source port and updates the checksum. (On big-endian values, unlike the IPv4
    /// setters: the byte-order-free version, in line, made dnat's loop dearer even with no port to
    /// rewrite, by the code it added to the loop.)
    pub fn set_src_port_incremental(&mut self, port: u16) {
        let old = self.src_port();
        self.patch(|c| cksum::update16(c, old, port));
        self.set_src_port(port);
    }

    /// Sets the destination port and updates the checksum.
    pub fn set_dst_port_incremental(&mut self, port: u16) {
        let old = self.dst_port();
        self.patch(|c| cksum::update16(c, old, port));
        self.set_dst_port(port);
    }
}

impl<T: AsRef<[u8]>> Tcp<T> {
    /// The segment, `len` bytes from the start of the buffer, if it is all there.
    fn segment(&self, len: usize) -> Option<&[u8]> {
        self.buf.as_ref().get(..len)
    }

    /// The checksum the segment should carry inside `ip` (the field's current value ignored). The
    /// segment length is the IP payload's, so the view may run past it (padding); `None` if the
    /// segment is not all in the buffer.
    pub fn compute_checksum_v4<U: AsRef<[u8]>>(&self, ip: &Ipv4<U>) -> Option<u16> {
        let s = self.segment(seg_len_v4(ip)?)?;
        Some(compute(s, TCP_CKSUM, pseudo_v4(ip, proto::TCP, s.len())?))
    }

    /// [`compute_checksum_v4`](Tcp::compute_checksum_v4) inside an IPv6 packet (the segment length is
    /// the payload length less the extension headers, which [`Ipv6::upper`] walks).
    pub fn compute_checksum_v6<U: AsRef<[u8]>>(&self, ip: &Ipv6<U>) -> Option<u16> {
        let s = self.segment(seg_len_v6(ip)?)?;
        Some(compute(s, TCP_CKSUM, pseudo_v6(ip, proto::TCP, s.len())?))
    }

    /// Whether the checksum is right inside `ip`; `None` when it cannot be told.
    pub fn checksum_ok_v4<U: AsRef<[u8]>>(&self, ip: &Ipv4<U>) -> Option<bool> {
        let s = self.segment(seg_len_v4(ip)?)?;
        Some(verify(s, pseudo_v4(ip, proto::TCP, s.len())?))
    }

    /// Whether the checksum is right inside an IPv6 packet; `None` when it cannot be told.
    pub fn checksum_ok_v6<U: AsRef<[u8]>>(&self, ip: &Ipv6<U>) -> Option<bool> {
        let s = self.segment(seg_len_v6(ip)?)?;
        Some(verify(s, pseudo_v6(ip, proto::TCP, s.len())?))
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Tcp<T> {
    /// Computes and writes the checksum for the segment inside `ip`; `false` (nothing written) when
    /// it cannot be computed.
    pub fn fill_checksum_v4<U: AsRef<[u8]>>(&mut self, ip: &Ipv4<U>) -> bool {
        self.compute_checksum_v4(ip).map(|c| self.set_checksum(c)).is_some()
    }

    /// [`fill_checksum_v4`](Tcp::fill_checksum_v4) inside an IPv6 packet.
    pub fn fill_checksum_v6<U: AsRef<[u8]>>(&mut self, ip: &Ipv6<U>) -> bool {
        self.compute_checksum_v6(ip).map(|c| self.set_checksum(c)).is_some()
    }

    /// Updates the checksum after an IPv4 address of the pseudo-header changed from `old` to `new`.
    #[inline(always)]
    pub fn update_checksum_addr_v4(&mut self, old: [u8; 4], new: [u8; 4]) {
        let c = cksum::update32_bytes(rd(self.buf.as_ref(), 16), old, new);
        wr(self.buf.as_mut(), 16, c);
    }

    /// Updates the checksum after an IPv6 address changed from `old` to `new`.
    pub fn update_checksum_addr_v6(&mut self, old: &[u8; 16], new: &[u8; 16]) {
        let c = cksum::update_bytes(self.checksum(), old, new);
        self.set_checksum(c);
    }

    /// Sets the source port and updates the checksum.
    pub fn set_src_port_incremental(&mut self, port: u16) {
        let c = cksum::update16(self.checksum(), self.src_port(), port);
        self.set_src_port(port);
        self.set_checksum(c);
    }

    /// Sets the destination port and updates the checksum.
    pub fn set_dst_port_incremental(&mut self, port: u16) {
        let c = cksum::update16(self.checksum(), self.dst_port(), port);
        self.set_dst_port(port);
        self.set_checksum(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    const DST6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
    /// UDP 12345 -> 53, "hello" (checksum field 0).
    const UDP: [u8; 13] = [0x30, 0x39, 0, 0x35, 0, 13, 0, 0, b'h', b'e', b'l', b'l', b'o'];
    /// TCP SYN 50000 -> 80 with an MSS option and "xyz" (checksum field 0).
    const TCP: [u8; 27] = [
        0xc3, 0x50, 0, 0x50, 0x12, 0x34, 0x56, 0x78, 0, 0, 0, 0, 0x60, 0x02, 0xfa, 0xf0, 0, 0, 0, 0, 2, 4, 5, 0xb4,
        b'x', b'y', b'z',
    ];
    // The expected checksums below come from an independent reference (a 10-line Python sum of the
    // pseudo-header and segment bytes laid out), not from this code.
    const UDP4_CK: u16 = 0x097b;
    const TCP4_CK: u16 = 0xfc52;
    const UDP6_CK: u16 = 0x301f;
    const TCP6_CK: u16 = 0x22f7;

    /// An IPv4 header 192.168.0.1 -> 192.168.0.199 for `l4` (with `pad` bytes of Ethernet padding).
    fn v4(proto: u8, l4: &[u8], pad: usize) -> ([u8; 128], usize) {
        let mut p = [0u8; 128];
        let total = 20 + l4.len();
        p[..20].copy_from_slice(&[
            0x45,
            0,
            0,
            total as u8,
            0,
            0,
            0x40,
            0,
            64,
            proto,
            0,
            0,
            192,
            168,
            0,
            1,
            192,
            168,
            0,
            199,
        ]);
        p[20..total].copy_from_slice(l4);
        let mut ip = Ipv4::new(&mut p[..]).unwrap();
        ip.fill_checksum();
        (p, total + pad)
    }

    /// An IPv6 header 2001:db8::1 -> 2001:db8::2 for `l4`, behind a Destination Options header if `ext`.
    fn v6(proto: u8, l4: &[u8], ext: bool) -> ([u8; 128], usize) {
        let mut p = [0u8; 128];
        let e = if ext { 8 } else { 0 };
        let next = if ext { proto::IPV6_OPTS } else { proto };
        p[..8].copy_from_slice(&[0x60, 0, 0, 0, 0, (l4.len() + e) as u8, next, 64]);
        p[8..24].copy_from_slice(&SRC6);
        p[24..40].copy_from_slice(&DST6);
        p[40] = proto; // the options header's next header (ignored when `ext` is false)
        p[40 + e..40 + e + l4.len()].copy_from_slice(l4);
        (p, 40 + e + l4.len())
    }

    #[test]
    fn udp_v4_known_checksum() {
        let (mut p, n) = v4(proto::UDP, &UDP, 4);
        let (l3, l4) = p[..n].split_at_mut(20);
        let ip = Ipv4::new(&l3[..]).unwrap();
        let mut udp = Udp::new(&mut l4[..]).unwrap(); // with the padding: bounded by the length field
        assert_eq!(udp.checksum_ok_v4(&ip), Some(true)); // 0: none
        assert_eq!(udp.compute_checksum_v4(&ip), Some(UDP4_CK));
        assert!(udp.fill_checksum_v4(&ip));
        assert_eq!((udp.checksum(), udp.checksum_ok_v4(&ip)), (UDP4_CK, Some(true)));
        udp.set_checksum(UDP4_CK ^ 1);
        assert_eq!(udp.checksum_ok_v4(&ip), Some(false));
        // A window cut inside the datagram cannot be checked.
        let cut = Udp::new(&l4[..12]).unwrap();
        assert_eq!((cut.compute_checksum_v4(&ip), cut.checksum_ok_v4(&ip)), (None, None));
    }

    #[test]
    fn tcp_v4_known_checksum() {
        let (mut p, n) = v4(proto::TCP, &TCP, 6);
        let (l3, l4) = p[..n].split_at_mut(20);
        let ip = Ipv4::new(&l3[..]).unwrap();
        let mut tcp = Tcp::new(&mut l4[..]).unwrap(); // with the padding: bounded by the IP length
        assert_eq!(tcp.compute_checksum_v4(&ip), Some(TCP4_CK));
        assert_eq!(tcp.checksum_ok_v4(&ip), Some(false));
        assert!(tcp.fill_checksum_v4(&ip));
        assert_eq!((tcp.checksum(), tcp.checksum_ok_v4(&ip)), (TCP4_CK, Some(true)));
        assert_eq!(Tcp::new(&l4[..26]).unwrap().compute_checksum_v4(&ip), None);
    }

    #[test]
    fn v6_known_checksums_with_and_without_extension_header() {
        for ext in [false, true] {
            let (mut p, n) = v6(proto::UDP, &UDP, ext);
            let (l3, l4) = p[..n].split_at_mut(if ext { 48 } else { 40 });
            let ip = Ipv6::new(&l3[..]).unwrap();
            let mut udp = Udp::new(&mut l4[..]).unwrap();
            assert_eq!(udp.checksum_ok_v6(&ip), Some(false)); // 0 is not allowed over IPv6
            assert!(udp.fill_checksum_v6(&ip));
            assert_eq!((udp.checksum(), udp.checksum_ok_v6(&ip)), (UDP6_CK, Some(true)));

            let (mut p, n) = v6(proto::TCP, &TCP, ext);
            let (l3, l4) = p[..n].split_at_mut(if ext { 48 } else { 40 });
            let ip = Ipv6::new(&l3[..]).unwrap();
            let mut tcp = Tcp::new(&mut l4[..]).unwrap();
            assert!(tcp.fill_checksum_v6(&ip));
            assert_eq!((tcp.checksum(), tcp.checksum_ok_v6(&ip)), (TCP6_CK, Some(true)));
        }
    }

    #[test]
    fn udp_computed_zero_is_sent_as_ffff() {
        // Make the data cancel the rest: put the checksum of the datagram with zero data in the data.
        let mut d = [0x30, 0x39, 0, 0x35, 0, 10, 0, 0, 0, 0];
        let (p, _) = v4(proto::UDP, &d, 0);
        let ip = Ipv4::new(&p[..]).unwrap();
        let c = Udp::new(&d[..]).unwrap().compute_checksum_v4(&ip).unwrap();
        d[8..10].copy_from_slice(&c.to_be_bytes());
        let mut udp = Udp::new(&mut d[..]).unwrap();
        assert_eq!(udp.compute_checksum_v4(&ip), Some(0xFFFF));
        assert!(udp.fill_checksum_v4(&ip));
        assert_eq!(udp.checksum_ok_v4(&ip), Some(true));
    }

    #[test]
    fn udp_incremental_matches_full_and_keeps_zero() {
        let addrs = [[10, 0, 0, 1], [255, 255, 255, 255], [0, 0, 0, 0], [100, 64, 3, 7], [192, 168, 0, 1]];
        let (mut p, n) = v4(proto::UDP, &UDP, 0);
        let (l3, l4) = p[..n].split_at_mut(20);
        Udp::new(&mut l4[..]).unwrap().fill_checksum_v4(&Ipv4::new(&l3[..]).unwrap());
        for (i, addr) in addrs.into_iter().enumerate() {
            let mut ip = Ipv4::new(&mut l3[..]).unwrap();
            let old = ip.src();
            ip.set_src_incremental(addr);
            let mut udp = Udp::new(&mut l4[..]).unwrap();
            udp.update_checksum_addr_v4(old, addr);
            udp.set_src_port_incremental(i as u16 * 16000);
            udp.set_dst_port_incremental(!(i as u16));
            let ip = Ipv4::new(&l3[..]).unwrap();
            assert!(ip.checksum_ok());
            assert_eq!(Some(udp.checksum()), udp.compute_checksum_v4(&ip), "step {i}");
        }
        // "No checksum" stays so through every update.
        let mut udp = Udp::new(&mut l4[..]).unwrap();
        udp.set_checksum(0);
        udp.update_checksum_addr_v4([1, 2, 3, 4], [5, 6, 7, 8]);
        udp.update_checksum_addr_v6(&SRC6, &DST6);
        udp.set_src_port_incremental(1);
        udp.set_dst_port_incremental(2);
        assert_eq!((udp.checksum(), udp.src_port(), udp.dst_port()), (0, 1, 2));
    }

    #[test]
    fn tcp_incremental_matches_full_v4_and_v6() {
        let (mut p, n) = v4(proto::TCP, &TCP, 0);
        let (l3, l4) = p[..n].split_at_mut(20);
        Tcp::new(&mut l4[..]).unwrap().fill_checksum_v4(&Ipv4::new(&l3[..]).unwrap());
        for dst in [[0u8; 4], [8, 8, 8, 8], [255; 4], [192, 168, 0, 199]] {
            let mut ip = Ipv4::new(&mut l3[..]).unwrap();
            let old = ip.dst();
            ip.set_dst_incremental(dst);
            let mut tcp = Tcp::new(&mut l4[..]).unwrap();
            tcp.update_checksum_addr_v4(old, dst);
            tcp.set_dst_port_incremental(u16::from(dst[0]) * 257);
            tcp.set_src_port_incremental(u16::from(dst[3]));
            assert_eq!(tcp.checksum_ok_v4(&Ipv4::new(&l3[..]).unwrap()), Some(true), "dst {dst:?}");
        }

        let (mut p, n) = v6(proto::TCP, &TCP, true);
        let (l3, l4) = p[..n].split_at_mut(48);
        Tcp::new(&mut l4[..]).unwrap().fill_checksum_v6(&Ipv6::new(&l3[..]).unwrap());
        let mut addr = SRC6;
        for i in 0..=16u8 {
            let mut ip = Ipv6::new(&mut l3[..]).unwrap();
            let old = ip.src();
            addr[usize::from(i % 16)] = i.wrapping_mul(37);
            ip.set_src(addr);
            let mut tcp = Tcp::new(&mut l4[..]).unwrap();
            tcp.update_checksum_addr_v6(&old, &addr);
            assert_eq!(tcp.checksum_ok_v6(&Ipv6::new(&l3[..]).unwrap()), Some(true), "step {i}");
        }
    }
}
