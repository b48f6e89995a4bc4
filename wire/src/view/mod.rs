//! Zero-copy packet header views for a packet *window* (the first bytes of a frame, read with
//! the SDK's `Packet::read`; it may be shorter than the packet), and the checksums that go
//! with them.
//!
//! Each view (`Eth`, `Ipv4`, `Udp`, ...) wraps a byte buffer, `&[u8]` or `&mut [u8]`, starting at its
//! header. Its constructor `new` checks the buffer once (length, and the version or length fields the
//! other accessors rely on) and returns `None` when the header is not all there or is malformed; the
//! getters then read fixed offsets and the setters (on `&mut [u8]` views) write them. Nothing in this
//! module panics, whatever the bytes: offsets computed from packet fields go through `get`, never
//! through indexing.
//!
//! [`Headers::parse`] finds the L2/L3/L4 offsets of a whole window in one call:
//!
//! ```
//! use wasmdp_wire::view::{Headers, Ipv4, Udp, L3Kind, proto};
//! # let mut frame = [0u8; 42];
//! # frame[12..14].copy_from_slice(&[0x08, 0x00]);
//! # frame[14..34].copy_from_slice(&[0x45, 0, 0, 28, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
//! # frame[34..38].copy_from_slice(&[0x30, 0x39, 0x00, 0x35]);
//! let h = Headers::parse(&frame).unwrap();
//! let l3 = h.l3.unwrap();
//! assert_eq!((l3.kind, l3.proto), (L3Kind::V4, proto::UDP));
//! let ip = Ipv4::new(&frame[l3.offset..]).unwrap();
//! assert_eq!(ip.dst(), [10, 0, 0, 2]);
//! let udp = Udp::new(&frame[h.l4_offset.unwrap()..]).unwrap();
//! assert_eq!(udp.dst_port(), 53);
//! ```

mod eth;
pub mod fast;
mod headers;
mod ipv4;
mod ipv6;
mod l4;
mod l4cksum;
pub mod tunnel;

pub use crate::{cksum, ethertype, proto};
pub use eth::{l2, Eth, Vlan, VlanTag, L2, MAX_VLAN_TAGS};
pub use headers::{Headers, L3Kind, L3};
pub use ipv4::Ipv4;
pub use ipv6::{Ipv6, Upper, MAX_EXT_HEADERS};
pub use l4::{tcp_flags, Icmp, Tcp, Udp};
pub use tunnel::{Geneve, Vxlan};

// Accessors shared by the views. The views check their buffer length once, in `new`, so these never
// fall back in practice; they take the checked path anyway so that no byte pattern (or a caller that
// rewrote a length field through `as_mut`) can turn a getter into a panic.

/// `N` bytes at `at`, or zeros if they are not in `buf`.
fn rd<const N: usize>(buf: &[u8], at: usize) -> [u8; N] {
    buf.get(at..).and_then(|s| s.first_chunk::<N>()).copied().unwrap_or([0; N])
}

/// The byte at `at`, or 0.
fn rd8(buf: &[u8], at: usize) -> u8 {
    buf.get(at).copied().unwrap_or(0)
}

/// The big-endian `u16` at `at`, or 0.
fn rd16(buf: &[u8], at: usize) -> u16 {
    u16::from_be_bytes(rd(buf, at))
}

/// The big-endian `u32` at `at`, or 0.
fn rd32(buf: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(rd(buf, at))
}

/// Writes `val` at `at`; does nothing if it does not fit.
fn wr<const N: usize>(buf: &mut [u8], at: usize, val: [u8; N]) {
    if let Some(dst) = buf.get_mut(at..).and_then(|s| s.first_chunk_mut::<N>()) {
        *dst = val;
    }
}

/// Writes the byte `val` at `at`; does nothing if out of range.
fn wr8(buf: &mut [u8], at: usize, val: u8) {
    if let Some(b) = buf.get_mut(at) {
        *b = val;
    }
}

/// Writes `new` over the 16-bit word at the even offset `at` and patches the checksum field at
/// `cksum_at` (RFC 1624) on the bytes as they lie, without a byte swap
/// ([`cksum::update16_bytes`]): the views' one-field incremental setters.
#[inline(always)]
fn replace_word(buf: &mut [u8], at: usize, new: [u8; 2], cksum_at: usize) {
    let old = rd(buf, at);
    wr(buf, at, new);
    let c = cksum::update16_bytes(rd(buf, cksum_at), old, new);
    wr(buf, cksum_at, c);
}

/// `buf[from..to]`, or empty.
fn range(buf: &[u8], from: usize, to: usize) -> &[u8] {
    buf.get(from..to).unwrap_or(&[])
}

/// `buf[from..to]`, or empty.
fn range_mut(buf: &mut [u8], from: usize, to: usize) -> &mut [u8] {
    buf.get_mut(from..to).unwrap_or(&mut [])
}

/// `buf[from..]`, or empty.
fn tail(buf: &[u8], from: usize) -> &[u8] {
    buf.get(from..).unwrap_or(&[])
}

/// `buf[from..]`, or empty.
fn tail_mut(buf: &mut [u8], from: usize) -> &mut [u8] {
    buf.get_mut(from..).unwrap_or(&mut [])
}
