//! The packet pool as the UMEM (`af_xdp.umem: pool`, the default when the pool allows it): every
//! socket of the port registers the whole region of the dataplane's packet pool as its UMEM, in
//! unaligned-chunk mode, so that the kernel writes a received frame straight into a pool buffer
//! and sends a pool buffer where its data lies. RX hands that buffer to the engine as it is; TX
//! posts the address of a packet's data and frees the buffer when the kernel completes it. A frame
//! forwarded between af_xdp ports, or between an af_xdp port and any port whose buffers are the
//! pool's (null, ring, pcap, af_packet: their own copy in and out of the kernel is theirs), is never
//! copied by this driver. (Each socket registers the region itself rather than sharing one UMEM
//! with `XDP_SHARED_UMEM`: the same pages pinned by each socket, no UMEM to share between ports
//! or lcores, each queue's rings its own.)
//!
//! One rule of ownership makes it safe: a buffer is lent to the kernel through exactly one ring
//! of one queue, and is taken back only through that queue.
//! - RX: a buffer taken from the pool goes on the fill ring, marked in the queue's [`Lent`]
//!   table; an RX descriptor becomes a packet only when its address is the fill address of a
//!   buffer marked there (then unmarked) and its frame lies where that buffer's data starts. Any
//!   other address (another queue's buffer, a buffer on a TX ring, the middle of a buffer, past
//!   the region) is refused and counted, and nothing is read through it.
//! - TX: a posted packet is kept in the queue's FIFO with the address posted; the kernel writes
//!   completion addresses in the order it consumed the TX ring, so each completion must be the
//!   address at the FIFO's head. A buffer whose completion does not match is never reused
//!   (counted), rather than freed while the kernel might still read it.
//! - At close, buffers still lent go back to the pool only after the socket is closed and its
//!   rings unmapped (`Xsk`'s drop).
//!
//! No Rust reference to a buffer's bytes exists while the kernel holds it. The kernel puts a frame
//! 256 B (XDP_PACKET_HEADROOM) after the fill address, so a buffer's fill address is its data
//! start less 256: its header lies in that headroom, which the kernel and our program do not
//! write but a driver could, so RX rewrites the whole header of a buffer it takes back instead of
//! trusting it. Hence the pool's limits for this mode: `pool.headroom` >= 128 (header 128 + 128 =
//! the 256), a chunk of 256 + `pool.data_room` <= 4096 B (the kernel's largest), a region under 4
//! GiB (offsets are 32-bit here).

use super::XDP_HEADROOM;
use crate::mbuf::{Header, Meta, Pkt, Pool, PoolCache, MAX_BURST, META_SIZE};
use std::ptr::NonNull;
use std::sync::Arc;

/// Exact `n / d` for every `n < 2^32` with one multiplication (Lemire, Kaser and Kurz, "Faster
/// remainder by direct computation", 2019: with c = ceil(2^64 / d), n / d = (c * n) >> 64): a
/// buffer's index from its offset, per packet, without a division instruction.
#[derive(Debug, Clone, Copy)]
pub(super) struct Divisor {
    c: u64,
}

impl Divisor {
    /// For `d >= 2`.
    pub(super) fn new(d: u32) -> Divisor {
        Divisor { c: u64::MAX / u64::from(d.max(2)) + 1 }
    }

    #[inline(always)]
    pub(super) fn div(self, n: u32) -> u32 {
        ((u128::from(self.c) * u128::from(n)) >> 64) as u32
    }
}

/// The pool seen as one UMEM.
pub(super) struct PoolUmem {
    pool: Arc<Pool>,
    geo: Geometry,
}

/// Where the pool's buffers are, copied out for the per-packet loops (kept in registers there).
#[derive(Clone, Copy)]
pub(super) struct Geometry {
    base: NonNull<u8>,
    len: u32,
    /// `buffers * stride`: an offset below it that is a multiple of the stride is a buffer's.
    spans: u32,
    stride: u32,
    div: Divisor,
    /// From a buffer's slot in the region to its fill address (the data start less 256).
    lead: u32,
    /// From a buffer's slot to its header.
    hdr_off: u32,
    buffers: u32,
    data_room: u32,
    empty: Meta,
}

// SAFETY: the pointer is the pool's region, which the `Arc<Pool>` keeps mapped; who may touch a
// buffer is governed by the ownership rule of the module docs, not by this value.
unsafe impl Send for Geometry {}
// SAFETY: as above: the value itself is read-only.
unsafe impl Sync for Geometry {}

impl PoolUmem {
    /// The pool as a UMEM, or why it cannot be one (in words for the config's user).
    pub(super) fn new(pool: &Arc<Pool>) -> Result<PoolUmem, String> {
        let l = pool.layout();
        let cfg = pool.config();
        let data_at = l.hdr_off + META_SIZE + usize::from(cfg.headroom);
        if data_at - l.hdr_off < XDP_HEADROOM {
            return Err(format!(
                "pool.headroom {} is under 128: the kernel puts a frame {XDP_HEADROOM} B after the address it is given, \
                 and the buffer's 128 B of metadata must fit in front with the headroom",
                cfg.headroom
            ));
        }
        if XDP_HEADROOM + usize::from(cfg.data_room) > 4096 {
            return Err(format!(
                "pool.data_room {} is over 3840: a UMEM chunk ({XDP_HEADROOM} B of XDP headroom and the data room) is at most 4096 B",
                cfg.data_room
            ));
        }
        let len = u32::try_from(l.len).map_err(|_| format!("the pool's region is {} B, over 4 GiB", l.len))?;
        let stride = u32::try_from(l.stride).map_err(|_| "the pool's stride is over 4 GiB".to_string())?;
        let geo = Geometry {
            base: l.base,
            len,
            spans: l.buffers as u32 * stride,
            stride,
            div: Divisor::new(stride),
            lead: (data_at - XDP_HEADROOM) as u32,
            hdr_off: l.hdr_off as u32,
            buffers: l.buffers as u32,
            data_room: u32::from(cfg.data_room),
            empty: l.empty,
        };
        Ok(PoolUmem { pool: pool.clone(), geo })
    }

    /// The pool.
    pub(super) fn pool(&self) -> &Arc<Pool> {
        &self.pool
    }

    /// Whether the pool lies on explicit 2 MiB huge pages (physically contiguous within each).
    pub(super) fn on_huge_pages(&self) -> bool {
        self.pool.info().backing == crate::mbuf::Backing::HugePages
    }

    /// Where its buffers are.
    #[inline(always)]
    pub(super) fn geo(&self) -> Geometry {
        self.geo
    }
}

impl Geometry {
    /// Start and length of the region to register.
    pub(super) fn region(&self) -> (*mut u8, usize) {
        (self.base.as_ptr(), self.len as usize)
    }

    /// Bytes of a chunk: the kernel's headroom and the data room.
    pub(super) fn chunk(&self) -> usize {
        XDP_HEADROOM + self.data_room as usize
    }

    /// Number of buffers (the size of a [`Lent`] table).
    pub(super) fn buffers(&self) -> usize {
        self.buffers as usize
    }

    /// The fill address of buffer `i`.
    #[inline(always)]
    pub(super) fn fill_addr(&self, i: u32) -> u64 {
        u64::from(i * self.stride + self.lead)
    }

    /// The index of `p`'s buffer, when it is this pool's.
    #[inline(always)]
    pub(super) fn index(&self, p: &Pkt) -> Option<u32> {
        let at = (p.meta_ptr() as usize).wrapping_sub(self.base.as_ptr() as usize + self.hdr_off as usize);
        if at >= self.len as usize {
            return None;
        }
        let i = self.div.div(at as u32);
        (i * self.stride == at as u32).then_some(i)
    }

    /// The buffer whose fill address is `addr` (an RX descriptor's base address), if `addr` is
    /// exactly one.
    #[inline(always)]
    pub(super) fn index_of_fill(&self, addr: u64) -> Option<u32> {
        let n = addr.wrapping_sub(u64::from(self.lead));
        if n >= u64::from(self.spans) {
            return None;
        }
        let i = self.div.div(n as u32);
        (i * self.stride == n as u32).then_some(i)
    }

    /// The buffer an RX descriptor names, if its address is the fill address of one (the frame
    /// where that buffer's data starts) and the frame fits the data room; not yet whether it was
    /// lent.
    #[inline(always)]
    pub(super) fn received_index(&self, d: &libc::xdp_desc) -> Option<u32> {
        let at = d.addr & libc::XSK_UNALIGNED_BUF_ADDR_MASK;
        let off = d.addr >> libc::XSK_UNALIGNED_BUF_OFFSET_SHIFT;
        if off != XDP_HEADROOM as u64 || d.len > self.data_room {
            return None;
        }
        self.index_of_fill(at)
    }

    /// The metadata [`Self::received`] writes, but for the lengths: an empty buffer's, received
    /// on `port`'s `queue`.
    pub(super) fn received_meta(&self, port: u16, queue: u16) -> Meta {
        Meta { port, queue, ..self.empty }
    }

    /// Buffer `i`, back from the kernel with a frame of `len` bytes at its data start, as a packet:
    /// its header written anew, `meta` (from [`Self::received_meta`]) with the lengths.
    ///
    /// # Safety
    /// `i` < [`Self::buffers`], and the buffer is the caller's: lent by its ring and returned by
    /// the kernel, no `Pkt` for it alive; `len` <= the data room.
    #[inline(always)]
    pub(super) unsafe fn received(&self, i: u32, len: u32, meta: &Meta) -> Pkt {
        let at = (i * self.stride + self.hdr_off) as usize;
        // SAFETY: `i` is a buffer of the region (the caller's promise), whose header is at `at`.
        let hdr = unsafe { self.base.as_ptr().add(at) }.cast::<Header>();
        // SAFETY: the buffer is the caller's alone; its header is aligned (the pool's layout).
        unsafe {
            (*hdr).meta = *meta;
            (*hdr).meta.data_len = len as u16;
            (*hdr).meta.pkt_len = len;
        }
        // SAFETY: an initialised header with `buf_len` bytes after it, data_off + len <= buf_len
        // (headroom + data room), the only handle.
        unsafe { Pkt::from_raw(NonNull::new_unchecked(hdr)) }
    }

    /// The header offset of buffer `i` (what [`Posted`] and the parked lists hold).
    #[inline(always)]
    pub(super) fn header_of(&self, i: u32) -> u32 {
        i * self.stride + self.hdr_off
    }

    /// The header offset and the UMEM address of the data of `p`, when `p` is this pool's (its
    /// header lies in the region: another pool's buffers lie in other mappings).
    #[inline(always)]
    pub(super) fn locate(&self, p: &Pkt) -> Option<(u32, u64)> {
        let hdr = (p.meta_ptr() as usize).wrapping_sub(self.base.as_ptr() as usize);
        (hdr < self.len as usize).then(|| (hdr as u32, (hdr + META_SIZE + usize::from(p.meta().data_off)) as u64))
    }

    /// The buffer whose header is at `hdr`, as a packet, as it is (to return it to the pool).
    ///
    /// # Safety
    /// `hdr` is the header offset of a buffer of the region that is the caller's (taken back from
    /// the kernel, no `Pkt` for it alive).
    #[inline(always)]
    pub(super) unsafe fn at_header(&self, hdr: u32) -> Pkt {
        // SAFETY: the caller's promise: a header of the region, initialised, ours alone.
        unsafe { Pkt::from_raw(NonNull::new_unchecked(self.base.as_ptr().add(hdr as usize).cast::<Header>())) }
    }
}

/// A batch being appended to [`Posted`].
pub(super) struct Stage<'a> {
    at: usize,
    mask: usize,
    entries: &'a mut [(u64, u32)],
}

impl Stage<'_> {
    /// Records the `k`-th packet of the batch (0, 1, ... in order; `k` < room()), posted at
    /// `addr`, its buffer's header at `hdr`.
    #[inline(always)]
    pub(super) fn put(&mut self, k: usize, addr: u64, hdr: u32) {
        if let Some(e) = self.entries.get_mut((self.at + k) & self.mask) {
            *e = (addr, hdr);
        }
    }
}

/// Which buffers one queue's fill ring has lent to the kernel.
pub(super) struct Lent {
    lent: Vec<bool>,
}

impl Lent {
    pub(super) fn new(buffers: usize) -> Lent {
        Lent { lent: vec![false; buffers] }
    }

    /// The table: `true` where the buffer of that index is lent.
    #[inline(always)]
    pub(super) fn slots(&mut self) -> &mut [bool] {
        &mut self.lent
    }

    /// Every buffer still lent, unmarked.
    pub(super) fn drain(&mut self) -> Vec<u32> {
        let out = self.lent.iter().enumerate().filter(|(_, l)| **l).map(|(i, _)| i as u32).collect();
        self.lent.iter_mut().for_each(|l| *l = false);
        out
    }
}

/// The packets one queue posted on its TX ring and the kernel has not completed, in posting
/// order: the address each was posted at and its buffer (header offset in the region).
pub(super) struct Posted {
    entries: Box<[(u64, u32)]>,
    mask: usize,
    head: usize,
    len: usize,
}

impl Posted {
    /// Room for `capacity` (rounded up to a power of two).
    pub(super) fn new(capacity: usize) -> Posted {
        let cap = capacity.max(1).next_power_of_two();
        Posted { entries: vec![(0, 0); cap].into(), mask: cap - 1, head: 0, len: 0 }
    }

    /// Room for more.
    #[inline(always)]
    pub(super) fn room(&self) -> usize {
        self.entries.len() - self.len
    }

    /// Where the next batch goes: [`Stage::put`] its packets, then [`Self::commit`] how many.
    #[inline(always)]
    pub(super) fn stage(&mut self) -> Stage<'_> {
        Stage { at: self.head + self.len, mask: self.mask, entries: &mut self.entries }
    }

    /// Appends the `n` packets staged.
    #[inline(always)]
    pub(super) fn commit(&mut self, n: usize) {
        self.len = (self.len + n).min(self.entries.len());
    }

    /// The buffers completed at `addrs(0..n)`, in order, freed to `cache`. The kernel completes
    /// in posting order, so each is the oldest; were one not (a descriptor the kernel skipped
    /// without completing it), the buffers posted before the match leave the FIFO unreused
    /// (counted in the result) rather than be freed while the kernel might still read them, and an
    /// address posted for nothing is ignored.
    #[inline(always)]
    pub(super) fn complete(&mut self, n: u32, addrs: impl Fn(u32) -> u64, g: &Geometry, cache: &mut PoolCache) -> u32 {
        let (head, mask, n) = (self.head, self.mask, n as usize);
        let entries = &self.entries;
        let in_order =
            n <= self.len && (0..n).all(|i| entries.get((head + i) & mask).is_some_and(|e| e.0 == addrs(i as u32)));
        if in_order {
            // The usual case, checked first so that this is only the hand-over, in bulk.
            for from in (0..n).step_by(MAX_BURST) {
                let to = (from + MAX_BURST).min(n);
                cache.free_bulk((from..to).map(|i| {
                    // SAFETY: each is a buffer this queue posted and the kernel completed, at the
                    // address posted: ours again, and leaving the FIFO.
                    unsafe { g.at_header(entries[(head + i) & mask].1) }
                }));
            }
            self.head = (head + n) & mask;
            self.len -= n;
            return 0;
        }
        let mut lost = 0;
        for i in 0..n {
            if let Ok(hdr) = self.complete_out_of_order(addrs(i as u32), &mut lost) {
                // SAFETY: as above, for the buffer posted at this address.
                cache.free(unsafe { g.at_header(hdr) });
            }
        }
        lost
    }

    /// One completion, wherever its address is in the FIFO.
    #[cold]
    fn complete_out_of_order(&mut self, addr: u64, lost: &mut u32) -> Result<u32, ()> {
        let at = (0..self.len).find(|&k| self.entries[(self.head + k) & self.mask].0 == addr).ok_or(())?;
        let hdr = self.entries[(self.head + at) & self.mask].1;
        *lost += at as u32;
        self.head = (self.head + at + 1) & self.mask;
        self.len -= at + 1;
        Ok(hdr)
    }

    /// Every buffer still posted, emptied.
    pub(super) fn drain(&mut self) -> Vec<u32> {
        let out = (0..self.len).map(|k| self.entries[(self.head + k) & self.mask].1).collect();
        self.len = 0;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mbuf::{Burst, PoolConfig};

    #[test]
    fn the_divisor_is_exact_at_and_around_every_multiple() {
        for d in [2u32, 3, 7, 2368, 4096, 4160, 12352, 65536 + 64] {
            let div = Divisor::new(d);
            for q in (0..u32::MAX / d).step_by(((u32::MAX / d) / 5000).max(1) as usize) {
                let n = q * d;
                assert_eq!(div.div(n), q, "{n} / {d}");
                assert_eq!(div.div(n + d - 1), q, "{} / {d}", n + d - 1);
                if n > 0 {
                    assert_eq!(div.div(n - 1), q - 1, "{} / {d}", n - 1);
                }
            }
            assert_eq!(div.div(u32::MAX), u32::MAX / d);
        }
    }

    fn pool(headroom: u16, data_room: u16) -> Arc<Pool> {
        Pool::new(PoolConfig { size: 64, headroom, data_room, cache_size: 8 }).unwrap()
    }

    #[test]
    fn a_pool_that_cannot_be_a_umem_says_why() {
        let e = PoolUmem::new(&pool(64, 2048)).err().unwrap();
        assert!(e.contains("pool.headroom 64 is under 128"), "{e}");
        let e = PoolUmem::new(&pool(128, 4000)).err().unwrap();
        assert!(e.contains("pool.data_room 4000 is over 3840"), "{e}");
        assert!(PoolUmem::new(&pool(128, 3840)).is_ok());
    }

    #[test]
    fn fill_addresses_put_the_kernels_frame_at_each_buffers_data_start() {
        for headroom in [128u16, 200, 256] {
            let p = pool(headroom, 2048);
            let u = PoolUmem::new(&p).unwrap().geo();
            let mut cache = p.cache();
            let mut burst = Burst::new();
            assert!(cache.alloc_bulk(&mut burst, 32));
            let (base, _) = u.region();
            for pkt in burst.iter() {
                let i = u.index(pkt).unwrap();
                let fill = u.fill_addr(i);
                assert_eq!(u.index_of_fill(fill), Some(i));
                // The kernel writes the frame XDP_HEADROOM after the fill address: the data start.
                assert_eq!(base as u64 + fill + XDP_HEADROOM as u64, pkt.data_ptr() as u64);
                assert_eq!(u.locate(pkt), Some((u.header_of(i), fill + XDP_HEADROOM as u64)));
                // Any other address near it is no buffer's.
                for off in [1u64, 64, 128, 255, 256] {
                    assert_eq!(u.index_of_fill(fill + off), None, "fill + {off}");
                    assert_eq!(u.index_of_fill(fill.wrapping_sub(off)), None, "fill - {off}");
                }
            }
            // An RX descriptor: the fill address with the frame's offset in its top 16 bits.
            let i = u.index(&burst[0]).unwrap();
            let desc = |addr: u64, off: u64, len: u32| libc::xdp_desc { addr: addr | (off << 48), len, options: 0 };
            assert_eq!(u.received_index(&desc(u.fill_addr(i), 256, 64)), Some(i));
            assert_eq!(u.received_index(&desc(u.fill_addr(i), 256, 2048)), Some(i), "a full data room");
            assert_eq!(u.received_index(&desc(u.fill_addr(i), 256, 2049)), None, "past the data room");
            assert_eq!(u.received_index(&desc(u.fill_addr(i), 0, 64)), None, "not where the data starts");
            assert_eq!(u.received_index(&desc(u.fill_addr(i), 320, 64)), None, "not where the data starts");
            assert_eq!(u.received_index(&desc(u.fill_addr(i) + 64, 192, 64)), None, "inside the buffer");
            assert_eq!(u.index_of_fill(u64::MAX), None);
            assert_eq!(u.index_of_fill(u.fill_addr(63) + u64::from(u.stride)), None, "past the last buffer");
            cache.free_burst(&mut burst);
        }
    }

    #[test]
    fn a_received_buffer_gets_a_whole_new_header() {
        let p = pool(128, 2048);
        let u = PoolUmem::new(&p).unwrap().geo();
        let mut cache = p.cache();
        let mut q = cache.alloc().unwrap();
        q.meta_mut().set_ol_flags(0xff);
        q.copy_from(&[9; 100]).unwrap();
        let i = u.index(&q).unwrap();
        let _ = q.into_raw();
        // SAFETY: buffer `i` is ours (its only handle was just given up), 60 <= the data room.
        let r = unsafe { u.received(i, 60, &u.received_meta(3, 1)) };
        assert_eq!((r.len(), r.meta().ol_flags, r.headroom(), r.meta().port, r.meta().queue), (60, 0, 128, 3, 1));
        assert_eq!(r.data(), &[9; 60]);
        cache.free(r);
    }

    #[test]
    fn lent_buffers_are_drained_once_and_completions_come_in_order() {
        let mut l = Lent::new(8);
        l.slots()[3] = true;
        l.slots()[5] = true;
        assert_eq!(l.drain(), vec![3, 5]);
        assert_eq!(l.drain(), Vec::<u32>::new());

        let mut f = Posted::new(4);
        let post = |f: &mut Posted, batch: &[(u64, u32)]| {
            let mut stage = f.stage();
            for (k, &(a, h)) in batch.iter().enumerate() {
                stage.put(k, a, h);
            }
            f.commit(batch.len());
        };
        // Header offsets of real buffers, lent out of the pool by hand; the cache counts what comes back.
        let p = pool(128, 2048);
        let g = PoolUmem::new(&p).unwrap().geo();
        let mut cache = p.cache();
        let mut held = Burst::new();
        assert!(cache.alloc_bulk(&mut held, 9));
        let hdr: Vec<u32> = held.as_slice().iter().map(|q| g.locate(q).unwrap().0).collect();
        held.drain_front(9);
        let mut complete = |f: &mut Posted, addrs: &[u64]| {
            let before = cache.len() + p.available();
            let lost = f.complete(addrs.len() as u32, |i| addrs[i as usize], &g, &mut cache);
            (cache.len() + p.available() - before, lost)
        };
        post(&mut f, &[(10, hdr[1]), (20, hdr[2]), (30, hdr[3]), (40, hdr[4])]);
        assert_eq!(f.room(), 0);
        assert_eq!(complete(&mut f, &[10]), (1, 0));
        assert_eq!(complete(&mut f, &[99]), (0, 0), "posted at no such address");
        assert_eq!(f.len, 3);
        assert_eq!(complete(&mut f, &[40]), (1, 2), "out of order: 20 and 30 were skipped, never reused");
        assert_eq!(complete(&mut f, &[20]), (0, 0), "gone");
        post(&mut f, &[(50, hdr[5]), (60, hdr[6]), (70, hdr[7])]);
        assert_eq!(complete(&mut f, &[50, 60]), (2, 0));
        assert_eq!(complete(&mut f, &[]), (0, 0));
        post(&mut f, &[(80, hdr[8])]);
        assert_eq!(f.drain(), vec![hdr[7], hdr[8]]);
        assert_eq!(complete(&mut f, &[70]), (0, 0));
    }
}
