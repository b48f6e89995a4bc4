//! Live capture (`wasmdp ctl capture`): copies of what ports receive and transmit, taken by the
//! workers while traffic flows and written as pcapng by the control socket.
//!
//! - [`Taps`]: the dataplane's capture points, one per port, and the one word that tells workers
//!   a capture started or ended;
//! - [`StreamTap`]: a stream's view of them, checked once per burst with one relaxed load;
//! - [`Session`]: one capture (port, directions, queue, filter, count, snap length) and its
//!   counters; [`Ring`]: its slots, allocated when it starts, so that a worker never allocates,
//!   locks or waits: with no free slot it counts an overrun and goes on;
//! - [`Filter`]: pcap filter expressions, compiled and run by libpcap;
//! - [`pcapng`]: the blocks the reader writes.
//!
//! Where packets are taken: RX right after the port's receive (before the engine or policy), TX
//! right before the port's transmit (after the engine, policy and software offloads), so a
//! capture shows the bytes on the wire at both ends of the dataplane.

mod filter;
pub mod pcapng;
mod ring;
mod session;

pub use filter::Filter;
pub use ring::{Record, Ring};
pub use session::{Dir, Fate, Session, Want, RING_BYTES, SLOTS};

use crate::mbuf::Pkt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

/// The capture points of a dataplane: at most one capture per port at a time.
pub struct Taps {
    /// Bumped whenever a capture starts or ends: the only thing workers read per burst.
    word: AtomicU64,
    ports: Vec<Mutex<Option<Arc<Session>>>>,
}

impl Taps {
    /// Capture points for `ports` ports, none capturing.
    pub fn new(ports: usize) -> Arc<Taps> {
        Arc::new(Taps { word: AtomicU64::new(0), ports: (0..ports).map(|_| Mutex::default()).collect() })
    }

    fn slot(&self, port: u16) -> std::sync::MutexGuard<'_, Option<Arc<Session>>> {
        self.ports[port as usize].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts `s` on its port; refused while another capture runs there.
    pub fn start(&self, s: Arc<Session>) -> Result<(), String> {
        let port = s.want.port;
        let mut slot = self.slot(port);
        if slot.is_some() {
            return Err("another client is capturing this port; one capture per port at a time".into());
        }
        *slot = Some(s);
        self.word.fetch_add(1, Relaxed);
        Ok(())
    }

    /// Ends `s` (if it is still the port's capture): workers drop it at their next burst.
    pub fn stop(&self, s: &Arc<Session>) {
        s.finish();
        let mut slot = self.slot(s.want.port);
        if slot.as_ref().is_some_and(|cur| Arc::ptr_eq(cur, s)) {
            *slot = None;
        }
        self.word.fetch_add(1, Relaxed);
    }

    /// The view of a stream receiving on `rx` (queue `rxq`) and transmitting on `tx` (queue `txq`).
    pub fn stream(self: &Arc<Self>, rx: u16, rxq: u16, tx: u16, txq: u16) -> StreamTap {
        StreamTap {
            taps: self.clone(),
            seen: 0,
            on: false,
            rx: None,
            tx: None,
            ports: [rx, tx],
            queues: [rxq, txq],
            held: Vec::new(),
            sending: (0, 0),
        }
    }
}

/// A stream's view of the capture points of its RX and TX ports.
pub struct StreamTap {
    taps: Arc<Taps>,
    /// The word as of the last look.
    seen: u64,
    /// Whether a capture of either port was running then.
    on: bool,
    rx: Option<Arc<Session>>,
    tx: Option<Arc<Session>>,
    ports: [u16; 2],
    queues: [u16; 2],
    /// TX records waiting for the transmit's outcome.
    held: Vec<(usize, Box<Record>)>,
    /// The burst's length and the stream's `tx_full` count when they were taken.
    sending: (usize, u64),
}

impl StreamTap {
    /// A view that never captures (streams built by hand: tests, benchmarks, fuzzing).
    pub fn none() -> StreamTap {
        Taps::new(0).stream(0, 0, 0, 0)
    }

    /// Whether either port is being captured: one relaxed load (and a compare) per round while
    /// nothing is.
    #[inline(always)]
    pub fn active(&mut self) -> bool {
        let word = self.taps.word.load(Relaxed);
        if word != self.seen {
            self.resync(word);
        }
        self.on
    }

    /// Takes up the captures now running on the stream's ports (out of line: it runs when a
    /// capture starts or ends). A port whose lock is held right now is looked at again next burst.
    #[cold]
    #[inline(never)]
    fn resync(&mut self, word: u64) {
        let take = |port: u16| -> Option<Option<Arc<Session>>> {
            let Some(m) = self.taps.ports.get(port as usize) else { return Some(None) };
            let slot = match m.try_lock() {
                Ok(g) => g,
                Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => return None,
            };
            Some(slot.clone())
        };
        let (Some(rx), Some(tx)) = (take(self.ports[0]), take(self.ports[1])) else { return };
        self.rx = rx.filter(|s| s.want.rx);
        self.tx = tx.filter(|s| s.want.tx);
        self.on = self.rx.is_some() || self.tx.is_some();
        if self.tx.is_some() && self.held.capacity() == 0 {
            self.held.reserve(crate::mbuf::MAX_BURST);
        }
        self.seen = word;
    }

    /// Records what the RX port just received (call when [`StreamTap::active`]).
    #[inline]
    pub fn received<'a>(&self, burst: impl Iterator<Item = &'a Pkt>) {
        if let Some(s) = &self.rx {
            s.record(Dir::Rx, self.queues[0], now_ns(), burst, Fate::Received);
        }
    }

    /// Copies what is about to be handed to the TX port (call when [`StreamTap::active`]), with
    /// the stream's `tx_full` count so far; the records wait for [`StreamTap::transmitted`].
    #[inline]
    pub fn sending<'a>(&mut self, burst: impl ExactSizeIterator<Item = &'a Pkt>, tx_full: u64) {
        self.sending = (burst.len(), tx_full);
        if let Some(s) = &self.tx {
            s.hold(self.queues[1], now_ns(), burst, &mut self.held);
        }
    }

    /// Publishes the TX records with their fate, given the stream's `tx_full` count now: the
    /// packets it grew by were the last of those handed over, dropped for want of room.
    #[inline]
    pub fn transmitted(&mut self, tx_full: u64) {
        let (total, before) = self.sending;
        if let Some(s) = &self.tx {
            s.release(&mut self.held, total, (tx_full - before) as usize);
        }
    }
}

fn now_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}
