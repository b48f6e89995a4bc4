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
use crate::mbuf::{Header, Meta, Pkt, Pool, PoolCache, MAX_BURST, META_FIELDS, META_SIZE};
use std::ptr::NonNull;
use std::sync::Arc;

/// The pool seen as one UMEM.
pub(super) struct PoolUmem {
    pool: Arc<Pool>,
    geo: Geometry,
    /// The metadata of an empty buffer.
    empty: Meta,
}

/// Where the pool's buffers are: what the per-packet loops read (each a function of its own, so
/// that these stay in registers there).
#[derive(Clone, Copy)]
pub(super) struct Geometry {
    base: NonNull<u8>,
    len: u32,
    /// A buffer's fill address (its data start less 256) is its header's offset plus this: every
    /// buffer has the same layout, so an address leads to its buffer without a division.
    lead: u32,
    /// The largest power of two within the stride, as a shift: two buffers' fill addresses are at
    /// least a stride apart, so `fill >> shift` tells buffers apart ([`Lent`]'s slot).
    shift: u32,
    data_room: u32,
}

// SAFETY: the pointer is the pool's region, which the `Arc<Pool>` keeps mapped; who may touch a
// buffer is governed by the ownership rule of the module docs, not by this value.
unsafe impl Send for Geometry {}
// SAFETY: as above: the value itself is read-only.
unsafe impl Sync for Geometry {}

impl PoolUmem {
    /// The pool as a UMEM, or why it cannot be one (in words for the config's user).
    pub(super) fn new(pool: &Arc<Pool>) -> Result<PoolUmem, String> {
        let l = pool.layout().ok_or("a pool shared with a plugin (direct packet access) cannot be a UMEM")?;
        let cfg = pool.config();
        let data_at = META_SIZE + usize::from(cfg.headroom);
        if data_at < XDP_HEADROOM {
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
        // A fill address (a header offset plus the lead) fits 32 bits too.
        let lead = u32::try_from(data_at - XDP_HEADROOM).ok().filter(|lead| len.checked_add(*lead).is_some());
        let lead = lead.ok_or_else(|| format!("the pool's region is {} B, too near 4 GiB", l.len))?;
        let geo = Geometry { base: l.base, len, lead, shift: stride.ilog2(), data_room: u32::from(cfg.data_room) };
        Ok(PoolUmem { pool: pool.clone(), geo, empty: l.empty })
    }

    /// The pool.
    pub(super) fn pool(&self) -> &Arc<Pool> {
        &self.pool
    }

    /// Whether the pool lies on explicit 2 MiB huge pages (physically contiguous within each).
    pub(super) fn on_huge_pages(&self) -> bool {
        self.pool.info().backing == crate::mbuf::Backing::HugePages
    }

    /// Where its buffers are (borrowed: a copy a burst is wasted work).
    #[inline(always)]
    pub(super) fn geo(&self) -> &Geometry {
        &self.geo
    }

    /// The metadata [`Geometry::received`] writes, but for the lengths: an empty buffer's,
    /// received on `port`'s `queue`.
    pub(super) fn received_meta(&self, port: u16, queue: u16) -> Meta {
        Meta { port, queue, ..self.empty }
    }
}

impl Geometry {
    /// Start and length of the region to register.
    pub(super) fn region(&self) -> (*mut u8, usize) {
        (self.base.as_ptr(), self.len as usize)
    }

    /// The longest frame a buffer holds.
    #[inline(always)]
    pub(super) fn data_room(&self) -> u32 {
        self.data_room
    }

    /// Bytes of a chunk: the kernel's headroom and the data room.
    pub(super) fn chunk(&self) -> usize {
        XDP_HEADROOM + self.data_room as usize
    }

    /// The buffer lent at fill address `fill`, back from the kernel with a frame of `len` bytes at
    /// its data start, as a packet: its header written anew, `meta` (from
    /// [`PoolUmem::received_meta`]) with the lengths.
    ///
    /// # Safety
    /// `fill` is the fill address of a buffer of the region that is the caller's: lent by its ring
    /// and returned by the kernel, no `Pkt` for it alive; `len` <= the data room.
    #[inline(always)]
    pub(super) unsafe fn received(&self, fill: u32, len: u32, meta: &Meta) -> Pkt {
        // The buffer's header is `lead` bytes before its fill address: the region's start less the
        // lead is loop-invariant, so this is one addition a packet.
        let hdr = self.base.as_ptr().wrapping_sub(self.lead as usize).wrapping_add(fill as usize).cast::<Header>();
        // SAFETY: the buffer is the caller's alone; its header is aligned (the pool's layout).
        // The template's field bytes only (a plain copy of the struct writes its padding too):
        // an untyped copy from a whole `Meta` into the header's first bytes, which then hold
        // every field of that `Meta`.
        unsafe {
            std::ptr::copy_nonoverlapping((meta as *const Meta).cast::<u8>(), hdr.cast::<u8>(), META_FIELDS);
            (*hdr).meta.data_len = len as u16;
            (*hdr).meta.pkt_len = len;
        }
        // SAFETY: an initialised header with `buf_len` bytes after it, data_off + len <= buf_len
        // (headroom + data room), the only handle.
        unsafe { Pkt::from_raw(NonNull::new_unchecked(hdr)) }
    }

    /// The header offset and the UMEM address of the data of `p`, when `p` is this pool's (its
    /// header lies in the region: another pool's buffers lie in other mappings).
    #[inline(always)]
    pub(super) fn locate(&self, p: &Pkt) -> Option<(u32, u64)> {
        let hdr = self.header(p)?;
        Some((hdr, u64::from(hdr) + (META_SIZE + usize::from(p.meta().data_off)) as u64))
    }

    /// The header offset of `p`, when `p` is this pool's.
    #[inline(always)]
    pub(super) fn header(&self, p: &Pkt) -> Option<u32> {
        let hdr = (p.meta_ptr() as usize).wrapping_sub(self.base.as_ptr() as usize);
        (hdr < self.len as usize).then_some(hdr as u32)
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

/// A FIFO entry: the address a packet was posted at (from [`Geometry::locate`]: inside the
/// region, which `PoolUmem::new` keeps under 4 GiB, so 32 bits) and its buffer's header offset, in
/// one word.
#[inline(always)]
pub(super) fn pack(addr: u64, hdr: u32) -> u64 {
    addr << 32 | u64::from(hdr)
}

/// The address and the header offset of an entry.
#[inline(always)]
fn unpack(e: u64) -> (u64, u32) {
    (e >> 32, e as u32)
}

/// Frees to `cache` the buffers of the FIFO entries `fifo` (at most a burst) whose addresses are
/// `addrs`, in order, up to the first that is not: how many.
///
/// A function of its own, over slices, with nothing live in its loop but what the loop uses, so
/// that all of that stays in registers.
#[inline(never)]
fn free_in_order(addrs: &[u64], fifo: &[u64], g: &Geometry, cache: &mut PoolCache) -> usize {
    let n = addrs.len().min(fifo.len()).min(MAX_BURST);
    let (addrs, fifo) = (&addrs[..n], &fifo[..n]);
    cache.free_each(fifo, |k, &e| {
        let (posted_at, hdr) = unpack(e);
        // SAFETY: `k` is the index of `e` in `fifo` (`free_each`'s contract), which is as long as
        // `addrs`.
        let addr = unsafe { *addrs.get_unchecked(k) };
        // SAFETY: a buffer this queue posted, completed by the kernel at the address it was posted
        // at: ours again, and leaving the FIFO (the caller moves its head past it).
        (posted_at == addr).then(|| unsafe { g.at_header(hdr) })
    })
}

/// The address an RX descriptor carries for a frame the kernel put in the buffer lent at fill
/// address `fill` (unaligned chunks: the chunk's address, and the frame's offset in it in the top
/// bits).
#[inline(always)]
fn returned_addr(fill: u32) -> u64 {
    u64::from(fill) | (XDP_HEADROOM as u64) << libc::XSK_UNALIGNED_BUF_OFFSET_SHIFT
}

/// Which buffers one queue's fill ring has lent to the kernel: for each, in the slot its fill
/// address shifted right by [`Geometry::shift`] names (no two buffers share one; the table's size
/// a power of two, the index masked), the address its RX descriptor must carry; 0 (which no such
/// address is: its offset bits are set) where nothing is lent. Checking a descriptor is one load
/// and one comparison: no division, and an address that is not exactly a lent buffer's, with its
/// frame where that buffer's data starts, matches none. Its memory: 8 bytes per power of two
/// within the stride, rounded up to a power of two, i.e. at most 32 bytes per buffer of the pool
/// for each RX queue (256 KiB for a 39 MB pool of 2304-byte buffers).
pub(super) struct Lent {
    slots: Box<[u64]>,
    shift: u32,
    lead: u32,
}

impl Lent {
    pub(super) fn new(g: &Geometry) -> Lent {
        // Fill addresses lie below the region's length plus the lead (within 32 bits: `PoolUmem::new`).
        let size = (((g.len + g.lead) >> g.shift) as usize + 1).next_power_of_two();
        Lent { slots: vec![0; size].into(), shift: g.shift, lead: g.lead }
    }

    /// The table for a loop: its fields copied out, so that they stay in registers while slots
    /// are written.
    #[inline(always)]
    pub(super) fn slots(&mut self) -> LentSlots<'_> {
        let mask = self.slots.len() - 1;
        LentSlots { slots: &mut self.slots, mask, shift: self.shift, lead: self.lead }
    }

    /// The header offsets of the buffers still lent, unmarked.
    pub(super) fn drain(&mut self) -> Vec<u32> {
        let lead = self.lead;
        let out = self.slots.iter().filter(|&&a| a != 0).map(|&a| (a as u32).wrapping_sub(lead)).collect();
        self.slots.iter_mut().for_each(|a| *a = 0);
        out
    }
}

/// [`Lent`]'s table, borrowed for a loop.
pub(super) struct LentSlots<'a> {
    slots: &'a mut [u64],
    /// The table's length less one (a power of two less one).
    mask: usize,
    shift: u32,
    lead: u32,
}

impl LentSlots<'_> {
    /// The slot of the buffer lent at fill address `fill`.
    #[inline(always)]
    fn slot(&mut self, fill: u32) -> &mut u64 {
        let i = (fill >> self.shift) as usize & self.mask;
        // SAFETY: masked by the length less one (a power of two: `Lent::new`), so in bounds.
        unsafe { self.slots.get_unchecked_mut(i) }
    }

    /// Marks the buffer whose header is at `hdr` (a header offset from [`Geometry::header`], so
    /// within the region) lent: its fill address.
    #[inline(always)]
    pub(super) fn lend(&mut self, hdr: u32) -> u64 {
        // No overflow: the region and a lead fit 32 bits (`PoolUmem::new`).
        let fill = hdr.wrapping_add(self.lead);
        *self.slot(fill) = returned_addr(fill);
        u64::from(fill)
    }

    /// Takes back the buffer an RX descriptor's `addr` names, if this queue lent it and the frame
    /// lies where its data starts: its fill address (no longer marked).
    #[inline(always)]
    pub(super) fn take(&mut self, addr: u64) -> Option<u32> {
        // An address that is no lent buffer's finds a slot that holds another value (or 0).
        let fill = addr as u32;
        let slot = self.slot(fill);
        if *slot != addr {
            return None;
        }
        *slot = 0;
        Some(fill)
    }
}

/// The packets one queue posted on its TX ring and the kernel has not completed, in posting
/// order: the address each was posted at and its buffer (header offset in the region). A shadow of
/// the TX ring: the packet posted at ring index `r` is entry `r` (masked; as many entries as the
/// ring has slots), the oldest not completed at index `head`, the newest before the ring's
/// producer index (`tail`, given by the caller: the ring keeps it). So a packet is put in the ring
/// and in this FIFO at one index, and the two cannot disagree on where the FIFO ends.
pub(super) struct Posted {
    entries: Box<[u64]>,
    mask: u32,
    head: u32,
}

impl Posted {
    /// The shadow of a TX ring of `size` slots (a power of two, as the kernel's rings are).
    pub(super) fn new(size: u32) -> Posted {
        let size = size.max(1).next_power_of_two();
        Posted { entries: vec![0; size as usize].into(), mask: size - 1, head: 0 }
    }

    /// How many are posted and not completed, with the ring's producer index at `tail`. (The ring
    /// holds at most its size: more would be a broken caller, and reads as none.)
    #[inline(always)]
    fn len(&self, tail: u32) -> u32 {
        let len = tail.wrapping_sub(self.head);
        if len > self.mask + 1 {
            0
        } else {
            len
        }
    }

    /// Room for more, with the ring's producer index at `tail`.
    #[inline(always)]
    pub(super) fn room(&self, tail: u32) -> u32 {
        self.mask + 1 - self.len(tail)
    }

    /// The entries of the first `n` packets posted from ring index `tail` on (`n` <= room), as
    /// the run up to the end and the run from the start, split where the ring's free slots are
    /// ([`super::ring::Ring::free_runs`]: the same size).
    #[inline(always)]
    pub(super) fn stage_runs(&mut self, tail: u32, n: u32) -> (&mut [u64], &mut [u64]) {
        let at = (tail & self.mask) as usize;
        let n = n.min(self.room(tail)) as usize;
        let first = n.min(self.entries.len() - at);
        let (front, back) = self.entries.split_at_mut(at);
        (&mut back[..first], &mut front[..n - first])
    }

    /// The buffers completed at `addrs` (a run of the completion ring), in order, freed to
    /// `cache`; the ring's producer index is at `tail`. The kernel completes in posting order, so
    /// each is the oldest; were one not (a descriptor the kernel skipped without completing it),
    /// the buffers posted before the match leave the FIFO unreused (counted in the result) rather
    /// than be freed while the kernel might still read them, and an address posted for nothing is
    /// ignored.
    #[inline(always)]
    pub(super) fn complete(&mut self, addrs: &[u64], tail: u32, g: &Geometry, cache: &mut PoolCache) -> u32 {
        // The usual case: each completion is the FIFO's next entry. One pass checks and frees
        // them (in runs of at most a burst) up to the first that is not, and never past the
        // entries posted (a stale entry beyond them could match an address again).
        let in_order = &addrs[..addrs.len().min(self.len(tail) as usize)];
        let mut done = 0;
        while done < in_order.len() {
            // Up to the FIFO's end (it wraps where the ring does), at most a burst.
            let at = (self.head.wrapping_add(done as u32) & self.mask) as usize;
            let fifo = &self.entries[at..];
            let run = &in_order[done..];
            let m = run.len().min(fifo.len()).min(MAX_BURST);
            let freed = free_in_order(&run[..m], &fifo[..m], g, cache);
            done += freed;
            if freed < m {
                break;
            }
        }
        self.head = self.head.wrapping_add(done as u32);
        let mut lost = 0;
        for &addr in &addrs[done..] {
            if let Ok(hdr) = self.complete_out_of_order(addr, tail, &mut lost) {
                // SAFETY: a buffer this queue posted, completed by the kernel at the address it
                // was posted at: ours again, and out of the FIFO.
                cache.free(unsafe { g.at_header(hdr) });
            }
        }
        lost
    }

    /// The `i`-th packet of the FIFO (from `head`): its address and header offset.
    #[inline(always)]
    fn nth(&self, i: u32) -> (u64, u32) {
        unpack(self.entries[(self.head.wrapping_add(i) & self.mask) as usize])
    }

    /// One completion, wherever its address is in the FIFO.
    #[cold]
    fn complete_out_of_order(&mut self, addr: u64, tail: u32, lost: &mut u32) -> Result<u32, ()> {
        let at = (0..self.len(tail)).find(|&k| self.nth(k).0 == addr).ok_or(())?;
        let hdr = self.nth(at).1;
        *lost += at;
        self.head = self.head.wrapping_add(at + 1);
        Ok(hdr)
    }

    /// Every buffer still posted (the ring's producer index at `tail`), emptied.
    pub(super) fn drain(&mut self, tail: u32) -> Vec<u32> {
        let out = (0..self.len(tail)).map(|k| self.nth(k).1).collect();
        self.head = tail;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mbuf::{Burst, PoolConfig};

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

    /// An RX descriptor's address: the fill address with the frame's offset in its top 16 bits.
    fn rx_addr(fill: u64, off: u64) -> u64 {
        fill | (off << 48)
    }

    #[test]
    fn fill_addresses_put_the_kernels_frame_at_each_buffers_data_start() {
        for (headroom, data_room) in [(128u16, 2048u16), (200, 2048), (256, 2048), (128, 1800), (128, 3840)] {
            let p = pool(headroom, data_room);
            let umem = PoolUmem::new(&p).unwrap();
            let u = umem.geo();
            let (mut lent_table, mut other_table) = (Lent::new(u), Lent::new(u));
            let (mut lent, mut other) = (lent_table.slots(), other_table.slots());
            let mut cache = p.cache();
            let mut burst = Burst::new();
            assert!(cache.alloc_bulk(&mut burst, 48));
            let (base, len) = u.region();
            let mut fills = Vec::new();
            for pkt in burst.iter() {
                let hdr = u.header(pkt).unwrap();
                let fill = lent.lend(hdr);
                // The kernel writes the frame XDP_HEADROOM after the fill address: the data start.
                assert_eq!(base as u64 + fill + XDP_HEADROOM as u64, pkt.data_ptr() as u64);
                assert_eq!(u.locate(pkt), Some((hdr, fill + XDP_HEADROOM as u64)));
                fills.push((fill, hdr));
            }
            for &(fill, _) in &fills {
                // Any other address near it, or the frame anywhere but where the data starts, is
                // no lent buffer's; nor is it another queue's.
                for off in [1u64, 64, 128, 255, 256, 2048] {
                    assert_eq!(lent.take(rx_addr(fill + off, 256)), None, "fill + {off}");
                    assert_eq!(lent.take(rx_addr(fill.wrapping_sub(off), 256)), None, "fill - {off}");
                }
                for off in [0u64, 255, 257, 320, 0xffff] {
                    assert_eq!(lent.take(rx_addr(fill, off)), None, "offset {off}");
                }
                assert_eq!(lent.take(rx_addr(fill, 256) | 1 << 40), None, "bits above the region");
                assert_eq!(other.take(rx_addr(fill, 256)), None, "lent by another queue");
            }
            assert_eq!(lent.take(u64::MAX), None);
            assert_eq!(lent.take(rx_addr(len as u64, 256)), None, "past the region");
            // Each buffer comes back once, at its own fill address: no two share a slot.
            for &(fill, hdr) in &fills {
                assert_eq!(fill - u64::from(hdr), u64::from(u.lead));
                assert_eq!(lent.take(rx_addr(fill, 256)), Some(fill as u32));
                assert_eq!(lent.take(rx_addr(fill, 256)), None, "taken back already");
            }
            assert_eq!(lent_table.drain(), Vec::<u32>::new());
            cache.free_burst(&mut burst);
        }
    }

    #[test]
    fn a_received_buffer_gets_a_whole_new_header() {
        let p = pool(128, 2048);
        let umem = PoolUmem::new(&p).unwrap();
        let u = umem.geo();
        let mut cache = p.cache();
        let mut q = cache.alloc().unwrap();
        q.meta_mut().set_ol_flags(0xff);
        q.copy_from(&[9; 100]).unwrap();
        let fill = u.header(&q).unwrap() + u.lead;
        let _ = q.into_raw();
        // SAFETY: the buffer lent at `fill` is ours (its only handle was just given up), 60 <= the
        // data room.
        let r = unsafe { u.received(fill, 60, &umem.received_meta(3, 1)) };
        assert_eq!((r.len(), r.meta().ol_flags, r.headroom(), r.meta().port, r.meta().queue), (60, 0, 128, 3, 1));
        assert_eq!(r.data(), &[9; 60]);
        cache.free(r);
    }

    #[test]
    fn lent_buffers_are_drained_once_and_completions_come_in_order() {
        let p = pool(128, 2048);
        let umem = PoolUmem::new(&p).unwrap();
        let g = umem.geo();
        let mut cache = p.cache();
        let mut l = Lent::new(g);
        let (a, b) = (cache.alloc().unwrap(), cache.alloc().unwrap());
        let (ha, hb) = (g.header(&a).unwrap(), g.header(&b).unwrap());
        l.slots().lend(ha);
        l.slots().lend(hb);
        let mut drained = l.drain();
        drained.sort();
        assert_eq!(drained, {
            let mut v = vec![ha, hb];
            v.sort();
            v
        });
        assert_eq!(l.drain(), Vec::<u32>::new());
        cache.free(a);
        cache.free(b);

        // A FIFO shadowing a ring of 4 slots; `tail` plays the ring's producer index.
        let mut f = Posted::new(4);
        let mut tail = 0u32;
        let post = |f: &mut Posted, tail: &mut u32, batch: &[(u64, u32)]| {
            let (end, start) = f.stage_runs(*tail, batch.len() as u32);
            assert_eq!(end.len() + start.len(), batch.len());
            // The runs split where a ring of 4 would: at its end.
            assert_eq!(end.len(), batch.len().min(4 - (*tail % 4) as usize));
            for (e, &(a, h)) in end.iter_mut().chain(start.iter_mut()).zip(batch) {
                *e = pack(a, h);
            }
            *tail += batch.len() as u32;
        };
        // Header offsets of real buffers, lent out of the pool by hand; the cache counts what comes back.
        let mut held = Burst::new();
        assert!(cache.alloc_bulk(&mut held, 12));
        let hdr: Vec<u32> = held.as_slice().iter().map(|q| g.locate(q).unwrap().0).collect();
        held.drain_front(12);
        let mut complete = |f: &mut Posted, tail: u32, addrs: &[u64]| {
            let before = cache.len() + p.available();
            let lost = f.complete(addrs, tail, g, &mut cache);
            (cache.len() + p.available() - before, lost)
        };
        post(&mut f, &mut tail, &[(10, hdr[1]), (20, hdr[2]), (30, hdr[3]), (40, hdr[4])]);
        assert_eq!(f.room(tail), 0);
        assert_eq!(complete(&mut f, tail, &[10]), (1, 0));
        assert_eq!(complete(&mut f, tail, &[99]), (0, 0), "posted at no such address");
        assert_eq!(f.len(tail), 3);
        assert_eq!(complete(&mut f, tail, &[40]), (1, 2), "out of order: 20 and 30 were skipped, never reused");
        assert_eq!(complete(&mut f, tail, &[20]), (0, 0), "gone");
        // Wrapping around the ring's end.
        post(&mut f, &mut tail, &[(50, hdr[5]), (60, hdr[6]), (70, hdr[7])]);
        assert_eq!(complete(&mut f, tail, &[50, 60]), (2, 0));
        assert_eq!(complete(&mut f, tail, &[]), (0, 0));
        post(&mut f, &mut tail, &[(80, hdr[8])]);
        assert_eq!(f.drain(tail), vec![hdr[7], hdr[8]]);
        assert_eq!(complete(&mut f, tail, &[70]), (0, 0));
        // In order up to one the kernel skipped, then the rest found further on.
        post(&mut f, &mut tail, &[(90, hdr[9]), (91, hdr[10]), (92, hdr[11])]);
        assert_eq!(complete(&mut f, tail, &[90, 92]), (2, 1));
        // Entries past those posted are stale: an address among them frees nothing.
        assert_eq!(complete(&mut f, tail, &[90, 91, 92]), (0, 0));
        assert_eq!(f.len(tail), 0);
        // A producer index more than a ring ahead (a broken caller) reads as nothing posted.
        assert_eq!((f.len(tail + 5), f.room(tail + 5)), (0, 4));
    }
}
