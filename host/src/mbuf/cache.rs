//! Per-lcore cache in front of the shared pool, with bulk refill and flush.

use super::meta::Meta;
use super::pkt::Pkt;
use super::{Burst, Pool};
use std::sync::Arc;

/// A stack of free buffers owned by one lcore. Allocation pops from it (the most recently freed,
/// cache-hot buffers first); it refills from and flushes to the shared pool in bulk.
pub struct PoolCache {
    pool: Arc<Pool>,
    objs: Vec<Pkt>,
    size: usize,
    flush_at: usize,
    empty: Meta,
}

impl PoolCache {
    pub(super) fn new(pool: Arc<Pool>, size: usize, empty: Meta) -> PoolCache {
        let size = size.max(1);
        let flush_at = size + size / 2;
        PoolCache { pool, objs: Vec::with_capacity(flush_at + super::MAX_BURST + 1), size, flush_at, empty }
    }

    /// The pool behind this cache.
    pub fn pool(&self) -> &Arc<Pool> {
        &self.pool
    }

    /// Appends `n` fresh (reset, empty) buffers to `out`, or none at all when the pool cannot supply
    /// `n` (the caller counts that as `rx_nombuf`).
    ///
    /// Always inlined (every receive path calls it once a burst, and whether the compiler inlined
    /// it moved with unrelated code), the refill from the pool out of line.
    #[inline(always)]
    pub fn alloc_bulk(&mut self, out: &mut Burst, n: usize) -> bool {
        if self.objs.len() < n && !self.refill(n) {
            return false;
        }
        if out.len() + n > super::MAX_BURST {
            return false;
        }
        let empty = self.empty;
        out.take_tail(&mut self.objs, n, |p| Self::reset(&empty, p));
        true
    }

    /// Takes buffers from the pool until the cache holds `n` and its usual size; false when the
    /// pool could not supply `n`.
    #[cold]
    #[inline(never)]
    fn refill(&mut self, n: usize) -> bool {
        let want = self.size + n - self.objs.len();
        self.pool.get_bulk(&mut self.objs, want);
        self.objs.len() >= n
    }

    /// One fresh buffer, or `None` when the pool is empty.
    #[inline]
    pub fn alloc(&mut self) -> Option<Pkt> {
        if self.objs.is_empty() {
            self.pool.get_bulk(&mut self.objs, self.size);
        }
        let p = self.objs.pop()?;
        Some(Self::reset(&self.empty, p))
    }

    /// Up to `n` (at most [`super::MAX_BURST`]) buffers as they were freed, metadata not reset:
    /// for a driver that lends them to the kernel and rewrites the metadata when they come back
    /// (af_xdp's fill ring); fewer when the pool runs dry.
    #[inline]
    pub(crate) fn take_bulk(&mut self, n: usize) -> std::vec::Drain<'_, Pkt> {
        let n = n.min(super::MAX_BURST);
        if self.objs.len() < n {
            let want = self.size + n - self.objs.len();
            self.pool.get_bulk(&mut self.objs, want);
        }
        let from = self.objs.len().saturating_sub(n);
        self.objs.drain(from..)
    }

    #[inline(always)]
    fn reset(empty: &Meta, p: Pkt) -> Pkt {
        let hdr = p.into_raw();
        // SAFETY: we own the buffer (it came off the free list); writing the reset metadata keeps
        // buf_len and the invariant.
        unsafe { (*hdr.as_ptr()).meta = *empty };
        // SAFETY: same buffer, still uniquely owned.
        unsafe { Pkt::from_raw(hdr) }
    }

    /// `p` moved into a buffer of this cache's pool (its bytes after the pool's headroom, its
    /// metadata) and freed to `from`, the cache of its own pool: for packets crossing between a
    /// stream whose plugin maps its pool (direct packet access) and the rest of the dataplane. None
    /// when this pool has no buffer, or the bytes do not fit one (`p` is freed then too).
    pub fn adopt(&mut self, p: Pkt, from: &mut PoolCache) -> Option<Pkt> {
        let moved = self.alloc().and_then(|mut q| match q.copy_from(p.data()) {
            Ok(()) => {
                q.meta_mut().copy_from(p.meta());
                *q.flow_mut() = *p.flow();
                Some(q)
            }
            Err(_) => {
                self.free(q);
                None
            }
        });
        from.free(p);
        moved
    }

    /// Returns one buffer.
    #[inline]
    pub fn free(&mut self, p: Pkt) {
        self.objs.push(p);
        if self.objs.len() >= self.flush_at {
            self.flush_to(self.size);
        }
    }

    /// Returns up to [`super::MAX_BURST`] buffers at once (one capacity check for all of them).
    #[inline]
    pub(crate) fn free_bulk(&mut self, it: impl ExactSizeIterator<Item = Pkt>) {
        debug_assert!(it.len() <= super::MAX_BURST);
        self.objs.extend(it);
        if self.objs.len() >= self.flush_at {
            self.flush_to(self.size);
        }
    }

    /// Returns every buffer of `burst`, leaving it empty.
    #[inline]
    pub fn free_burst(&mut self, burst: &mut Burst) {
        self.free_from(burst, 0);
    }

    /// Returns the buffers of `burst` from index `from` on, leaving it `from` long.
    #[inline]
    pub fn free_from(&mut self, burst: &mut Burst, from: usize) {
        self.objs.extend(burst.drain_from(from));
        if self.objs.len() >= self.flush_at {
            self.flush_to(self.size);
        }
    }

    fn flush_to(&mut self, keep: usize) {
        while self.objs.len() > keep {
            let Some(p) = self.objs.pop() else { break };
            self.pool.put(p);
        }
    }

    /// Buffers currently held by this cache.
    pub fn len(&self) -> usize {
        self.objs.len()
    }

    /// True when the cache holds none.
    pub fn is_empty(&self) -> bool {
        self.objs.is_empty()
    }
}

impl Drop for PoolCache {
    fn drop(&mut self) {
        self.flush_to(0);
    }
}
