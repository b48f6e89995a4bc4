//! RX: the TPACKET_V3 ring. The kernel fills blocks of frames; a block is ours when its status has
//! `TP_STATUS_USER`, and goes back when we set it to `TP_STATUS_KERNEL`. The position (block, frames
//! left, offset of the next frame) is kept across calls, so a burst may end mid-block.
//!
//! Every offset the kernel writes into the ring is checked against the block before anything is
//! read at it: a frame header must lie in the block before its fields are read, and the frame its
//! header describes must lie in the block before it is copied. A descriptor that fails a check ends
//! the block (what is left of it is given back).
//!
//! Each frame comes with a virtio-net header ([`super::vnet`]). A frame whose checksum the sender's
//! kernel left to the device gets it completed here; a TCP or UDP super-frame (GSO, up to 64 KiB) is
//! cut into segments of the sender's segment size, each a packet of its own. Frames that cannot be
//! received (too big for a buffer, cut short by the ring, an unsupported super-frame) are counted as
//! `rx_oversize` and logged at most once a second. The socket's own drop counters (frames lost
//! because the ring was full) are read every 100 ms and at stop into `rx_missed`.

use super::socket::{self, Sock};
use super::vnet::{self, VnetHdr};
use crate::mbuf::{Burst, Pkt, PoolCache, MAX_BURST};
use crate::ports::counted::{StatsClock, Unfit};
use crate::ports::{Rx, RxQueue};
use crate::stats::PortStats;
use crate::wire;
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
#[repr(align(128))] // lines of its own: see `RxQueue`
pub(super) struct AfRx {
    /// Keeps the mapping `ring` points into alive.
    sock: Arc<Sock>,
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
    stats: Arc<PortStats>,
    clock: StatsClock,
    unfit: Unfit,
    /// Room for a super-frame being segmented, and for one segment.
    whole: Vec<u8>,
    seg: Vec<u8>,
    /// A super-frame with more segments than one burst takes: where it is in the block and how many
    /// of its segments were taken; `whole` holds it meanwhile.
    resume: Option<Resume>,
}

/// A super-frame taken over several calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Resume {
    /// Block and offset of its frame.
    block: usize,
    at: usize,
    /// Segments already appended to earlier bursts.
    done: usize,
}

// SAFETY: the raw ring pointer is into the mapping owned by `sock`, which lives as long as this
// queue; the queue is used by one thread at a time.
unsafe impl Send for AfRx {}

/// What became of one frame of the ring.
enum Taken {
    /// This many packets were appended to the burst.
    Packets(usize, u64),
    /// No buffer: the frame stays in the ring for the next call.
    NoBuffer,
    /// The burst is full before the frame's last segment: the frame stays, the next call goes on
    /// with its next segment. This many packets were appended.
    Partly(usize, u64),
    /// Not receivable, for this reason.
    Unfit(&'static str),
}

impl AfRx {
    pub(super) fn new(sock: Arc<Sock>, geometry: (usize, usize), port: u16, queue: u16, stats: Arc<PortStats>) -> AfRx {
        AfRx {
            ring: sock.ring,
            sock,
            block_size: geometry.0,
            block_count: geometry.1,
            block: 0,
            left: 0,
            off: 0,
            port,
            queue,
            unfit: Unfit::new("af_packet", port, queue, stats.clone()),
            stats,
            clock: StatsClock::new(),
            whole: Vec::new(),
            seg: Vec::new(),
            resume: None,
        }
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

    /// `len` bytes at `off` of the current block (one we hold), if they lie in the block.
    #[inline(always)]
    fn bytes(&self, off: usize, len: usize) -> Option<&[u8]> {
        if off.checked_add(len)? > self.block_size {
            return None;
        }
        // SAFETY: off + len <= block_size (checked), inside the block we hold until release.
        Some(unsafe { std::slice::from_raw_parts(self.block_ptr().add(off), len) })
    }

    #[inline(always)]
    fn u32_at(&self, off: usize) -> Option<u32> {
        self.bytes(off, 4).map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The frame header at `off`, if it lies in the block.
    #[inline(always)]
    fn header(&self, off: usize) -> Option<libc::tpacket3_hdr> {
        let b = self.bytes(off, FRAME_HDR)?;
        // SAFETY: `b` is FRAME_HDR bytes of the block; the header is plain data, read without
        // assuming alignment (a corrupt offset may be misaligned).
        Some(unsafe { std::ptr::read_unaligned(b.as_ptr() as *const libc::tpacket3_hdr) })
    }

    /// The frame `h` (at `off`) describes and its virtio-net header, if both lie in the block, after
    /// the frame header.
    #[inline(always)]
    fn frame(&self, off: usize, h: &libc::tpacket3_hdr) -> Option<(&[u8], VnetHdr)> {
        let mac = usize::from(h.tp_mac);
        if mac < FRAME_HDR + vnet::LEN {
            return None;
        }
        let v = self.bytes(off.checked_add(mac - vnet::LEN)?, vnet::LEN)?;
        let frame = self.bytes(off + mac, h.tp_snaplen as usize)?;
        Some((frame, VnetHdr::read(v.try_into().ok()?)))
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

    /// Moves past the frame at `at` (whose header is `h`).
    #[inline]
    fn advance(&mut self, at: usize, h: &libc::tpacket3_hdr) {
        self.left -= 1;
        self.off = at.saturating_add(h.tp_next_offset as usize);
        if self.left == 0 {
            self.release();
        }
    }

    /// Reads the socket's drop counters into the port's, when its [`StatsClock`] says (or now).
    fn read_stats(&mut self, now: bool) {
        if !self.clock.due(now) {
            return;
        }
        if let Ok(st) = socket::read_stats(self.sock.fd) {
            PortStats::add(&self.stats.missed, u64::from(st.tp_drops));
            PortStats::add(&self.stats.ring_full, u64::from(st.tp_freeze_q_cnt));
        }
    }

    /// Turns the frame at `at` into packets at the end of `out`, at most `room`.
    fn take(
        &mut self,
        at: usize,
        h: &libc::tpacket3_hdr,
        room: usize,
        cache: &mut PoolCache,
        out: &mut Burst,
    ) -> Taken {
        if h.tp_snaplen < h.tp_len {
            return Taken::Unfit("cut short by the ring: raise af_packet.block_size");
        }
        let Some((frame, v)) = self.frame(at, h) else { return Taken::Unfit("corrupt descriptor") };
        let gso = v.gso_type & !vnet::GSO_ECN;
        if gso != vnet::GSO_NONE {
            return self.segment(at, h, v, room, cache, out);
        }
        let Some(mut p) = cache.alloc() else { return Taken::NoBuffer };
        let Some(tagged) = copy_frame(&mut p, frame, h) else {
            cache.free(p);
            return Taken::Unfit("larger than a buffer: raise pool.data_room");
        };
        if v.flags & vnet::F_NEEDS_CSUM != 0 {
            let shift = if tagged { 4 } else { 0 };
            finish_checksum(p.data_mut(), usize::from(v.csum_start) + shift, usize::from(v.csum_offset));
            PortStats::add(&self.stats.csum_completed, 1);
        }
        let len = p.len() as u64;
        p.meta_mut().set_input(self.port, self.queue);
        out.push(p);
        Taken::Packets(1, len)
    }

    /// A super-frame: cut into segments of the sender's size, each its own packet. One of more
    /// segments than `room` is taken over several calls: the frame stays in the ring (and in
    /// `whole`) until its last segment is taken, so no frame ever waits for room a burst cannot have.
    fn segment(
        &mut self,
        at: usize,
        h: &libc::tpacket3_hdr,
        v: VnetHdr,
        room: usize,
        cache: &mut PoolCache,
        out: &mut Burst,
    ) -> Taken {
        let gso = v.gso_type & !vnet::GSO_ECN;
        if gso == vnet::GSO_UDP {
            return Taken::Unfit("a UDP super-frame to be sent as IP fragments (UFO), which is not segmented");
        }
        if !matches!(gso, vnet::GSO_TCPV4 | vnet::GSO_TCPV6 | vnet::GSO_UDP_L4) {
            return Taken::Unfit("a super-frame of an unknown kind");
        }
        let here = Resume { block: self.block, at, done: 0 };
        let mut whole = std::mem::take(&mut self.whole);
        let done = match self.resume {
            Some(r) if (r.block, r.at) == (here.block, here.at) => r.done,
            _ => {
                whole.clear();
                if let Some((bytes, _)) = self.frame(at, h) {
                    put_tag_back(&mut whole, bytes, h);
                }
                0
            }
        };
        let hd = wire::parse(&whole);
        let mss = usize::from(v.gso_size);
        let n = wire::segment_count(&whole, &hd, mss);
        let k = (n - done.min(n)).min(room).min(MAX_BURST - out.len());
        let data_room = cache.pool().config().data_room as usize;
        let taken = if k == 0 {
            Taken::Partly(0, 0)
        } else if !cache.alloc_bulk(out, k) {
            Taken::NoBuffer
        } else {
            self.fill_segments(&whole, &hd, mss, data_room, done..done + k, out, cache)
        };
        self.whole = whole;
        self.resume = match taken {
            Taken::Packets(..) if done + k < n => Some(Resume { done: done + k, ..here }),
            Taken::NoBuffer => Some(Resume { done, ..here }),
            _ => None,
        };
        match taken {
            Taken::Packets(got, bytes) if done + k < n => Taken::Partly(got, bytes),
            t => t,
        }
    }

    /// Fills the fresh packets at the end of `out` with the segments `range` of `whole`.
    #[allow(clippy::too_many_arguments)]
    fn fill_segments(
        &mut self,
        whole: &[u8],
        hd: &wire::Headers,
        mss: usize,
        room: usize,
        range: std::ops::Range<usize>,
        out: &mut Burst,
        cache: &mut PoolCache,
    ) -> Taken {
        let n = range.len();
        let first = out.len() - n;
        let start = range.start;
        let (port, queue) = (self.port, self.queue);
        let mut bytes = 0;
        let r = wire::segment(whole, hd, mss, room, range, &mut self.seg, |i, seg| {
            let p = &mut out[first + i - start];
            if p.copy_from(seg).is_ok() {
                bytes += seg.len() as u64;
            }
            p.meta_mut().set_input(port, queue);
        });
        match r {
            Ok(_) => Taken::Packets(n, bytes),
            Err(_) => {
                cache.free_from(out, first);
                Taken::Unfit("a super-frame whose headers cannot be segmented")
            }
        }
    }

    /// Walks what is left in the ring, gives it back, and returns how many frames it held.
    fn drain_ring(&mut self) -> u64 {
        let mut n = u64::from(self.left);
        if self.left > 0 {
            self.release();
        }
        for _ in 0..self.block_count {
            if self.status().load(Ordering::Acquire) & libc::TP_STATUS_USER == 0 {
                break;
            }
            fence(Ordering::Acquire);
            n += u64::from(self.u32_at(BLOCK_NUM_PKTS).unwrap_or(0));
            self.release();
        }
        n
    }
}

/// Copies `frame` into `p`, putting back the VLAN tag the kernel took out of it (when `h` says so).
/// Returns whether a tag was put back, or None when the frame does not fit the buffer.
fn copy_frame(p: &mut Pkt, frame: &[u8], h: &libc::tpacket3_hdr) -> Option<bool> {
    if h.tp_status & libc::TP_STATUS_VLAN_VALID == 0 || frame.len() < 12 {
        return p.copy_from(frame).ok().map(|()| false);
    }
    let d = p.room_mut(frame.len() + 4)?;
    d[..12].copy_from_slice(&frame[..12]);
    d[12..16].copy_from_slice(&tag(h));
    d[16..].copy_from_slice(&frame[12..]);
    p.set_data_len(frame.len() + 4).ok().map(|()| true)
}

/// `frame` into `out`, with its VLAN tag put back when `h` has one.
fn put_tag_back(out: &mut Vec<u8>, frame: &[u8], h: &libc::tpacket3_hdr) {
    if h.tp_status & libc::TP_STATUS_VLAN_VALID == 0 || frame.len() < 12 {
        out.extend_from_slice(frame);
        return;
    }
    out.extend_from_slice(&frame[..12]);
    out.extend_from_slice(&tag(h));
    out.extend_from_slice(&frame[12..]);
}

/// The 4 bytes of the tag the kernel reported in `h`.
fn tag(h: &libc::tpacket3_hdr) -> [u8; 4] {
    let tci = h.hv1.tp_vlan_tci as u16;
    let tpid = if h.tp_status & libc::TP_STATUS_VLAN_TPID_VALID != 0 { h.hv1.tp_vlan_tpid } else { 0x8100 };
    let [a, b] = tpid.to_be_bytes();
    let [c, d] = tci.to_be_bytes();
    [a, b, c, d]
}

/// Finishes a partial checksum: TCP and UDP from their headers (so a VLAN tag put back cannot
/// mislead it), anything else at the offsets the kernel gave.
fn finish_checksum(frame: &mut [u8], start: usize, offset: usize) {
    let h = wire::parse(frame);
    if h.l4_whole && matches!(h.l4_proto, 6 | 17) && wire::fill_l4_cksum(frame, &h) {
        return;
    }
    wire::complete_checksum(frame, start, offset);
}

impl RxQueue for AfRx {
    fn rx_burst(&mut self, cache: &mut PoolCache, out: &mut Burst, max: usize) -> Rx {
        self.read_stats(false);
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
            match self.take(at, &h, max - rx.packets, cache, out) {
                Taken::Packets(n, bytes) => {
                    rx.packets += n;
                    rx.bytes += bytes;
                }
                Taken::NoBuffer => {
                    rx.nombuf += 1;
                    break;
                }
                Taken::Partly(n, bytes) => {
                    rx.packets += n;
                    rx.bytes += bytes;
                    break;
                }
                Taken::Unfit(why) => self.unfit.count(why, h.tp_len),
            }
            self.advance(at, &h);
        }
        rx
    }

    /// At stop: the frames still in the ring (received by the kernel, never by us) are given back
    /// and counted in flight; the socket's drop counters are read a last time.
    fn drain(&mut self, _cache: &mut PoolCache) -> u64 {
        let n = self.drain_ring();
        self.read_stats(true);
        n
    }
}
