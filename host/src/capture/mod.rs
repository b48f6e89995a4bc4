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
//! - [`pcapng`]: the blocks the reader writes;
//! - [`trace`]: packet trace, the taps' other use: the path of the next N packets of a port.
//!
//! Where packets are taken: RX right after the port's receive (before the engine or policy), TX
//! right before the port's transmit (after the engine, policy and software offloads), so a
//! capture shows the bytes on the wire at both ends of the dataplane.

mod filter;
pub mod pcapng;
mod ring;
mod session;
pub mod trace;

pub use filter::Filter;
pub use ring::{Record, Ring};
pub use session::{Dir, Fate, Session, Want, RING_BYTES, SLOTS};

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

/// What a stream keeps as the word it saw while a capture or trace runs on its ports: no word is
/// ever this (it counts changes from 0), so every round takes up the taps again.
const ON: u64 = u64::MAX;

/// The capture points of a dataplane: at most one capture and one trace per port at a time.
pub struct Taps {
    /// Bumped whenever a capture or trace starts or ends: the only thing workers read per burst.
    word: AtomicU64,
    ports: Vec<Mutex<PortTaps>>,
}

/// What runs on one port.
#[derive(Default, Clone)]
struct PortTaps {
    capture: Option<Arc<Session>>,
    trace: Option<Arc<trace::Trace>>,
}

impl Taps {
    /// Capture points for `ports` ports, none capturing.
    pub fn new(ports: usize) -> Arc<Taps> {
        Arc::new(Taps { word: AtomicU64::new(0), ports: (0..ports).map(|_| Mutex::default()).collect() })
    }

    fn slot(&self, port: u16) -> std::sync::MutexGuard<'_, PortTaps> {
        self.ports[port as usize].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts `s` on its port; refused while another capture runs there.
    pub fn start(&self, s: Arc<Session>) -> Result<(), String> {
        let port = s.want.port;
        let mut slot = self.slot(port);
        if slot.capture.is_some() {
            return Err("another client is capturing this port; one capture per port at a time".into());
        }
        slot.capture = Some(s);
        self.word.fetch_add(1, Relaxed);
        Ok(())
    }

    /// Ends `s` (if it is still the port's capture): workers drop it at their next burst.
    pub fn stop(&self, s: &Arc<Session>) {
        s.finish();
        let mut slot = self.slot(s.want.port);
        if slot.capture.as_ref().is_some_and(|cur| Arc::ptr_eq(cur, s)) {
            slot.capture = None;
        }
        self.word.fetch_add(1, Relaxed);
    }

    /// Starts trace `t` on its port; refused while another trace runs there.
    pub fn start_trace(&self, t: Arc<trace::Trace>) -> Result<(), String> {
        let mut slot = self.slot(t.port);
        if slot.trace.is_some() {
            return Err("another client is tracing this port; one trace per port at a time".into());
        }
        slot.trace = Some(t);
        self.word.fetch_add(1, Relaxed);
        Ok(())
    }

    /// Ends trace `t`: workers drop it at their next burst.
    pub fn stop_trace(&self, t: &Arc<trace::Trace>) {
        let mut slot = self.slot(t.port);
        if slot.trace.as_ref().is_some_and(|cur| Arc::ptr_eq(cur, t)) {
            slot.trace = None;
        }
        self.word.fetch_add(1, Relaxed);
    }

    /// The view of a stream receiving on `rx` (queue `rxq`) and transmitting on `tx` (queue `txq`).
    pub fn stream(self: &Arc<Self>, rx: u16, rxq: u16, tx: u16, txq: u16) -> StreamTap {
        StreamTap {
            taps: self.clone(),
            seen: 0,
            rx: None,
            tx: None,
            trace: None,
            following: trace::Following::default(),
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
    /// The word as of the last look; [`ON`] while a capture or trace runs on either port, so that
    /// every round looks again.
    seen: u64,
    rx: Option<Arc<Session>>,
    tx: Option<Arc<Session>>,
    /// The RX port's trace.
    trace: Option<Arc<trace::Trace>>,
    /// The packets the trace follows this round.
    following: trace::Following,
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

    /// Whether either port is being captured or traced: one relaxed load and a compare per round
    /// while nothing is (and while something is, the taps are looked up again every round, which
    /// costs little beside the copies a capture makes).
    #[inline(always)]
    pub fn active(&mut self) -> bool {
        let word = self.taps.word.load(Relaxed);
        word != self.seen && self.resync(word)
    }

    /// Takes up the captures and traces now running on the stream's ports (out of line: it runs
    /// when one starts or ends, and every round while one runs): whether any does. A port whose
    /// lock is held right now is looked at again next round.
    #[cold]
    #[inline(never)]
    fn resync(&mut self, word: u64) -> bool {
        let take = |port: u16| -> Option<PortTaps> {
            let Some(m) = self.taps.ports.get(port as usize) else { return Some(PortTaps::default()) };
            let slot = match m.try_lock() {
                Ok(g) => g,
                Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => return None,
            };
            Some(slot.clone())
        };
        let (Some(rx), Some(tx)) = (take(self.ports[0]), take(self.ports[1])) else {
            return self.rx.is_some() || self.tx.is_some() || self.trace.is_some();
        };
        self.rx = rx.capture.filter(|s| s.want.rx);
        self.tx = tx.capture.filter(|s| s.want.tx);
        self.trace = rx.trace;
        let on = self.rx.is_some() || self.tx.is_some() || self.trace.is_some();
        if self.tx.is_some() && self.held.capacity() == 0 {
            self.held.reserve(crate::mbuf::MAX_BURST);
        }
        self.seen = if on { ON } else { word };
        on
    }

    /// Records what the RX port just received (call when [`StreamTap::active`]); a trace starts
    /// following packets of it. `engine`: the stream's.
    #[inline]
    pub fn received(&mut self, burst: &crate::mbuf::Burst, engine: &'static str) {
        if let Some(s) = &self.rx {
            s.record(Dir::Rx, self.queues[0], now_ns(), burst.iter(), Fate::Received);
        }
        if let Some(t) = &self.trace {
            self.following.received(t, burst, (self.ports[0], self.queues[0]), engine);
        }
    }

    /// The packets a trace follows this round, when there are any (the policy chain then reports
    /// each link's step).
    #[inline]
    pub fn following(&mut self) -> Option<&mut trace::Following> {
        self.following.any().then_some(&mut self.following)
    }

    /// Before the TX offloads are carried out: what a trace's packets ask of the TX port.
    #[inline]
    pub fn offloading(&mut self, burst: &crate::mbuf::Burst) {
        if self.following.any() {
            self.following.offloads(burst);
        }
    }

    /// Copies what is about to be handed to the TX port (call when [`StreamTap::active`]), given
    /// the round's drops so far; the records wait for [`StreamTap::transmitted`].
    #[inline]
    pub fn sending(&mut self, burst: &crate::mbuf::Burst, drops: &crate::stats::Drops) {
        self.sending = (burst.len(), drops.tx_full);
        if let Some(s) = &self.tx {
            s.hold(self.queues[1], now_ns(), burst.iter(), &mut self.held);
        }
        if self.following.any() {
            let reasons: Vec<String> =
                drops.named().into_iter().filter(|(_, n)| *n > 0).map(|(k, n)| format!("{k} {n}")).collect();
            let reasons = if reasons.is_empty() { "none".to_string() } else { reasons.join(", ") };
            self.following.sending(burst, (self.ports[1], self.queues[1]), &reasons);
        }
    }

    /// Publishes the TX records with their fate, given the round's `tx_full` count now: the
    /// packets it grew by were the last of those handed over, dropped for want of room. A trace's
    /// paths of the round end here.
    #[inline]
    pub fn transmitted(&mut self, tx_full: u64) {
        let (total, before) = self.sending;
        let unsent = (tx_full - before) as usize;
        if let Some(s) = &self.tx {
            s.release(&mut self.held, total, unsent);
        }
        if let Some(t) = &self.trace {
            self.following.sent(t, unsent);
        }
    }
}

fn now_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}
