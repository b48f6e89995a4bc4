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

    /// Hands up to `n` (at most [`super::MAX_BURST`]) buffers as they were freed, metadata not
    /// reset, to `f`, which keeps the first of them it returns the number of: for a driver that
    /// lends them to the kernel and rewrites the metadata when they come back (af_xdp's fill
    /// ring). Fewer when the pool runs dry. The buffers kept leave the cache as handles given up
    /// (a `Pkt` has no drop): the driver takes them back by address.
    #[inline(always)]
    pub(crate) fn lend_bulk(&mut self, n: usize, f: impl FnOnce(&[Pkt]) -> usize) -> usize {
        let n = n.min(super::MAX_BURST);
        if self.objs.len() < n {
            let want = self.size + n - self.objs.len();
            self.pool.get_bulk(&mut self.objs, want);
        }
        let from = self.objs.len().saturating_sub(n);
        let kept = f(&self.objs[from..]).min(self.objs.len() - from);
        if from + kept == self.objs.len() {
            self.objs.truncate(from);
        } else {
            self.objs.drain(from..from + kept);
        }
        kept
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

    /// Returns the buffers `f` gives for each of `items` (at most [`super::MAX_BURST`] of them)
    /// with its index, in order, stopping at the first `None`: how many. One pass for a driver
    /// that checks each buffer as it hands it back (af_xdp's completions), with one capacity check
    /// for all of them.
    #[inline(always)]
    pub(crate) fn free_each<T>(&mut self, items: &[T], mut f: impl FnMut(usize, &T) -> Option<Pkt>) -> usize {
        let items = &items[..items.len().min(super::MAX_BURST)];
        // Never allocates: the capacity is flush_at + MAX_BURST + 1 and the length under flush_at.
        self.objs.reserve(items.len());
        let len = self.objs.len();
        let mut k = 0;
        // SAFETY: room for `items.len()` after `len` (reserved); each slot is written once before
        // the length covers it (a panic in `f` leaves the length at `len`: buffers leaked, none
        // read twice).
        unsafe {
            let dst = self.objs.as_mut_ptr().add(len);
            for item in items {
                let Some(p) = f(k, item) else { break };
                dst.add(k).write(p);
                k += 1;
            }
            self.objs.set_len(len + k);
        }
        if self.objs.len() >= self.flush_at {
            self.flush_to(self.size);
        }
        k
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

#[cfg(test)]
mod tests {
    use crate::mbuf::{Pool, PoolConfig};

    #[test]
    fn lend_bulk_keeps_what_the_driver_took_and_the_rest_stay_cached() {
        let pool = Pool::new(PoolConfig { size: 64, cache_size: 16, ..Default::default() }).unwrap();
        let mut cache = pool.cache();
        let all = pool.available();
        // All 8 taken: they leave the cache (and the pool) until given back by address.
        let mut seen = Vec::new();
        assert_eq!(
            cache.lend_bulk(8, |b| {
                seen.extend(b.iter().map(|p| p.meta_ptr() as usize));
                b.len()
            }),
            8
        );
        assert_eq!(cache.len() + pool.available(), all - 8);
        // 3 of 8 kept: the other 5 stay in the cache, none handed out twice.
        let before = cache.len();
        assert_eq!(
            cache.lend_bulk(8, |b| {
                seen.extend(b[..3].iter().map(|p| p.meta_ptr() as usize));
                3
            }),
            3
        );
        assert_eq!(cache.len(), before - 3);
        // A driver that claims more than it was given keeps no more than that.
        assert_eq!(cache.lend_bulk(2, |_| 100), 2);
        let mut rest = crate::mbuf::Burst::new();
        while cache.alloc_bulk(&mut rest, 1) {
            assert!(!seen.contains(&(rest.as_slice().last().unwrap().meta_ptr() as usize)), "handed out again");
        }
        cache.free_burst(&mut rest);
    }

    #[test]
    fn free_each_returns_buffers_up_to_the_first_refused() {
        let pool = Pool::new(PoolConfig { size: 64, cache_size: 16, ..Default::default() }).unwrap();
        let mut cache = pool.cache();
        let mut held: Vec<_> = (0..6).map(|_| Some(cache.alloc().unwrap())).collect();
        let before = cache.len() + pool.available();
        let keys = [1, 2, 3, 0, 5, 6];
        // Stops at the 4th (key 0): three returned, the rest untouched.
        assert_eq!(cache.free_each(&keys, |k, &key| if key == 0 { None } else { held[k].take() }), 3);
        assert_eq!(cache.len() + pool.available(), before + 3);
        assert!(held[..3].iter().all(Option::is_none) && held[3..].iter().all(Option::is_some));
        for p in held.into_iter().flatten() {
            cache.free(p);
        }
        assert_eq!(cache.len() + pool.available(), pool.capacity());
    }
}
