//! The shared pool: one region, a lock-free free list, a stride chosen against cache-set aliasing.

use super::meta::{FlowMeta, Meta, META_SIZE};
use super::pkt::{Header, Pkt};
use super::region::{Backing, Region};
use super::PoolCache;
use crossbeam_queue::ArrayQueue;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::sync::Arc;

const LINE: usize = 64;

/// Sizes of a pool, from the `pool:` section of the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolConfig {
    /// Number of buffers.
    pub size: usize,
    /// Bytes in front of the data, for prepending headers (VLAN tags).
    pub headroom: u16,
    /// Bytes of data a buffer can hold.
    pub data_room: u16,
    /// Buffers each lcore keeps in its cache.
    pub cache_size: usize,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig { size: 16384, headroom: 128, data_room: 2048, cache_size: 256 }
    }
}

/// What a pool is made of, for logs and stats.
#[derive(Debug, Clone, Copy)]
pub struct PoolInfo {
    /// Number of buffers.
    pub size: usize,
    /// Distance between two buffers in bytes.
    pub stride: usize,
    /// What memory backs the pool.
    pub backing: Backing,
}

/// A pool of fixed-size packet buffers shared by all lcores.
pub struct Pool {
    region: ManuallyDrop<Region>,
    free: ArrayQueue<Pkt>,
    cfg: PoolConfig,
    stride: usize,
    /// Whether the buffers are laid out as `super::shared` has it (in colours, after a metadata
    /// page each).
    shared: bool,
    /// The memfd of a shared pool (`super::shared`).
    memfd: Option<super::shared::Memfd>,
}

/// Element stride: whole cache lines, an odd number of them, so that consecutive buffers start on
/// different cache sets and 4 KiB offsets instead of all aliasing on a few (an even number of lines
/// shares a factor with the 64 lines of a 4 KiB page).
pub fn stride_for(headroom: u16, data_room: u16) -> usize {
    let bytes = META_SIZE + headroom as usize + data_room as usize;
    let lines = bytes.div_ceil(LINE);
    let lines = if lines.is_multiple_of(2) { lines + 1 } else { lines };
    lines * LINE
}

impl Pool {
    /// Allocates the region and puts every buffer on the free list.
    pub fn new(cfg: PoolConfig) -> std::io::Result<Arc<Pool>> {
        Self::check(&cfg, 0)?;
        let stride = stride_for(cfg.headroom, cfg.data_room);
        let region = Region::new(stride * cfg.size)?;
        Ok(Arc::new(Self::carve(region, cfg, stride, None)))
    }

    /// A pool in a memfd whose buffers keep their metadata on pages of their own, so that plugins
    /// with direct packet access can map the data pages (`super::shared`).
    #[cfg(all(target_os = "linux", not(miri)))]
    pub fn new_shared(cfg: PoolConfig) -> std::io::Result<Arc<Pool>> {
        use super::shared;
        Self::check(&cfg, shared::GAP_MAX)?;
        let stride = shared::stride(cfg.headroom, cfg.data_room);
        let (memfd, base) = shared::Memfd::create(stride * cfg.size)?;
        let region = Region::memfd(base, memfd.len());
        Ok(Arc::new(Self::carve(region, cfg, stride, Some(memfd))))
    }

    /// Checks the sizes, `lead` being the headroom the layout adds (a buffer's length is a `u16`).
    fn check(cfg: &PoolConfig, lead: u16) -> std::io::Result<()> {
        let invalid = |msg: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, msg.to_string());
        if cfg.size == 0 {
            return Err(invalid("pool size must be at least 1"));
        }
        if (cfg.data_room as usize) < 64 {
            return Err(invalid("pool data_room must be at least 64 bytes"));
        }
        if usize::from(cfg.headroom) + usize::from(lead) + usize::from(cfg.data_room) > usize::from(u16::MAX) {
            return Err(invalid(&format!(
                "pool headroom ({}) and data_room ({}) must add up to at most {} bytes",
                cfg.headroom,
                cfg.data_room,
                u16::MAX - lead
            )));
        }
        Ok(())
    }

    /// Writes every buffer's header into `region` and puts the buffer on the free list.
    fn carve(region: Region, cfg: PoolConfig, stride: usize, memfd: Option<super::shared::Memfd>) -> Pool {
        let free = ArrayQueue::new(cfg.size);
        let shared = memfd.is_some();
        let empty = Self::empty_of(&cfg, shared);
        for i in 0..cfg.size {
            let at = i * stride + if shared { super::shared::header_at(i) } else { 0 };
            // SAFETY: at + META_SIZE + buf_len <= (i + 1) * stride <= region length (the strides
            // count the colours' headroom); every header is in bounds and aligned to 64 (the region is page
            // aligned, the stride and the header's offset multiples of 64).
            let hdr = unsafe { region.base().as_ptr().add(at) }.cast::<Header>();
            // SAFETY: as above; the memory is ours and not yet shared.
            unsafe { hdr.write(Header { meta: empty, flow: FlowMeta::default() }) };
            // SAFETY: the header is initialised, buf_len bytes follow it inside the element, and this
            // is the only handle.
            let pkt = unsafe { Pkt::from_raw(NonNull::new_unchecked(hdr)) };
            if free.push(pkt).is_err() {
                unreachable!("free list sized for every buffer");
            }
        }
        Pool { region: ManuallyDrop::new(region), free, cfg, stride, shared, memfd }
    }

    /// A per-lcore cache in front of this pool.
    pub fn cache(self: &Arc<Self>) -> PoolCache {
        PoolCache::new(self.clone(), self.cfg.cache_size, self.empty_meta())
    }

    pub(crate) fn empty_meta(&self) -> Meta {
        Self::empty_of(&self.cfg, self.shared)
    }

    /// An empty buffer's metadata: the configured headroom, and in a shared pool the
    /// `super::shared::GAP_MAX` bytes its colours take on top (sizes checked by `check`).
    fn empty_of(cfg: &PoolConfig, shared: bool) -> Meta {
        let headroom = cfg.headroom + if shared { super::shared::GAP_MAX } else { 0 };
        Meta::empty(headroom + cfg.data_room, headroom)
    }

    /// Buffers on the shared free list (not counting those held in lcore caches).
    pub fn available(&self) -> usize {
        self.free.len()
    }

    /// Total number of buffers.
    pub fn capacity(&self) -> usize {
        self.cfg.size
    }

    /// Sizes of this pool.
    pub fn config(&self) -> PoolConfig {
        self.cfg
    }

    /// Layout facts for logs.
    pub fn info(&self) -> PoolInfo {
        PoolInfo { size: self.cfg.size, stride: self.stride, backing: self.region.backing() }
    }

    /// Moves up to `n` buffers from the free list to `out`; returns how many.
    pub(crate) fn get_bulk(&self, out: &mut Vec<Pkt>, n: usize) -> usize {
        let mut got = 0;
        while got < n {
            match self.free.pop() {
                Some(p) => out.push(p),
                None => break,
            }
            got += 1;
        }
        got
    }

    /// Returns a buffer to the free list.
    pub(crate) fn put(&self, p: Pkt) {
        debug_assert!(self.owns(&p), "buffer returned to a pool it does not belong to");
        if self.free.push(p).is_err() {
            unreachable!("free list holds every buffer of the pool");
        }
    }

    fn owns(&self, p: &Pkt) -> bool {
        let at = (p.meta_ptr() as usize).wrapping_sub(self.region.base().as_ptr() as usize);
        let i = at / self.stride;
        let hdr_off = if self.shared { super::shared::header_at(i) } else { 0 };
        at < self.region.len() && at == i * self.stride + hdr_off
    }

    /// Whether the buffer lies in this pool's region: an address test on the handle, without
    /// touching the buffer (a stream with its own pool makes it per packet received).
    #[inline(always)]
    pub fn holds(&self, p: &Pkt) -> bool {
        self.locator().header_at(p).is_some()
    }

    /// The region's bounds, copied out for loops that locate many packets.
    #[inline(always)]
    pub(crate) fn locator(&self) -> Locator {
        Locator { base: self.region.base().as_ptr() as usize, len: self.region.len() }
    }

    /// Bytes of the region.
    pub(crate) fn region_len(&self) -> usize {
        self.region.len()
    }

    /// Where the buffers lie, for a driver that lends them to the kernel (af_xdp's UMEM): `None` for
    /// a shared pool, whose buffers are not one header offset apart.
    pub(crate) fn layout(&self) -> Option<Layout> {
        (!self.shared).then(|| Layout {
            base: self.region.base(),
            len: self.region.len(),
            stride: self.stride,
            empty: self.empty_meta(),
        })
    }

    /// Maps an alias of a shared pool at `at` (inaccessible until opened with
    /// [`super::shared::protect`]). Fails for a pool that is not shared.
    ///
    /// # Safety
    /// As [`super::shared::Memfd::alias`]: the caller owns `[at, at + region_len())`.
    pub(crate) unsafe fn alias(&self, at: *mut u8) -> std::io::Result<()> {
        let Some(m) = &self.memfd else { return Err(std::io::Error::other("not a shared pool")) };
        // SAFETY: the caller's promise.
        unsafe { m.alias(at, self.stride) }
    }
}

/// An ordinary pool's buffers as addresses: buffer `i`'s header is `i * stride` bytes into the
/// region, its data `META_SIZE + data_off` bytes after the header.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    pub(crate) base: NonNull<u8>,
    pub(crate) len: usize,
    pub(crate) stride: usize,
    /// The metadata of an empty buffer (what allocation writes).
    pub(crate) empty: Meta,
}

/// Where a pool's region is: the one rule that tells whether a packet is the pool's and where its
/// bytes are in the region (and so in an alias of it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Locator {
    base: usize,
    len: usize,
}

impl Locator {
    /// Offset of the packet's header in the region, when the buffer is the pool's.
    #[inline(always)]
    pub(crate) fn header_at(&self, p: &Pkt) -> Option<usize> {
        let at = (p.meta_ptr() as usize).wrapping_sub(self.base);
        (at < self.len).then_some(at)
    }

    /// Where a packet of a shared pool is in an alias of the region (`super::shared`): the offset of
    /// its first data byte (`META_SIZE + data_off` past the header, as [`Pkt::data_ptr`] has it)
    /// and the headroom the alias shows in front of it. `None` when the buffer is not the pool's,
    /// or the packet starts in its buffer's gap, where the alias shows none of its bytes.
    #[inline(always)]
    pub(crate) fn in_alias(&self, p: &Pkt) -> Option<(usize, u16)> {
        let at = self.header_at(p)?;
        let data_off = p.meta().data_off;
        let headroom = super::shared::visible(at, data_off)?;
        Some((at + META_SIZE + usize::from(data_off), headroom))
    }

    /// [`Locator::in_alias`]'s offset alone (`None` in the same cases), where the headroom is not
    /// needed: the gap's rule tested as page numbers ([`super::shared::on_data_page`]), with no
    /// subtraction to make.
    #[inline(always)]
    pub(crate) fn data_in_alias(&self, p: &Pkt) -> Option<usize> {
        let at = self.header_at(p)?;
        let data = at + META_SIZE + usize::from(p.meta().data_off);
        super::shared::on_data_page(at, data).then_some(data)
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("info", &self.info()).finish()
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        if self.free.len() == self.cfg.size {
            // SAFETY: every buffer is back on the free list, so no Pkt points into the region.
            unsafe { ManuallyDrop::drop(&mut self.region) };
        } else {
            // Buffers are still out (a thread that panicked, say): keep the memory mapped rather than
            // leave them dangling.
            tracing::warn!(
                outstanding = self.cfg.size - self.free.len(),
                "pool dropped with buffers outstanding; memory kept"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mbuf::Burst;

    #[test]
    fn stride_is_an_odd_number_of_cache_lines_covering_the_element() {
        let s = stride_for(128, 2048);
        assert!(s >= META_SIZE + 128 + 2048);
        assert_eq!(s % 64, 0);
        assert_eq!((s / 64) % 2, 1);
    }

    #[test]
    fn consecutive_buffers_cover_every_4k_offset() {
        // With an odd number of lines, 64 consecutive buffers start at 64 distinct cache-line
        // offsets within a 4 KiB page (one per L1 set); an even stride of 36 lines gives 16.
        let offsets = |stride: usize| {
            let mut seen: Vec<usize> = (0..64).map(|i| (i * stride) % 4096).collect();
            seen.sort_unstable();
            seen.dedup();
            seen.len()
        };
        assert_eq!(offsets(stride_for(128, 2048)), 64);
        assert_eq!(offsets(36 * 64), 16);
    }

    #[test]
    fn sizes_a_buffer_length_cannot_hold_are_refused() {
        let cfg = PoolConfig { size: 4, headroom: 1024, data_room: 65000, ..Default::default() };
        let e = Pool::new(cfg).unwrap_err().to_string();
        assert!(e.contains("headroom (1024) and data_room (65000) must add up to at most 65535"), "{e}");
        let cfg = PoolConfig { size: 4, headroom: 1024, data_room: 64000, ..Default::default() };
        assert!(Pool::new(cfg).is_ok());
        #[cfg(all(target_os = "linux", not(miri)))]
        {
            let e = Pool::new_shared(cfg).unwrap_err().to_string();
            assert!(e.contains("at most 64575"), "{e}");
        }
    }

    #[test]
    fn every_buffer_comes_back_and_exhaustion_is_reported_not_panicked() {
        let pool = Pool::new(PoolConfig { size: 100, cache_size: 16, ..Default::default() }).unwrap();
        let mut cache = pool.cache();
        let mut burst = Burst::new();
        let mut held = Vec::new();
        while cache.alloc_bulk(&mut burst, 32) {
            held.push(std::mem::take(&mut burst));
        }
        assert_eq!(held.iter().map(|b| b.len()).sum::<usize>(), 96);
        assert!(cache.alloc_bulk(&mut burst, 4), "4 of the 100 are left");
        assert!(!cache.alloc_bulk(&mut burst, 1), "pool is empty");
        cache.free_burst(&mut burst);
        for mut b in held {
            cache.free_burst(&mut b);
        }
        drop(cache);
        assert_eq!(pool.available(), 100);
    }

    /// The hand-out loop (`Burst::take_tail`) appends after what the burst holds, never hands out a
    /// buffer twice, and leaves every buffer accounted for.
    #[test]
    fn bulk_allocation_appends_distinct_buffers() {
        let pool = Pool::new(PoolConfig { size: 64, cache_size: 16, ..Default::default() }).unwrap();
        let mut cache = pool.cache();
        let mut burst = Burst::new();
        assert!(cache.alloc_bulk(&mut burst, 3));
        burst.as_mut_slice()[0].copy_from(&[7; 20]).unwrap();
        let first: Vec<*const u8> = burst.as_slice().iter().map(|p| p.meta_ptr()).collect();
        for _ in 0..3 {
            assert!(cache.alloc_bulk(&mut burst, 9));
        }
        assert_eq!(burst.len(), 30);
        let all: Vec<*const u8> = burst.as_slice().iter().map(|p| p.meta_ptr()).collect();
        assert_eq!(&all[..3], &first[..], "the packets already there stay first");
        assert_eq!(burst.as_slice()[0].data(), &[7; 20], "and keep their bytes");
        let mut unique = all.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), 30, "no buffer handed out twice");
        cache.free_burst(&mut burst);
        drop(cache);
        assert_eq!(pool.available(), 64);
    }

    #[test]
    fn allocated_buffers_are_reset() {
        let pool = Pool::new(PoolConfig { size: 8, cache_size: 4, ..Default::default() }).unwrap();
        let mut cache = pool.cache();
        let mut burst = Burst::new();
        assert!(cache.alloc_bulk(&mut burst, 1));
        let mut p = burst.pop().unwrap();
        p.copy_from(&[1, 2, 3]).unwrap();
        p.meta_mut().set_ol_flags(7);
        cache.free(p);
        assert!(cache.alloc_bulk(&mut burst, 1));
        let p = burst.pop().unwrap();
        assert_eq!((p.len(), p.meta().ol_flags, p.headroom()), (0, 0, 128));
        cache.free(p);
    }
}
