//! UDP tunnel headers: VXLAN (RFC 7348) and Geneve (RFC 8926).
//!
//! Both carry a 24-bit virtual network identifier and sit right after a UDP header; the payload
//! of VXLAN, and of Geneve with protocol type [`ethertype::TEB`](super::ethertype::TEB), is an
//! Ethernet frame that [`Headers::parse`](super::Headers::parse) reads like an outer one.
//!
//! ```
//! use wasmdp_wire::view::{tunnel, Vxlan};
//! let mut hdr = [0u8; 8];
//! let vx = Vxlan::write(&mut hdr[..], 5000).unwrap();
//! assert_eq!((vx.has_vni(), vx.vni()), (true, 5000));
//! assert_eq!(hdr, [0x08, 0, 0, 0, 0x00, 0x13, 0x88, 0]);
//! assert_eq!(tunnel::VXLAN_PORT, 4789);
//! ```

use super::{range, range_mut, rd16, rd32, rd8, tail, tail_mut, wr, wr8};

/// The IANA UDP destination port of VXLAN.
pub const VXLAN_PORT: u16 = 4789;
/// The IANA UDP destination port of Geneve.
pub const GENEVE_PORT: u16 = 6081;

/// Reads the 24-bit VNI in bytes 4..7 of both headers (the byte after it is reserved).
fn vni(buf: &[u8]) -> u32 {
    rd32(buf, 4) >> 8
}

/// Writes the 24-bit VNI (the low 24 bits of `vni`) in bytes 4..7, keeping the reserved byte 7.
fn set_vni(buf: &mut [u8], vni: u32) {
    let word = (vni << 8) | u32::from(rd8(buf, 7));
    wr(buf, 4, word.to_be_bytes());
}

/// A VXLAN header view ([`Vxlan::LEN`] bytes): flags, reserved, VNI, reserved.
#[derive(Debug, Clone, Copy)]
pub struct Vxlan<T> {
    buf: T,
}

impl<T> Vxlan<T> {
    /// Header length.
    pub const LEN: usize = 8;
    /// The I flag, in [`flags`](Vxlan::flags): the VNI is valid. RFC 7348 requires it set.
    pub const I_FLAG: u8 = 0x08;
}

impl<T: AsRef<[u8]>> Vxlan<T> {
    /// A view of the header at the start of `buf`; `None` if `buf` is shorter than 8 bytes. The I
    /// flag is not checked: see [`has_vni`](Vxlan::has_vni).
    pub fn new(buf: T) -> Option<Self> {
        (buf.as_ref().len() >= Self::LEN).then_some(Vxlan { buf })
    }

    /// The buffer back.
    pub fn into_inner(self) -> T {
        self.buf
    }

    /// The flags byte.
    pub fn flags(&self) -> u8 {
        rd8(self.buf.as_ref(), 0)
    }

    /// Whether the I flag is set (the VNI is valid).
    pub fn has_vni(&self) -> bool {
        self.flags() & Self::I_FLAG != 0
    }

    /// The VXLAN network identifier (24 bits).
    pub fn vni(&self) -> u32 {
        vni(self.buf.as_ref())
    }

    /// The inner Ethernet frame, to the end of the buffer.
    pub fn payload(&self) -> &[u8] {
        tail(self.buf.as_ref(), Self::LEN)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Vxlan<T> {
    /// Sets the flags byte.
    pub fn set_flags(&mut self, flags: u8) {
        wr8(self.buf.as_mut(), 0, flags);
    }

    /// Sets the VNI (the low 24 bits of `vni`). The I flag is left as it is.
    pub fn set_vni(&mut self, vni: u32) {
        set_vni(self.buf.as_mut(), vni);
    }

    /// The inner frame, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        tail_mut(self.buf.as_mut(), Self::LEN)
    }
}

impl<'a> Vxlan<&'a mut [u8]> {
    /// Writes a fresh header at the start of `buf` (I flag set, the VNI's low 24 bits, reserved
    /// fields zero) and returns its view; `None` (nothing written) if `buf` is shorter than 8 bytes.
    pub fn write(buf: &'a mut [u8], vni: u32) -> Option<Self> {
        let mut vx = Vxlan::new(buf)?;
        wr(vx.buf, 0, [Self::I_FLAG, 0, 0, 0, 0, 0, 0, 0]);
        vx.set_vni(vni);
        Some(vx)
    }
}

/// A Geneve header view: 8 fixed bytes and [`opt_len`](Geneve::opt_len) words of options.
/// [`Geneve::new`] checks the version (0) and that the options are all in the buffer.
#[derive(Debug, Clone, Copy)]
pub struct Geneve<T> {
    buf: T,
}

impl<T> Geneve<T> {
    /// Length of the fixed header, without options.
    pub const MIN_LEN: usize = 8;
}

impl<T: AsRef<[u8]>> Geneve<T> {
    /// A view of the header at the start of `buf`; `None` unless its version is 0 and the fixed
    /// header and its options are all in `buf`.
    pub fn new(buf: T) -> Option<Self> {
        let b = buf.as_ref();
        let hlen = Self::MIN_LEN + usize::from(rd8(b, 0) & 0x3F) * 4;
        (b.len() >= Self::MIN_LEN && rd8(b, 0) >> 6 == 0 && b.len() >= hlen).then_some(Geneve { buf })
    }

    /// The buffer back.
    pub fn into_inner(self) -> T {
        self.buf
    }

    /// The version (0 in a checked view).
    pub fn version(&self) -> u8 {
        rd8(self.buf.as_ref(), 0) >> 6
    }

    /// The length of the options in 4-byte words (0..=63).
    pub fn opt_len(&self) -> u8 {
        rd8(self.buf.as_ref(), 0) & 0x3F
    }

    /// The header length in bytes, options included (8..=260).
    pub fn header_len(&self) -> usize {
        Self::MIN_LEN + usize::from(self.opt_len()) * 4
    }

    /// The O bit: a control (OAM) packet, not to be forwarded as data.
    pub fn oam(&self) -> bool {
        rd8(self.buf.as_ref(), 1) & 0x80 != 0
    }

    /// The C bit: some option is critical (a receiver that does not know it must drop the packet).
    pub fn critical(&self) -> bool {
        rd8(self.buf.as_ref(), 1) & 0x40 != 0
    }

    /// The payload's protocol, an EtherType ([`ethertype::TEB`](super::ethertype::TEB) for Ethernet).
    pub fn protocol_type(&self) -> u16 {
        rd16(self.buf.as_ref(), 2)
    }

    /// The virtual network identifier (24 bits).
    pub fn vni(&self) -> u32 {
        vni(self.buf.as_ref())
    }

    /// The options (TLVs), between the fixed header and the payload.
    pub fn options(&self) -> &[u8] {
        range(self.buf.as_ref(), Self::MIN_LEN, self.header_len())
    }

    /// The payload after the options, to the end of the buffer.
    pub fn payload(&self) -> &[u8] {
        tail(self.buf.as_ref(), self.header_len())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Geneve<T> {
    /// Sets or clears the O (OAM) bit.
    pub fn set_oam(&mut self, on: bool) {
        self.set_bit(0x80, on);
    }

    /// Sets or clears the C (critical options) bit.
    pub fn set_critical(&mut self, on: bool) {
        self.set_bit(0x40, on);
    }

    /// Sets or clears `bit` in the flags byte.
    fn set_bit(&mut self, bit: u8, on: bool) {
        let b = rd8(self.buf.as_ref(), 1);
        wr8(self.buf.as_mut(), 1, if on { b | bit } else { b & !bit });
    }

    /// Sets the protocol type.
    pub fn set_protocol_type(&mut self, ethertype: u16) {
        wr(self.buf.as_mut(), 2, ethertype.to_be_bytes());
    }

    /// Sets the VNI (the low 24 bits of `vni`).
    pub fn set_vni(&mut self, vni: u32) {
        set_vni(self.buf.as_mut(), vni);
    }

    /// The options, writable.
    pub fn options_mut(&mut self) -> &mut [u8] {
        let hlen = self.header_len();
        range_mut(self.buf.as_mut(), Self::MIN_LEN, hlen)
    }

    /// The payload, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let hlen = self.header_len();
        tail_mut(self.buf.as_mut(), hlen)
    }
}

impl<'a> Geneve<&'a mut [u8]> {
    /// Writes a fresh header without options at the start of `buf` (version 0, no flags) and returns
    /// its view; `None` (nothing written) if `buf` is shorter than 8 bytes.
    pub fn write(buf: &'a mut [u8], protocol_type: u16, vni: u32) -> Option<Self> {
        let b = buf.get_mut(..Self::MIN_LEN)?;
        b.fill(0);
        let mut g = Geneve::new(buf)?;
        g.set_protocol_type(protocol_type);
        g.set_vni(vni);
        Some(g)
    }
}

#[cfg(test)]
mod tests {
    use super::super::ethertype;
    use super::*;

    #[test]
    fn vxlan_fields_write_and_bounds() {
        let mut f = [0x08, 0, 0, 0, 0x12, 0x34, 0x56, 0xAA, 0xEE];
        let v = Vxlan::new(&f[..]).unwrap();
        assert_eq!((v.flags(), v.has_vni(), v.vni(), v.payload()), (8, true, 0x123456, &[0xEE][..]));
        let mut v = Vxlan::new(&mut f[..]).unwrap();
        v.set_vni(0xFF00_0001); // only the low 24 bits; the reserved byte is kept
        v.set_flags(0);
        v.payload_mut()[0] = 1;
        assert_eq!(f, [0, 0, 0, 0, 0, 0, 1, 0xAA, 1]);
        assert!(!Vxlan::new(&f[..]).unwrap().has_vni());
        let mut h = [0xFFu8; 10];
        let v = Vxlan::write(&mut h[..], 0xABCDEF).unwrap();
        assert_eq!(v.vni(), 0xABCDEF);
        assert_eq!(h, [0x08, 0, 0, 0, 0xAB, 0xCD, 0xEF, 0, 0xFF, 0xFF]);
        for len in 0..8 {
            assert!(Vxlan::new(&h[..len]).is_none());
            let mut short = [0xFFu8; 8];
            assert!(Vxlan::write(&mut short[..len], 1).is_none());
            assert_eq!(short, [0xFF; 8]);
        }
    }

    /// Geneve with one 8-byte option (class 0x0102, type 0x80 critical, 4 bytes of data), TEB, VNI 7.
    const GENEVE: [u8; 18] =
        [0x02, 0x40, 0x65, 0x58, 0, 0, 7, 0, 0x01, 0x02, 0x80, 0x01, 0xde, 0xad, 0xbe, 0xef, 0xAB, 0xCD];

    #[test]
    fn geneve_fields_and_options() {
        let g = Geneve::new(&GENEVE[..]).unwrap();
        assert_eq!((g.version(), g.opt_len(), g.header_len(), g.oam(), g.critical()), (0, 2, 16, false, true));
        assert_eq!((g.protocol_type(), g.vni()), (ethertype::TEB, 7));
        assert_eq!(g.options(), &GENEVE[8..16]);
        assert_eq!(g.payload(), &[0xAB, 0xCD]);
        let mut b = GENEVE;
        let mut g = Geneve::new(&mut b[..]).unwrap();
        g.set_oam(true);
        g.set_critical(false);
        g.set_protocol_type(0x0800);
        g.set_vni(0x00AB_CDEF);
        g.options_mut()[7] = 0;
        g.payload_mut()[1] = 0;
        assert_eq!(b[..8], [0x02, 0x80, 0x08, 0x00, 0xAB, 0xCD, 0xEF, 0]);
        assert_eq!((b[15], b[17]), (0, 0));
    }

    #[test]
    fn geneve_rejects_truncation_and_version() {
        for len in 0..16 {
            assert!(Geneve::new(&GENEVE[..len]).is_none(), "prefix {len}"); // options cut
        }
        let mut b = GENEVE;
        b[0] = 0x42; // version 1
        assert!(Geneve::new(&b[..]).is_none());
        b[0] = 0x3F; // 63 words of options
        assert!(Geneve::new(&b[..]).is_none());
        let mut h = [0xFFu8; 9];
        let g = Geneve::write(&mut h[..], ethertype::TEB, 99).unwrap();
        assert_eq!((g.header_len(), g.vni(), g.payload()), (8, 99, &[0xFF][..]));
        assert_eq!(h[..8], [0, 0, 0x65, 0x58, 0, 0, 99, 0]);
        assert!(Geneve::write(&mut h[..7], 0, 0).is_none());
    }
}
