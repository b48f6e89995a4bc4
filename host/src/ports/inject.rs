//! A port's inject queue: packets sent to the port by plugins of streams that do not transmit on it
//! (`send_to`, the `SEND` verdict), drained by the streams that do.
//!
//! It carries batches, not packets: what one burst sent to the port, up to [`BATCH`] packets, is
//! one push and one pop. crossbeam's `ArrayQueue` costs the same per push and per pop whatever the
//! element (callgrind: BENCHMARKS.md), which a queue of packets paid for every packet a load
//! balancer sends. Batches keep a sender's packets in their order, and the senders'
//! batches arrive in the order they were pushed.

use crate::mbuf::{Pkt, PoolCache};
use arrayvec::ArrayVec;
use crossbeam_queue::ArrayQueue;

/// Most packets in one batch.
pub const BATCH: usize = 32;

/// Batches a port's inject queue holds: between this many packets (every batch of one) and
/// `BATCH` times as many.
pub const SLOTS: usize = 512;

/// Packets of one burst for one port, in their order.
pub type Batch = ArrayVec<Pkt, BATCH>;

/// A bounded lock-free queue of [`Batch`]es, any number of senders and drainers.
#[derive(Debug)]
pub struct Inject {
    batches: ArrayQueue<Batch>,
}

impl Inject {
    /// A queue of `slots` batches (at least one).
    pub fn new(slots: usize) -> Inject {
        Inject { batches: ArrayQueue::new(slots.max(1)) }
    }

    /// Memory a queue of `slots` batches takes (for the config's footprint).
    pub const fn bytes(slots: usize) -> u64 {
        // Each slot: the batch and crossbeam's stamp word.
        (slots * (size_of::<Batch>() + size_of::<usize>())) as u64
    }

    /// Queues `batch`; when the queue is full, gives it back (by value, as crossbeam does: boxing
    /// it would allocate per batch on the hot path).
    #[allow(clippy::result_large_err)]
    #[inline]
    pub fn push(&self, batch: Batch) -> Result<(), Batch> {
        self.batches.push(batch)
    }

    /// The oldest batch, if any.
    #[inline]
    pub fn pop(&self) -> Option<Batch> {
        self.batches.pop()
    }

    /// Whether no batch is queued (a hint: senders may push at any time).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.batches.is_empty()
    }

    /// Frees every queued packet into `cache`; returns how many there were.
    pub fn drain(&self, cache: &mut PoolCache) -> u64 {
        let mut n = 0;
        while let Some(batch) = self.pop() {
            n += batch.len() as u64;
            batch.into_iter().for_each(|p| cache.free(p));
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mbuf::{Pool, PoolConfig};

    #[test]
    fn batches_arrive_whole_in_order_and_a_full_queue_gives_them_back() {
        let pool = Pool::new(PoolConfig { size: 64, cache_size: 0, ..Default::default() }).expect("a pool");
        let mut cache = pool.cache();
        let q = Inject::new(2);
        let mut batch = |first: u8, n: u8| -> Batch {
            (first..first + n)
                .map(|b| {
                    let mut p = cache.alloc().expect("a buffer");
                    p.copy_from(&[b]).expect("one byte");
                    p
                })
                .collect()
        };
        let (a, b, c, d) = (batch(0, 3), batch(3, 1), batch(4, 2), batch(6, 2));
        q.push(a).expect("room for the first");
        q.push(b).expect("room for the second");
        let refused = q.push(c).expect_err("two slots");
        assert_eq!(refused.iter().map(|p| p.data()[0]).collect::<Vec<_>>(), [4, 5]);
        refused.into_iter().for_each(|p| cache.free(p));
        let firsts: Vec<Vec<u8>> = std::iter::from_fn(|| q.pop())
            .map(|b| {
                let bytes = b.iter().map(|p| p.data()[0]).collect();
                b.into_iter().for_each(|p| cache.free(p));
                bytes
            })
            .collect();
        assert_eq!(firsts, [vec![0, 1, 2], vec![3]]);
        q.push(d).expect("room again");
        assert_eq!(q.drain(&mut cache), 2, "drained at stop: counted in flight");
        assert!(q.is_empty());
        drop(cache);
        assert_eq!(pool.available(), pool.capacity(), "buffers leaked");
    }
}
