//! Ethernet II and VLAN tags (802.1Q, 802.1ad, 0x9100).

use super::{ethertype, rd, rd16, tail, tail_mut, wr};

/// An Ethernet II header view: destination MAC, source MAC, EtherType ([`Eth::LEN`] bytes).
#[derive(Debug, Clone, Copy)]
pub struct Eth<T> {
    buf: T,
}

impl<T> Eth<T> {
    /// Header length.
    pub const LEN: usize = 14;
}

impl<T: AsRef<[u8]>> Eth<T> {
    /// A view of the header at the start of `buf`; `None` if `buf` is shorter than 14 bytes.
    pub fn new(buf: T) -> Option<Self> {
        (buf.as_ref().len() >= Self::LEN).then_some(Eth { buf })
    }

    /// The buffer back.
    pub fn into_inner(self) -> T {
        self.buf
    }

    /// Destination MAC.
    pub fn dst(&self) -> [u8; 6] {
        rd(self.buf.as_ref(), 0)
    }

    /// Source MAC.
    pub fn src(&self) -> [u8; 6] {
        rd(self.buf.as_ref(), 6)
    }

    /// The EtherType field at offset 12, as is: a VLAN TPID when the frame is tagged (see [`l2`]).
    pub fn ethertype(&self) -> u16 {
        rd16(self.buf.as_ref(), 12)
    }

    /// The bytes after the 14-byte header, to the end of the buffer (VLAN tags included).
    pub fn payload(&self) -> &[u8] {
        tail(self.buf.as_ref(), Self::LEN)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Eth<T> {
    /// Sets the destination MAC.
    pub fn set_dst(&mut self, mac: [u8; 6]) {
        wr(self.buf.as_mut(), 0, mac);
    }

    /// Sets the source MAC.
    pub fn set_src(&mut self, mac: [u8; 6]) {
        wr(self.buf.as_mut(), 6, mac);
    }

    /// Sets the EtherType field at offset 12.
    pub fn set_ethertype(&mut self, ethertype: u16) {
        wr(self.buf.as_mut(), 12, ethertype.to_be_bytes());
    }

    /// The bytes after the 14-byte header, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        tail_mut(self.buf.as_mut(), Self::LEN)
    }
}

/// A view of a VLAN tag's last 4 bytes: the TCI and the EtherType that follows it (the TPID before
/// them is the previous EtherType field). For a tag right after the MACs, the view starts at offset 14.
#[derive(Debug, Clone, Copy)]
pub struct Vlan<T> {
    buf: T,
}

impl<T> Vlan<T> {
    /// Length of the TCI and inner EtherType.
    pub const LEN: usize = 4;
}

impl<T: AsRef<[u8]>> Vlan<T> {
    /// A view of the TCI at the start of `buf`; `None` if `buf` is shorter than 4 bytes.
    pub fn new(buf: T) -> Option<Self> {
        (buf.as_ref().len() >= Self::LEN).then_some(Vlan { buf })
    }

    /// The buffer back.
    pub fn into_inner(self) -> T {
        self.buf
    }

    /// The tag control information: PCP (3 bits), DEI (1 bit), VID (12 bits).
    pub fn tci(&self) -> u16 {
        rd16(self.buf.as_ref(), 0)
    }

    /// Priority code point (0..=7).
    pub fn pcp(&self) -> u8 {
        VlanTag { tpid: 0, tci: self.tci() }.pcp()
    }

    /// Drop eligible indicator.
    pub fn dei(&self) -> bool {
        VlanTag { tpid: 0, tci: self.tci() }.dei()
    }

    /// VLAN id (0..=4095).
    pub fn vid(&self) -> u16 {
        VlanTag { tpid: 0, tci: self.tci() }.vid()
    }

    /// The EtherType after the tag: the payload's, or the next tag's TPID.
    pub fn ethertype(&self) -> u16 {
        rd16(self.buf.as_ref(), 2)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Vlan<T> {
    /// Sets the whole TCI.
    pub fn set_tci(&mut self, tci: u16) {
        wr(self.buf.as_mut(), 0, tci.to_be_bytes());
    }

    /// Sets the VLAN id (its low 12 bits), keeping PCP and DEI.
    pub fn set_vid(&mut self, vid: u16) {
        self.set_tci((self.tci() & 0xF000) | (vid & 0x0FFF));
    }

    /// Sets the priority (its low 3 bits), keeping DEI and VID.
    pub fn set_pcp(&mut self, pcp: u8) {
        self.set_tci((self.tci() & 0x1FFF) | (u16::from(pcp & 7) << 13));
    }

    /// Sets the EtherType after the tag.
    pub fn set_ethertype(&mut self, ethertype: u16) {
        wr(self.buf.as_mut(), 2, ethertype.to_be_bytes());
    }
}

/// One VLAN tag as found by [`l2`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VlanTag {
    /// The tag protocol identifier: 0x8100, 0x88A8 or 0x9100.
    pub tpid: u16,
    /// The tag control information.
    pub tci: u16,
}

impl VlanTag {
    /// Priority code point (0..=7).
    pub const fn pcp(&self) -> u8 {
        (self.tci >> 13) as u8
    }

    /// Drop eligible indicator.
    pub const fn dei(&self) -> bool {
        self.tci & 0x1000 != 0
    }

    /// VLAN id (0..=4095).
    pub const fn vid(&self) -> u16 {
        self.tci & 0x0FFF
    }
}

/// The most VLAN tags [`l2`] skips (a QinQ stack).
pub const MAX_VLAN_TAGS: usize = 2;

/// The layer-2 summary of a frame: [`l2`]'s result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2 {
    /// The EtherType of the payload, after the tags.
    pub ethertype: u16,
    /// Where the payload (the L3 header) starts: 14 plus 4 per tag. May equal the window's length.
    pub l3_offset: usize,
    /// The tags, outermost first; `tags[1]` is `None` for a single tag, both for an untagged frame.
    pub tags: [Option<VlanTag>; MAX_VLAN_TAGS],
}

impl L2 {
    /// How many tags the frame has (0..=2).
    pub fn tag_count(&self) -> usize {
        self.tags.iter().flatten().count()
    }
}

/// Whether `ethertype` announces a VLAN tag.
const fn is_tpid(ethertype: u16) -> bool {
    matches!(ethertype, ethertype::VLAN | ethertype::QINQ | ethertype::QINQ_9100)
}

/// Reads the Ethernet header and up to [`MAX_VLAN_TAGS`] tags of `frame`. `None` if the header or a
/// tag is cut by the end of the window, or if there are more than two tags (the inner EtherType
/// would be unknown).
#[inline(always)]
pub fn l2(frame: &[u8]) -> Option<L2> {
    let eth = Eth::new(frame)?;
    let l2 = L2 { ethertype: eth.ethertype(), l3_offset: Eth::<&[u8]>::LEN, tags: [None; MAX_VLAN_TAGS] };
    if !is_tpid(l2.ethertype) {
        // Untagged, the common case: the EtherType is tested once, not again after the tag loop.
        return Some(l2);
    }
    tags(frame, l2)
}

/// The tags of a tagged frame, from `l2` as the Ethernet header left it.
#[inline(always)]
fn tags(frame: &[u8], mut l2: L2) -> Option<L2> {
    for slot in &mut l2.tags {
        if !is_tpid(l2.ethertype) {
            break;
        }
        let tag = Vlan::new(frame.get(l2.l3_offset..)?)?;
        *slot = Some(VlanTag { tpid: l2.ethertype, tci: tag.tci() });
        l2.ethertype = tag.ethertype();
        l2.l3_offset += Vlan::<&[u8]>::LEN;
    }
    (!is_tpid(l2.ethertype)).then_some(l2)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MACS: [u8; 12] = [2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2];

    /// MACs, then `types` as successive 16-bit words (TPID, TCI, ..., EtherType), then `tail`.
    fn frame(words: &[u16], tail: &[u8]) -> ([u8; 64], usize) {
        let mut f = [0u8; 64];
        f[..12].copy_from_slice(&MACS);
        let mut n = 12;
        for w in words {
            f[n..n + 2].copy_from_slice(&w.to_be_bytes());
            n += 2;
        }
        f[n..n + tail.len()].copy_from_slice(tail);
        (f, n + tail.len())
    }

    #[test]
    fn ethernet_fields() {
        let (mut f, _) = frame(&[0x0800], &[0x45]);
        let e = Eth::new(&f[..]).unwrap();
        assert_eq!(e.dst(), [2, 0, 0, 0, 0, 1]);
        assert_eq!(e.src(), [2, 0, 0, 0, 0, 2]);
        assert_eq!(e.ethertype(), 0x0800);
        assert_eq!(e.payload()[0], 0x45);
        let mut e = Eth::new(&mut f[..]).unwrap();
        e.set_dst([0xaa; 6]);
        e.set_src([0xbb, 1, 2, 3, 4, 5]);
        e.set_ethertype(0x86DD);
        e.payload_mut()[0] = 0x60;
        assert_eq!(f[..15], [0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xbb, 1, 2, 3, 4, 5, 0x86, 0xdd, 0x60]);
        assert!(Eth::new(&f[..13]).is_none());
        assert_eq!(Eth::new(&f[..14]).unwrap().payload(), &[] as &[u8]);
    }

    #[test]
    fn vlan_tci_fields() {
        let mut b = [0xA0, 0x0A, 0x08, 0x00];
        let v = Vlan::new(&b[..]).unwrap();
        assert_eq!((v.tci(), v.pcp(), v.dei(), v.vid(), v.ethertype()), (0xA00A, 5, false, 10, 0x0800));
        let mut v = Vlan::new(&mut b[..]).unwrap();
        v.set_vid(0xFFFF); // only the low 12 bits
        v.set_pcp(1);
        assert_eq!(v.tci(), 0x2FFF);
        v.set_tci(0x3001);
        v.set_ethertype(0x86DD);
        assert_eq!(b, [0x30, 0x01, 0x86, 0xDD]);
        let t = VlanTag { tpid: 0x8100, tci: 0x3001 };
        assert_eq!((t.pcp(), t.dei(), t.vid()), (1, true, 1));
        assert!(Vlan::new(&b[..3]).is_none());
    }

    #[test]
    fn l2_untagged_and_tagged() {
        let (f, n) = frame(&[0x0800], &[]);
        assert_eq!(l2(&f[..n]), Some(L2 { ethertype: 0x0800, l3_offset: 14, tags: [None, None] }));

        let (f, n) = frame(&[0x8100, 0x2064, 0x86DD], &[]);
        let r = l2(&f[..n]).unwrap();
        assert_eq!((r.ethertype, r.l3_offset, r.tag_count()), (0x86DD, 18, 1));
        assert_eq!(r.tags[0], Some(VlanTag { tpid: 0x8100, tci: 0x2064 }));
        assert_eq!(r.tags[0].unwrap().vid(), 100);

        for outer in [0x88A8, 0x9100, 0x8100] {
            let (f, n) = frame(&[outer, 0x000A, 0x8100, 0x0014, 0x0800], &[]);
            let r = l2(&f[..n]).unwrap();
            assert_eq!((r.ethertype, r.l3_offset, r.tag_count()), (0x0800, 22, 2));
            assert_eq!(r.tags, [Some(VlanTag { tpid: outer, tci: 10 }), Some(VlanTag { tpid: 0x8100, tci: 20 })]);
        }
        // A 802.3 length field is passed through as the EtherType.
        assert_eq!(l2(&frame(&[0x002E], &[]).0).unwrap().ethertype, 0x002E);
    }

    #[test]
    fn l2_rejects_three_tags_and_truncation() {
        let (f, n) = frame(&[0x88A8, 1, 0x8100, 2, 0x8100, 3, 0x0800], &[]);
        assert_eq!(l2(&f[..n]), None);
        let (f, n) = frame(&[0x88A8, 1, 0x8100, 2, 0x0800], &[]);
        for len in 0..n {
            assert_eq!(l2(&f[..len]), None, "prefix {len}");
        }
        assert!(l2(&f[..n]).is_some());
    }
}
