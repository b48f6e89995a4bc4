//! Header field offsets (smoltcp-style) and the few byte helpers the rest of `wire` builds on.
//!
//! Offsets are relative to the start of their own header. Callers check a header's length once
//! (usually by taking a fixed-size `&[u8; N]` with `first_chunk`), after which indexing with these
//! constants cannot fail.

/// Ethernet II.
pub(super) mod eth {
    /// Destination MAC, 6 bytes.
    pub(crate) const DST: usize = 0;
    /// Source MAC, 6 bytes.
    pub(crate) const SRC: usize = 6;
    /// Length of a MAC address.
    pub(crate) const ADDR_LEN: usize = 6;
    /// EtherType (or the TPID of the first tag).
    pub(crate) const ETHERTYPE: usize = 12;
}

/// An 802.1Q / 802.1ad tag, relative to the end of the EtherType/TPID it follows.
pub(super) mod tag {
    /// Tag Control Information (PCP, DEI, VID).
    pub(crate) const TCI: usize = 0;
    /// The EtherType (or TPID) that follows the tag.
    pub(crate) const ETHERTYPE: usize = 2;
    /// Bytes a tag adds to the L2 header.
    pub(crate) const LEN: usize = 4;
    /// Maximum number of tags skipped by `parse`.
    pub(crate) const MAX: usize = 2;
}

/// IPv4 (RFC 791).
pub(super) mod ipv4 {
    /// Version (high nibble) and IHL in 32-bit words (low nibble).
    pub(crate) const VER_IHL: usize = 0;
    /// Total length of the datagram, header included.
    pub(crate) const TOTAL_LEN: usize = 2;
    /// Flags (3 bits) and fragment offset (13 bits).
    pub(crate) const FLAGS_FRAG: usize = 6;
    /// The More Fragments flag in the flags/fragment field.
    pub(crate) const MORE_FRAGMENTS: u16 = 0x2000;
    /// Mask of the fragment offset in the flags/fragment field.
    pub(crate) const FRAG_OFFSET_MASK: u16 = 0x1FFF;
    /// Time to live.
    pub(crate) const TTL: usize = 8;
    /// Protocol of the payload.
    pub(crate) const PROTOCOL: usize = 9;
    /// Header checksum.
    pub(crate) const CHECKSUM: usize = 10;
    /// Source address, 4 bytes; the destination follows immediately.
    pub(crate) const SRC: usize = 12;
    /// Destination address, 4 bytes.
    pub(crate) const DST: usize = 16;
    /// Length of an address.
    pub(crate) const ADDR_LEN: usize = 4;
    /// Header length without options.
    pub(crate) const MIN_LEN: usize = 20;
}

/// IPv6 (RFC 8200), fixed header.
pub(super) mod ipv6 {
    /// Version (high nibble of the first byte).
    pub(crate) const VER: usize = 0;
    /// Payload length (everything after the fixed header).
    pub(crate) const PAYLOAD_LEN: usize = 4;
    /// Next header.
    pub(crate) const NEXT_HEADER: usize = 6;
    /// Hop limit.
    pub(crate) const HOP_LIMIT: usize = 7;
    /// Source address, 16 bytes; the destination follows immediately.
    pub(crate) const SRC: usize = 8;
    /// Length of an address.
    pub(crate) const ADDR_LEN: usize = 16;
    /// Fixed header length.
    pub(crate) const LEN: usize = 40;
    /// Extension headers walked at most (DPDK's ptype parser walks 5; a frame with more is odd).
    pub(crate) const MAX_EXT: usize = 8;
}

/// TCP and UDP share the port layout.
pub(super) mod l4 {
    /// Source port; the destination port follows immediately.
    pub(crate) const SRC_PORT: usize = 0;
    /// Destination port.
    pub(crate) const DST_PORT: usize = 2;
    /// Length of a port.
    pub(crate) const PORT_LEN: usize = 2;
}

/// UDP (RFC 768).
pub(super) mod udp {
    /// Length of header and payload.
    pub(crate) const LENGTH: usize = 4;
    /// Checksum.
    pub(crate) const CHECKSUM: usize = 6;
    /// Header length.
    pub(crate) const LEN: usize = 8;
}

/// TCP (RFC 9293).
pub(super) mod tcp {
    /// Data offset in 32-bit words (high nibble).
    pub(crate) const DATA_OFF: usize = 12;
    /// Checksum.
    pub(crate) const CHECKSUM: usize = 16;
    /// Header length without options.
    pub(crate) const MIN_LEN: usize = 20;
}

/// Reads the big-endian `u16` at `at` of a header whose length `N` has been checked.
///
/// With a constant `at` the bound is resolved at compile time; out of range reads yield 0.
#[inline(always)]
pub(super) fn be16<const N: usize>(hdr: &[u8; N], at: usize) -> u16 {
    match hdr.get(at..).and_then(<[u8]>::first_chunk::<2>) {
        Some(b) => u16::from_be_bytes(*b),
        None => 0,
    }
}

/// Writes `value` big-endian at `at` of `buf`; does nothing if the two bytes are not there.
#[inline(always)]
pub(super) fn put_be16(buf: &mut [u8], at: usize, value: u16) {
    if let Some(b) = buf.get_mut(at..).and_then(<[u8]>::first_chunk_mut::<2>) {
        *b = value.to_be_bytes();
    }
}

/// Copies `value` to `at` of `buf`; does nothing if it does not fit.
#[inline(always)]
pub(super) fn put_bytes(buf: &mut [u8], at: usize, value: &[u8]) {
    if let Some(d) = buf.get_mut(at..).and_then(|s| s.get_mut(..value.len())) {
        d.copy_from_slice(value);
    }
}

/// Swaps the `N`-byte field at `at` with the `N`-byte field right after it, if both are in `buf`.
#[inline(always)]
pub(super) fn swap_adjacent<const N: usize>(buf: &mut [u8], at: usize) {
    if let Some((a, rest)) = buf.get_mut(at..).and_then(<[u8]>::split_first_chunk_mut::<N>) {
        if let Some(b) = rest.first_chunk_mut::<N>() {
            core::mem::swap(a, b);
        }
    }
}

/// Whether `ethertype` is the TPID of a VLAN tag we skip (0x8100, 0x88A8, 0x9100).
#[inline(always)]
pub(super) const fn is_tpid(ethertype: u16) -> bool {
    matches!(ethertype, super::ethertype::VLAN | super::ethertype::QINQ | super::ethertype::QINQ_9100)
}
