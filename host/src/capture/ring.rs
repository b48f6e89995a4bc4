//! The record ring between the workers and the capture's reader: a fixed set of slots, each
//! allocated once when the capture starts, handed back and forth through two lock-free queues
//! (`free` to the workers, `full` to the reader). A worker that finds no free slot counts an
//! overrun and goes on: it never waits and never allocates.

use crossbeam_queue::ArrayQueue;

/// One captured packet: its first bytes and what the pcapng block says about it.
pub struct Record {
    /// Nanoseconds since the Unix epoch (the burst's time).
    pub ts_ns: u64,
    /// The pcapng interface: 0 for RX, 1 for TX ([`super::Dir`]).
    pub interface: u32,
    /// The queue it came in on or went out by.
    pub queue: u16,
    /// Its length on the wire.
    pub orig_len: u32,
    /// Why it was dropped, if it was ([`crate::capture::Fate`]).
    pub fate: super::Fate,
    /// Its first bytes (at most the capture's snap length; the capacity is fixed at start).
    pub bytes: Vec<u8>,
}

/// The slots of one capture.
pub struct Ring {
    free: ArrayQueue<Box<Record>>,
    full: ArrayQueue<Box<Record>>,
}

impl Ring {
    /// `slots` records of `snaplen` bytes each, allocated now.
    pub fn new(slots: usize, snaplen: usize) -> Ring {
        let free = ArrayQueue::new(slots);
        for _ in 0..slots {
            let r = Record {
                ts_ns: 0,
                interface: 0,
                queue: 0,
                orig_len: 0,
                fate: super::Fate::Received,
                bytes: Vec::with_capacity(snaplen),
            };
            // Cannot fail: the queue has room for `slots`.
            let _ = free.push(Box::new(r));
        }
        Ring { free, full: ArrayQueue::new(slots) }
    }

    /// A slot to fill (a worker), None when every slot waits for the reader.
    #[inline]
    pub fn take(&self) -> Option<Box<Record>> {
        self.free.pop()
    }

    /// A filled slot to the reader. The slots are never more than both queues hold, so this
    /// cannot find `full` full; if it did, the slot goes back to `free` (the record is lost, never
    /// the slot).
    #[inline]
    pub fn publish(&self, r: Box<Record>) {
        if let Err(r) = self.full.push(r) {
            let _ = self.free.push(r);
        }
    }

    /// A slot taken and not filled after all, back to `free`.
    #[inline]
    pub fn give_back(&self, r: Box<Record>) {
        let _ = self.free.push(r);
    }

    /// The oldest filled slot (the reader).
    pub fn next(&self) -> Option<Box<Record>> {
        self.full.pop()
    }

    /// Slots waiting for the reader.
    pub fn waiting(&self) -> usize {
        self.full.len()
    }
}
