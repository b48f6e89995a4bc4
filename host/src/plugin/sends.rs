//! The packets a call sends to other ports, gathered into one batch per port and pushed to the
//! ports' inject queues once the call's requests are carried out: one queue push per port and
//! burst instead of one per packet ([`crate::ports::Inject`]).

use crate::mbuf::{Pkt, PoolCache};
use crate::ports::{Inject, InjectBatch};
use std::sync::Arc;

/// Open batches, by port modulo this. A call that sends to more ports than this at once, with
/// ports that collide, pushes smaller batches; nothing is lost.
const WAYS: usize = 8;
const _: () = assert!(WAYS <= u8::BITS as usize, "`Sends::open` has a bit per way");

/// A batch being gathered, and the port it is for.
#[derive(Debug, Default)]
struct Way {
    port: u16,
    batch: InjectBatch,
}

/// One open batch per way (kept between calls, empty, so that no burst allocates), and the counts
/// since the last [`Sends::flush`].
#[derive(Debug, Default)]
pub(crate) struct Sends {
    ways: [Way; WAYS],
    /// The ways whose batch may hold packets (bit `k`: `ways[k]`), so that a flush after a call that
    /// sent nothing, or to one port, visits no other way.
    open: u8,
    counts: Sent,
}

/// Packets pushed to inject queues, and refused by full ones (freed: `tx_full`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sent {
    pub out: u64,
    pub refused: u64,
}

impl Sends {
    /// Adds `pkt` to the batch for `port`, first pushing the batch its way holds when that one is
    /// full or for another port.
    #[inline]
    pub fn add(&mut self, port: u16, pkt: Pkt, injects: &[Option<Arc<Inject>>], cache: &mut PoolCache) {
        let k = usize::from(port) % WAYS;
        let way = &mut self.ways[k];
        if way.port != port || way.batch.is_full() {
            push(way, injects, cache, &mut self.counts);
            way.port = port;
        }
        way.batch.push(pkt);
        self.open |= 1 << k;
    }

    /// Pushes every open batch; what was sent since the last flush. A full queue takes none of a
    /// batch: its packets are freed.
    #[inline]
    pub fn flush(&mut self, injects: &[Option<Arc<Inject>>], cache: &mut PoolCache) -> Sent {
        let mut open = std::mem::take(&mut self.open);
        while open != 0 {
            let k = open.trailing_zeros() as usize;
            open &= open - 1;
            push(&mut self.ways[k], injects, cache, &mut self.counts);
        }
        std::mem::take(&mut self.counts)
    }
}

/// Pushes the way's batch, if it holds packets, leaving it empty.
#[inline]
fn push(way: &mut Way, injects: &[Option<Arc<Inject>>], cache: &mut PoolCache, counts: &mut Sent) {
    if way.batch.is_empty() {
        return;
    }
    let batch = std::mem::take(&mut way.batch);
    let n = batch.len() as u64;
    // The port was checked to have a queue when the send was asked for.
    let refused = match injects.get(usize::from(way.port)).and_then(Option::as_ref) {
        Some(q) => q.push(batch).err(),
        None => Some(batch),
    };
    match refused {
        None => counts.out += n,
        Some(batch) => {
            counts.refused += n;
            batch.into_iter().for_each(|p| cache.free(p));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mbuf::{Pool, PoolConfig};

    fn firsts(q: &Inject, cache: &mut PoolCache) -> Vec<Vec<u8>> {
        std::iter::from_fn(|| q.pop())
            .map(|b| {
                let bytes = b.iter().map(|p| p.data()[0]).collect();
                b.into_iter().for_each(|p| cache.free(p));
                bytes
            })
            .collect()
    }

    #[test]
    fn sends_go_in_one_batch_per_port_in_order_and_a_full_queue_is_counted() {
        let pool = Pool::new(PoolConfig { size: 256, cache_size: 0, ..Default::default() }).expect("a pool");
        let mut cache = pool.cache();
        // Port 1: room for one batch; port 9 shares its way (9 % 8 == 1); port 2 has no queue.
        let (q1, q9) = (Arc::new(Inject::new(1)), Arc::new(Inject::new(4)));
        let mut injects: Vec<Option<Arc<Inject>>> = vec![None; 10];
        injects[1] = Some(q1.clone());
        injects[9] = Some(q9.clone());
        let mut sends = Sends::default();
        let send = |sends: &mut Sends, cache: &mut PoolCache, port: u16, byte: u8| {
            let mut p = cache.alloc().expect("a buffer");
            p.copy_from(&[byte]).expect("one byte");
            sends.add(port, p, &injects, cache);
        };
        for (port, byte) in [(1, 10), (1, 11), (9, 12), (9, 13), (1, 14)] {
            send(&mut sends, &mut cache, port, byte);
        }
        // [10, 11] went when 9 took the way, [12, 13] when 1 took it back; [14] finds q1 full.
        send(&mut sends, &mut cache, 2, 15);
        let sent = sends.flush(&injects, &mut cache);
        assert_eq!(sent, Sent { out: 4, refused: 2 }, "14 (q1 full) and 15 (no queue) refused");
        assert_eq!(firsts(&q1, &mut cache), [vec![10, 11]]);
        assert_eq!(firsts(&q9, &mut cache), [vec![12, 13]]);
        // A way's batch is pushed when full, and the next one starts.
        for b in 0..40 {
            send(&mut sends, &mut cache, 9, b);
        }
        assert_eq!(sends.flush(&injects, &mut cache), Sent { out: 40, refused: 0 });
        let got = firsts(&q9, &mut cache);
        assert_eq!(got.iter().map(Vec::len).collect::<Vec<_>>(), [32, 8]);
        assert_eq!(got.concat(), (0..40).collect::<Vec<u8>>());
        drop(cache);
        assert_eq!(pool.available(), pool.capacity(), "buffers leaked");
    }
}
