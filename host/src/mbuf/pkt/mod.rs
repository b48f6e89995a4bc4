//! [`Pkt`]: the unique owner of one packet buffer.

use super::meta::{FlowMeta, Meta, META_SIZE};
use std::ptr::NonNull;

/// Header of every buffer: the two metadata cache lines.
#[repr(C)]
pub(crate) struct Header {
    pub(crate) meta: Meta,
    pub(crate) flow: FlowMeta,
}

/// A packet buffer, owned. Not `Clone`: exactly one `Pkt` exists per buffer taken from the pool,
/// and it goes back to the pool through a [`super::PoolCache`].
///
/// Invariant (kept by every method): `data_off + data_len <= buf_len`, and the buffer lies inside a
/// pool region that outlives it.
#[repr(transparent)]
pub struct Pkt(NonNull<Header>);

// SAFETY: a Pkt is the unique handle to its buffer; moving it between threads moves the ownership.
unsafe impl Send for Pkt {}

impl Pkt {
    /// # Safety
    /// `hdr` must point to a buffer header of a live pool, initialised, with `buf_len` bytes after the
    /// header, and no other `Pkt` for it may exist.
    pub(crate) unsafe fn from_raw(hdr: NonNull<Header>) -> Pkt {
        Pkt(hdr)
    }

    pub(crate) fn into_raw(self) -> NonNull<Header> {
        self.0
    }

    /// First metadata cache line.
    #[inline(always)]
    pub fn meta(&self) -> &Meta {
        // SAFETY: the header is valid and uniquely owned (type invariant).
        unsafe { &self.0.as_ref().meta }
    }

    /// First metadata cache line, writable. `data_off`, `data_len` and `buf_len` must be changed
    /// through [`Pkt::set_data_len`], [`Pkt::prepend`], [`Pkt::adj`], [`Pkt::append`] and
    /// [`Pkt::trim`], which keep the invariant; this method gives access to the other fields through
    /// [`MetaMut`].
    #[inline(always)]
    pub fn meta_mut(&mut self) -> MetaMut<'_> {
        // SAFETY: as in `meta`, and `&mut self` makes the access unique.
        MetaMut(unsafe { &mut self.0.as_mut().meta })
    }

    /// Second metadata cache line (tunnel/flow).
    #[inline(always)]
    pub fn flow(&self) -> &FlowMeta {
        // SAFETY: the header is valid and uniquely owned (type invariant).
        unsafe { &self.0.as_ref().flow }
    }

    /// Second metadata cache line, writable.
    #[inline(always)]
    pub fn flow_mut(&mut self) -> &mut FlowMeta {
        // SAFETY: as in `flow`, and `&mut self` makes the access unique.
        unsafe { &mut self.0.as_mut().flow }
    }

    /// Both metadata lines writable at once: one read of the handle for a run of stores to both
    /// (through `&mut self` between them, the compiler reads the handle again after each store, as
    /// the store might have changed it).
    #[inline(always)]
    pub fn meta_flow_mut(&mut self) -> (MetaMut<'_>, &mut FlowMeta) {
        // SAFETY: as in `meta_mut` and `flow_mut`: `&mut self` makes the access unique, and the two
        // fields are disjoint.
        let h = unsafe { self.0.as_mut() };
        (MetaMut(&mut h.meta), &mut h.flow)
    }

    /// Bytes of packet data.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.meta().data_len as usize
    }

    /// True when the packet has no data.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes that can be prepended.
    #[inline(always)]
    pub fn headroom(&self) -> usize {
        self.meta().data_off as usize
    }

    /// Bytes that can be appended.
    #[inline(always)]
    pub fn tailroom(&self) -> usize {
        let m = self.meta();
        m.buf_len as usize - m.data_off as usize - m.data_len as usize
    }

    /// Start of the packet data. Valid for reads and writes of `len() + tailroom()` bytes while the
    /// `Pkt` is alive; at least 16 bytes when the pool's data room is at least 16 (the pool ensures
    /// 64), which is what the SIMD kernels rely on.
    #[inline(always)]
    pub fn data_ptr(&self) -> *mut u8 {
        // SAFETY: data_off <= buf_len, so the result stays inside the buffer (type invariant).
        unsafe { self.0.as_ptr().cast::<u8>().add(META_SIZE + self.meta().data_off as usize) }
    }

    /// The packet data.
    #[inline(always)]
    pub fn data(&self) -> &[u8] {
        // SAFETY: data_off + data_len <= buf_len (type invariant); unique ownership.
        unsafe { std::slice::from_raw_parts(self.data_ptr(), self.len()) }
    }

    /// The packet data, writable.
    #[inline(always)]
    pub fn data_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `data`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.data_ptr(), self.len()) }
    }

    /// The packet's first `W` bytes, when it has that many: read from its data pointer as it is.
    /// (Through [`Pkt::data`], a caller that also takes the slice on another branch has the
    /// slice's address and bound computed before its length test.)
    #[inline(always)]
    pub fn head<const W: usize>(&self) -> Option<[u8; W]> {
        // SAFETY: with `len() >= W`, the `W` bytes from the data pointer are the packet's (type
        // invariant); `[u8; W]` has no alignment to keep.
        (self.len() >= W).then(|| unsafe { self.data_ptr().cast::<[u8; W]>().read_unaligned() })
    }

    /// Writes `bytes` over the packet's first `W` bytes, when it has that many (false, and nothing
    /// written, when it is shorter): [`Pkt::head`]'s write.
    #[inline(always)]
    pub fn set_head<const W: usize>(&mut self, bytes: &[u8; W]) -> bool {
        if self.len() < W {
            return false;
        }
        // SAFETY: as in `head`, and `&mut self` makes the access unique.
        unsafe { self.data_ptr().cast::<[u8; W]>().write_unaligned(*bytes) };
        true
    }

    /// Sets the data length (and packet length). Fails when it does not fit the tailroom.
    #[inline(always)]
    pub fn set_data_len(&mut self, len: usize) -> Result<(), RoomError> {
        let m = self.meta();
        let room = m.buf_len as usize - m.data_off as usize;
        if len > room {
            return Err(RoomError::NoTailroom { need: len.saturating_sub(self.len()), have: room - self.len() });
        }
        // SAFETY: the header is valid and uniquely owned; the new length keeps the invariant.
        let m = unsafe { &mut self.0.as_mut().meta };
        m.data_len = len as u16;
        m.pkt_len = len as u32;
        Ok(())
    }

    /// Grows the packet at the front by `n` bytes taken from the headroom and returns the whole data
    /// (DPDK's `rte_pktmbuf_prepend`, XDP's `bpf_xdp_adjust_head` with a negative delta). The new
    /// bytes hold whatever the headroom held: the caller writes them.
    #[inline]
    pub fn prepend(&mut self, n: usize) -> Result<&mut [u8], RoomError> {
        if n > self.headroom() {
            return Err(RoomError::NoHeadroom { need: n, have: self.headroom() });
        }
        // SAFETY: data_off moves back by at most data_off and data_len grows by the same amount, so
        // data_off + data_len is unchanged and the invariant holds; unique ownership via `&mut self`.
        let m = unsafe { &mut self.0.as_mut().meta };
        let len = usize::from(m.data_len) + n;
        // SAFETY: n <= data_off, and data_off + data_len <= buf_len, a u16 (the invariant). Told
        // to the compiler, a caller's u16 arithmetic on the length needs no overflow check.
        unsafe { std::hint::assert_unchecked(len <= usize::from(u16::MAX)) };
        m.data_off -= n as u16;
        m.data_len = len as u16;
        m.pkt_len += n as u32;
        // SAFETY: the `len` bytes from the new data start are the packet's data (as `data_mut`);
        // computed from the old length, so the compiler knows the slice holds at least `n` bytes.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.data_ptr(), len) })
    }

    /// Strips `n` bytes from the front of the packet; they become headroom (DPDK's
    /// `rte_pktmbuf_adj`, XDP's `bpf_xdp_adjust_head` with a positive delta). Fails when fewer than
    /// [`MIN_FRAME`] bytes would remain.
    #[inline]
    pub fn adj(&mut self, n: usize) -> Result<(), RoomError> {
        let left = self.remaining_after(n)?;
        // SAFETY: n <= data_len (checked by `remaining_after`): data_off + data_len is unchanged;
        // unique ownership via `&mut self`.
        let m = unsafe { &mut self.0.as_mut().meta };
        m.data_off += n as u16;
        m.data_len = left as u16;
        m.pkt_len = left as u32;
        Ok(())
    }

    /// Extends the packet at the tail by `n` bytes taken from the tailroom and returns them (DPDK's
    /// `rte_pktmbuf_append`, XDP's `bpf_xdp_adjust_tail` with a positive delta). The new bytes hold
    /// whatever the buffer held: the caller writes them.
    #[inline]
    pub fn append(&mut self, n: usize) -> Result<&mut [u8], RoomError> {
        let old = self.len();
        if n > self.tailroom() {
            return Err(RoomError::NoTailroom { need: n, have: self.tailroom() });
        }
        self.set_data_len(old + n)?;
        Ok(&mut self.data_mut()[old..])
    }

    /// Removes `n` bytes from the tail (DPDK's `rte_pktmbuf_trim`, XDP's `bpf_xdp_adjust_tail` with
    /// a negative delta). Fails when fewer than [`MIN_FRAME`] bytes would remain.
    #[inline]
    pub fn trim(&mut self, n: usize) -> Result<(), RoomError> {
        let left = self.remaining_after(n)?;
        self.set_data_len(left)
    }

    /// `head` bytes at the front (`> 0` prepends into the headroom, `< 0` strips) then `tail` at the
    /// end (`> 0` appends into the tailroom, `< 0` trims), as [`Pkt::prepend`] or [`Pkt::adj`] then
    /// [`Pkt::append`] or [`Pkt::trim`] would, but checked once and made in one step (a plugin's
    /// length changes, once per packet): both are checked before either is made, and a strip or a
    /// trim must leave [`MIN_FRAME`] bytes after it.
    #[inline]
    pub fn reframe(&mut self, head: isize, tail: isize) -> Result<(), RoomError> {
        let (off, len) = (self.headroom() as isize, self.len() as isize);
        let tailroom = self.tailroom() as isize;
        let (after_head, after) = (len + head, len + head + tail);
        if head > off {
            return Err(RoomError::NoHeadroom { need: head as usize, have: off as usize });
        }
        if tail > tailroom {
            return Err(RoomError::NoTailroom { need: tail as usize, have: tailroom as usize });
        }
        let min = MIN_FRAME as isize;
        if (head < 0 && after_head < min) || (tail < 0 && after < min) {
            let remove = (-head.min(0) - tail.min(0)) as usize;
            return Err(RoomError::TooShort { remove, len: len as usize });
        }
        // SAFETY: the new start `off - head` is >= 0 (head <= off); the new end `off + len + tail`
        // is <= buf_len (tail <= tailroom, which a change at the front leaves as it is); the new
        // length `after` is >= 0 (each shrink leaves MIN_FRAME, each growth adds); unique ownership.
        let m = unsafe { &mut self.0.as_mut().meta };
        m.data_off = (off - head) as u16;
        m.data_len = after as u16;
        m.pkt_len = after as u32;
        Ok(())
    }

    /// Moves the packet's bytes `n` bytes further into its buffer: the tailroom gives `n` bytes to
    /// the headroom, the bytes and the length are the same. Fails when the tailroom is under `n`.
    #[cold]
    pub fn slide(&mut self, n: usize) -> Result<(), RoomError> {
        if n > self.tailroom() {
            return Err(RoomError::NoTailroom { need: n, have: self.tailroom() });
        }
        let (from, len) = (self.data_ptr(), self.len());
        // SAFETY: `len + n <= len + tailroom` bytes from the data start are the buffer's (type
        // invariant); `copy` allows the ranges to overlap; unique ownership via `&mut self`.
        unsafe { std::ptr::copy(from, from.add(n), len) };
        // SAFETY: data_off + n + data_len <= buf_len (checked above): the invariant holds.
        unsafe { self.0.as_mut().meta.data_off += n as u16 };
        Ok(())
    }

    /// Keeps only the bytes `start..start + len` of the data: [`Pkt::adj`] and [`Pkt::trim`] in one
    /// step (a decapsulation: outer headers off the front, padding off the tail). Fails when the
    /// range is not within the data or is shorter than [`MIN_FRAME`].
    #[inline]
    pub fn crop(&mut self, start: usize, len: usize) -> Result<(), RoomError> {
        let end = start.checked_add(len).filter(|&e| e <= self.len());
        if end.is_none() || len < MIN_FRAME {
            return Err(RoomError::TooShort { remove: self.len().saturating_sub(len), len: self.len() });
        }
        // SAFETY: start + len <= data_len (checked): the kept bytes lie within the old data, so
        // data_off + data_len only shrinks; unique ownership via `&mut self`.
        let m = unsafe { &mut self.0.as_mut().meta };
        m.data_off += start as u16;
        m.data_len = len as u16;
        m.pkt_len = len as u32;
        Ok(())
    }

    /// The length left after removing `n` bytes, when that leaves a whole Ethernet header.
    #[inline(always)]
    fn remaining_after(&self, n: usize) -> Result<usize, RoomError> {
        match self.len().checked_sub(n) {
            Some(left) if left >= MIN_FRAME => Ok(left),
            _ => Err(RoomError::TooShort { remove: n, len: self.len() }),
        }
    }

    /// The first `n` bytes from the data start, data and tailroom together, for generators that
    /// write whole cache lines before setting the length. `None` when `n` exceeds them.
    #[inline(always)]
    pub fn room_mut(&mut self, n: usize) -> Option<&mut [u8]> {
        if n > self.len() + self.tailroom() {
            return None;
        }
        // SAFETY: data_off + n <= buf_len (checked above); unique ownership through `&mut self`.
        Some(unsafe { std::slice::from_raw_parts_mut(self.data_ptr(), n) })
    }

    /// Replaces the data with `bytes`, keeping the headroom. Fails when `bytes` does not fit.
    pub fn copy_from(&mut self, bytes: &[u8]) -> Result<(), RoomError> {
        self.set_data_len(bytes.len())?;
        self.data_mut().copy_from_slice(bytes);
        Ok(())
    }

    /// Address of the metadata, for prefetching.
    #[inline(always)]
    pub fn meta_ptr(&self) -> *const u8 {
        self.0.as_ptr().cast()
    }
}

/// Writable view of the metadata fields that do not govern memory safety.
pub struct MetaMut<'a>(&'a mut Meta);

impl MetaMut<'_> {
    /// Sets the offload flags.
    #[inline(always)]
    pub fn set_ol_flags(&mut self, f: u64) -> &mut Self {
        self.0.ol_flags = f;
        self
    }
    /// Sets the VLAN TCIs (inner, outer).
    #[inline(always)]
    pub fn set_vlan(&mut self, tci: u16, outer: u16) -> &mut Self {
        self.0.vlan_tci = tci;
        self.0.vlan_tci_outer = outer;
        self
    }
    /// Sets the header lengths.
    #[inline(always)]
    pub fn set_lens(&mut self, l2: u8, l3: u16, l4: u8) -> &mut Self {
        self.0.l2_len = l2;
        self.0.l3_len = l3;
        self.0.l4_len = l4;
        self
    }
    /// Sets the input port and queue.
    #[inline(always)]
    pub fn set_input(&mut self, port: u16, queue: u16) -> &mut Self {
        self.0.port = port;
        self.0.queue = queue;
        self
    }
    /// Sets the packet type.
    #[inline(always)]
    pub fn set_packet_type(&mut self, t: u32) -> &mut Self {
        self.0.packet_type = t;
        self
    }
    /// Sets the flow hash.
    #[inline(always)]
    pub fn set_hash(&mut self, h: u32) -> &mut Self {
        self.0.hash = h;
        self
    }
    /// Sets the plugin-visible index (see [`Meta::slot`]).
    #[inline(always)]
    pub fn set_slot(&mut self, slot: u16) -> &mut Self {
        self.0.slot = slot;
        self
    }
    /// Copies every field of `m` except the buffer layout (`data_off`, `data_len`, `pkt_len`,
    /// `buf_len`): what a packet copied into a new buffer keeps of the original.
    #[inline(always)]
    pub fn copy_from(&mut self, m: &Meta) -> &mut Self {
        let keep = (self.0.data_off, self.0.data_len, self.0.pkt_len, self.0.buf_len);
        *self.0 = *m;
        (self.0.data_off, self.0.data_len, self.0.pkt_len, self.0.buf_len) = keep;
        self
    }
}

impl std::ops::Deref for MetaMut<'_> {
    type Target = Meta;
    fn deref(&self) -> &Meta {
        self.0
    }
}

/// Fewest bytes [`Pkt::adj`] and [`Pkt::trim`] leave: an Ethernet header.
pub const MIN_FRAME: usize = 14;

/// Why a length change was refused; the packet is unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoomError {
    /// Growing at the front needs more headroom than the buffer has left.
    NoHeadroom {
        /// Bytes asked for.
        need: usize,
        /// Headroom left.
        have: usize,
    },
    /// Growing at the tail needs more room than the buffer's data room has left.
    NoTailroom {
        /// Bytes asked for.
        need: usize,
        /// Tailroom left.
        have: usize,
    },
    /// Removing the bytes would leave less than an Ethernet header ([`MIN_FRAME`]).
    TooShort {
        /// Bytes asked to remove.
        remove: usize,
        /// Packet length.
        len: usize,
    },
}

impl std::fmt::Display for RoomError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            RoomError::NoHeadroom { need, have } => {
                write!(f, "{need} bytes of headroom needed, {have} left (raise pool.headroom)")
            }
            RoomError::NoTailroom { need, have } => {
                write!(f, "{need} bytes of tailroom needed, {have} left (raise pool.data_room)")
            }
            RoomError::TooShort { remove, len } => {
                write!(f, "removing {remove} of {len} bytes would leave less than a {MIN_FRAME}-byte Ethernet header")
            }
        }
    }
}

impl std::error::Error for RoomError {}

impl std::fmt::Debug for Pkt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pkt").field("len", &self.len()).field("port", &self.meta().port).finish()
    }
}

#[cfg(test)]
mod tests;
