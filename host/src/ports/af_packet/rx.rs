//! RX: the TPACKET_V3 ring. The kernel fills blocks of frames; a block is ours when its status has
//! `TP_STATUS_USER`, and goes back when we set it to `TP_STATUS_KERNEL`. The position (block, frames
//! left, offset of the next frame) is kept across calls, so a burst may end mid-block.
//!
//! Every offset the kernel writes into the ring is checked against the block before anything is
//! read at it: a frame header must lie in the block before its fields are read, and the frame its
//! header describes must lie in the block before it is copied. A descriptor that fails a check ends
//! the block (what is left of it is given back).

use super::socket::Sock;
use crate::mbuf::{Burst, Pkt, PoolCache};
use crate::ports::{Rx, RxQueue};
use std::mem::{offset_of, size_of};
use std::sync::atomic::{fence, AtomicU32, Ordering};
use std::sync::Arc;

/// Offsets in the block descriptor (`tpacket_block_desc`, whose header is a `tpacket_hdr_v1`).
const BLOCK_STATUS: usize = offset_of!(libc::tpacket_block_desc, hdr) + offset_of!(libc::tpacket_hdr_v1, block_status);
const BLOCK_NUM_PKTS: usize = offset_of!(libc::tpacket_block_desc, hdr) + offset_of!(libc::tpacket_hdr_v1, num_pkts);
const BLOCK_FIRST: usize =
    offset_of!(libc::tpacket_block_desc, hdr) + offset_of!(libc::tpacket_hdr_v1, offset_to_first_pkt);
/// Bytes of a frame header.
const FRAME_HDR: usize = size_of::<libc::tpacket3_hdr>();

/// One queue's RX ring.
pub(super) struct AfRx {
    /// Keeps the mapping `ring` points into alive.
    _sock: Arc<Sock>,
    ring: *mut u8,
    block_size: usize,
    block_count: usize,
    /// Current block.
    block: usize,
    /// Frames left in the current block (0: not holding it).
    left: u32,
    /// Offset of the next frame in the current block.
    off: usize,
    port: u16,
    queue: u16,
}

// SAFETY: the raw ring pointer is into the mapping owned by `_sock`, which lives as long as this
// queue; the queue is used by one thread at a time.
unsafe impl Send for AfRx {}

impl AfRx {
    pub(super) fn new(sock: Arc<Sock>, block_size: usize, block_count: usize, port: u16, queue: u16) -> AfRx {
        AfRx { ring: sock.ring, _sock: sock, block_size, block_count, block: 0, left: 0, off: 0, port, queue }
    }

    #[inline(always)]
    fn block_ptr(&self) -> *mut u8 {
        // SAFETY: block < block_count, so the offset stays inside the mapping.
        unsafe { self.ring.add(self.block * self.block_size) }
    }

    #[inline(always)]
    fn status(&self) -> &AtomicU32 {
        // SAFETY: the block status word is a 4-byte aligned u32 at a fixed offset inside the block,
        // shared with the kernel, so it is accessed atomically.
        unsafe { &*(self.block_ptr().add(BLOCK_STATUS) as *const AtomicU32) }
    }

    /// The u32 at `off` of the current block (one we hold), if it lies in the block.
    #[inline(always)]
    fn u32_at(&self, off: usize) -> Option<u32> {
        if off.checked_add(4)? > self.block_size {
            return None;
        }
        // SAFETY: off + 4 <= block_size (checked), inside the block we hold.
        Some(unsafe { std::ptr::read_unaligned(self.block_ptr().add(off) as *const u32) })
    }

    /// The frame header at `off` of the current block, if it lies in the block.
    #[inline(always)]
    fn header(&self, off: usize) -> Option<libc::tpacket3_hdr> {
        if off.checked_add(FRAME_HDR)? > self.block_size {
            return None;
        }
        // SAFETY: off + FRAME_HDR <= block_size (checked), inside the block we hold; the header is
        // plain data, read without assuming alignment (a corrupt offset may be misaligned).
        Some(unsafe { std::ptr::read_unaligned(self.block_ptr().add(off) as *const libc::tpacket3_hdr) })
    }

    /// The frame `h` (at `off`) describes, if it lies in the block.
    #[inline(always)]
    fn frame(&self, off: usize, h: &libc::tpacket3_hdr) -> Option<&[u8]> {
        let start = off.checked_add(usize::from(h.tp_mac))?;
        let end = start.checked_add(h.tp_snaplen as usize)?;
        if end > self.block_size {
            return None;
        }
        // SAFETY: start..end lies inside the current block (checked), which we hold until release.
        Some(unsafe { std::slice::from_raw_parts(self.block_ptr().add(start), end - start) })
    }

    /// Gives the current block back to the kernel and moves to the next one.
    #[inline]
    fn release(&mut self) {
        self.status().store(libc::TP_STATUS_KERNEL, Ordering::Release);
        self.left = 0;
        self.block = (self.block + 1) % self.block_count;
    }

    /// Takes the next block if the kernel handed it over; false when it has not.
    #[inline]
    fn next_block(&mut self) -> bool {
        if self.status().load(Ordering::Acquire) & libc::TP_STATUS_USER == 0 {
            return false;
        }
        fence(Ordering::Acquire);
        match (self.u32_at(BLOCK_NUM_PKTS), self.u32_at(BLOCK_FIRST)) {
            (Some(n), Some(first)) if n > 0 => {
                self.left = n;
                self.off = first as usize;
            }
            _ => self.release(),
        }
        true
    }
}

/// Copies `frame` into `p`, putting back the VLAN tag the kernel took out of it (when `h` says so).
/// False when it does not fit the buffer.
fn copy_frame(p: &mut Pkt, frame: &[u8], h: &libc::tpacket3_hdr) -> bool {
    if h.tp_status & libc::TP_STATUS_VLAN_VALID == 0 || frame.len() < 12 {
        return p.copy_from(frame).is_ok();
    }
    let tci = h.hv1.tp_vlan_tci as u16;
    let tpid = if h.tp_status & libc::TP_STATUS_VLAN_TPID_VALID != 0 { h.hv1.tp_vlan_tpid } else { 0x8100 };
    let Some(d) = p.room_mut(frame.len() + 4) else { return false };
    d[..12].copy_from_slice(&frame[..12]);
    d[12..14].copy_from_slice(&tpid.to_be_bytes());
    d[14..16].copy_from_slice(&tci.to_be_bytes());
    d[16..].copy_from_slice(&frame[12..]);
    p.set_data_len(frame.len() + 4).is_ok()
}

impl RxQueue for AfRx {
    fn rx_burst(&mut self, cache: &mut PoolCache, out: &mut Burst, max: usize) -> Rx {
        let mut rx = Rx::default();
        while rx.packets < max {
            if self.left == 0 && !self.next_block() {
                break;
            }
            if self.left == 0 {
                continue;
            }
            let at = self.off;
            let Some(h) = self.header(at) else {
                self.release();
                continue;
            };
            if self.frame(at, &h).is_none() {
                self.release();
                continue;
            }
            let Some(mut p) = cache.alloc() else {
                rx.nombuf += 1;
                break;
            };
            let ok = self.frame(at, &h).is_some_and(|f| copy_frame(&mut p, f, &h));
            self.left -= 1;
            self.off = at.saturating_add(h.tp_next_offset as usize);
            if self.left == 0 {
                self.release();
            }
            if !ok {
                // Larger than a buffer: not receivable.
                cache.free(p);
                continue;
            }
            rx.bytes += p.len() as u64;
            p.meta_mut().set_input(self.port, self.queue);
            out.push(p);
            rx.packets += 1;
        }
        rx
    }
}
