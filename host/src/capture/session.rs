//! One capture: what it takes (port, directions, queue, filter, count, snap length), its slots,
//! and what it counted. Workers call [`Session::record`] with the bursts of the captured port;
//! the control socket's reader drains the slots into pcapng.

use super::{Filter, Record, Ring};
use crate::mbuf::Pkt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// What happened to a captured packet, as far as the capture point knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Received (RX: what the engine or policy does next is not known here).
    Received,
    /// Handed to the TX port.
    Sent,
    /// Handed to the TX port, which had no room for it after the TX retries: dropped and
    /// counted `tx_full`.
    TxFull,
}

impl Fate {
    /// The pcapng packet comment.
    pub fn comment(self, queue: u16) -> String {
        match self {
            Fate::Received => format!("rx queue {queue}"),
            Fate::Sent => format!("tx queue {queue}"),
            Fate::TxFull => format!("tx queue {queue}: dropped (tx_full: the queue had no room after the TX retries)"),
        }
    }
}

/// Receive or transmit side of a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// What the port received.
    Rx = 0,
    /// What was handed to the port to transmit.
    Tx = 1,
}

impl Dir {
    /// `rx` or `tx`.
    pub fn name(self) -> &'static str {
        match self {
            Dir::Rx => "rx",
            Dir::Tx => "tx",
        }
    }
}

/// What one capture asks for.
pub struct Want {
    /// The port index.
    pub port: u16,
    /// Capture what it receives.
    pub rx: bool,
    /// Capture what it transmits.
    pub tx: bool,
    /// Only this queue (RX queue for `rx`, TX queue for `tx`).
    pub queue: Option<u16>,
    /// Stop after this many packets (0: until the client closes).
    pub count: u64,
    /// Bytes kept of each packet.
    pub snaplen: usize,
    /// Only packets this matches.
    pub filter: Option<Filter>,
}

/// A running capture.
pub struct Session {
    /// What it takes.
    pub want: Want,
    ring: Ring,
    /// Records claimed against `count`.
    claimed: AtomicU64,
    /// Set when `count` records were claimed, or the reader stopped: workers record no more.
    done: AtomicBool,
    /// Per direction: packets the capture point saw on the port (and queue).
    pub seen: [AtomicU64; 2],
    /// Per direction: packets the filter accepted.
    pub accepted: [AtomicU64; 2],
    /// Per direction: accepted packets lost for want of a free slot (the reader was behind).
    pub overruns: [AtomicU64; 2],
}

/// Most memory one capture's slots take; the slot count follows from the snap length.
pub const RING_BYTES: usize = 16 << 20;
/// Fewest and most slots of one capture.
pub const SLOTS: std::ops::RangeInclusive<usize> = 64..=4096;

impl Session {
    /// A capture of `want`, its slots allocated now.
    pub fn new(want: Want) -> Session {
        let slots = (RING_BYTES / want.snaplen.max(1)).clamp(*SLOTS.start(), *SLOTS.end());
        Session {
            ring: Ring::new(slots, want.snaplen),
            want,
            claimed: AtomicU64::new(0),
            done: AtomicBool::new(false),
            seen: Default::default(),
            accepted: Default::default(),
            overruns: Default::default(),
        }
    }

    /// Whether the workers record no more.
    pub fn done(&self) -> bool {
        self.done.load(Relaxed)
    }

    /// Ends recording (the reader stops).
    pub fn finish(&self) {
        self.done.store(true, Relaxed);
    }

    /// The slots, for the reader.
    pub fn ring(&self) -> &Ring {
        &self.ring
    }

    /// Takes a slot for `p` if the capture wants it: filter, count, free slot. Counts what it saw.
    #[inline]
    fn slot_for(&self, p: &Pkt, dir: Dir, tally: &mut Tally) -> Option<Box<Record>> {
        tally.seen += 1;
        if let Some(f) = &self.want.filter {
            if !f.matches(p.data()) {
                return None;
            }
        }
        tally.accepted += 1;
        let Some(mut r) = self.ring.take() else {
            tally.overruns += 1;
            return None;
        };
        if self.want.count != 0 && self.claimed.fetch_add(1, Relaxed) >= self.want.count {
            self.done.store(true, Relaxed);
            self.ring.give_back(r);
            return None;
        }
        let keep = p.len().min(self.want.snaplen);
        r.bytes.clear();
        r.bytes.extend_from_slice(&p.data()[..keep]);
        r.orig_len = p.len() as u32;
        r.interface = dir as u32;
        Some(r)
    }

    /// Records the packets of `burst` seen in direction `dir` on `queue` at `ts_ns`, publishing
    /// each at once with `fate`.
    pub fn record<'a>(&self, dir: Dir, queue: u16, ts_ns: u64, burst: impl Iterator<Item = &'a Pkt>, fate: Fate) {
        if self.want.queue.is_some_and(|q| q != queue) || self.done() {
            return;
        }
        let mut tally = Tally::default();
        for p in burst {
            if let Some(mut r) = self.slot_for(p, dir, &mut tally) {
                r.ts_ns = ts_ns;
                r.queue = queue;
                r.fate = fate;
                self.ring.publish(r);
            }
        }
        self.count(dir, tally);
    }

    /// Like [`Session::record`] for what is handed to the TX port, but keeps the records in
    /// `held` with the packet's place in the burst: their fate is known after the transmit
    /// ([`Session::release`]).
    pub fn hold<'a>(
        &self,
        queue: u16,
        ts_ns: u64,
        burst: impl Iterator<Item = &'a Pkt>,
        held: &mut Vec<(usize, Box<Record>)>,
    ) {
        if self.want.queue.is_some_and(|q| q != queue) || self.done() {
            return;
        }
        let mut tally = Tally::default();
        for (i, p) in burst.enumerate() {
            if let Some(mut r) = self.slot_for(p, Dir::Tx, &mut tally) {
                r.ts_ns = ts_ns;
                r.queue = queue;
                held.push((i, r));
            }
        }
        self.count(Dir::Tx, tally);
    }

    /// Publishes the records [`Session::hold`] kept for a burst of `total` packets of which the
    /// last `unsent` found no room in the TX queue (the queue keeps the unsent ones at the end, in
    /// order: `crate::ports::TxQueue::tx_burst`).
    pub fn release(&self, held: &mut Vec<(usize, Box<Record>)>, total: usize, unsent: usize) {
        for (i, mut r) in held.drain(..) {
            r.fate = if i + unsent >= total { Fate::TxFull } else { Fate::Sent };
            self.ring.publish(r);
        }
    }

    fn count(&self, dir: Dir, t: Tally) {
        let d = dir as usize;
        if t.seen != 0 {
            self.seen[d].fetch_add(t.seen, Relaxed);
        }
        if t.accepted != 0 {
            self.accepted[d].fetch_add(t.accepted, Relaxed);
        }
        if t.overruns != 0 {
            self.overruns[d].fetch_add(t.overruns, Relaxed);
        }
    }
}

/// What one call saw, added to the shared counters once.
#[derive(Default)]
struct Tally {
    seen: u64,
    accepted: u64,
    overruns: u64,
}
