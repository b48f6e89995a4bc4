//! Per-stream counters: single writer, many readers.

use std::ops::Add;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Drops by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Drops {
    /// TX queue still full after the retries.
    pub tx_full: u64,
    /// No buffer for a copy or a generated packet.
    pub nombuf: u64,
    /// The engine (or policy) decided to drop.
    pub engine: u64,
    /// A software TX offload could not be done (no headroom).
    pub offload: u64,
}

impl Drops {
    /// All reasons together.
    pub fn total(&self) -> u64 {
        self.tx_full + self.nombuf + self.engine + self.offload
    }
}

impl Add for Drops {
    type Output = Drops;
    fn add(self, o: Drops) -> Drops {
        Drops {
            tx_full: self.tx_full + o.tx_full,
            nombuf: self.nombuf + o.nombuf,
            engine: self.engine + o.engine,
            offload: self.offload + o.offload,
        }
    }
}

/// A stream's figures at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Packets received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Packets not received for lack of buffers.
    pub rx_nombuf: u64,
    /// Packets created by the stream (txonly, tx_first).
    pub generated: u64,
    /// Packets transmitted.
    pub tx_packets: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Drops by reason.
    pub drops: Drops,
}

impl Add for Counts {
    type Output = Counts;
    fn add(self, o: Counts) -> Counts {
        Counts {
            rx_packets: self.rx_packets + o.rx_packets,
            rx_bytes: self.rx_bytes + o.rx_bytes,
            rx_nombuf: self.rx_nombuf + o.rx_nombuf,
            generated: self.generated + o.generated,
            tx_packets: self.tx_packets + o.tx_packets,
            tx_bytes: self.tx_bytes + o.tx_bytes,
            drops: self.drops + o.drops,
        }
    }
}

/// The shared counters of one stream, on their own cache lines.
#[repr(align(128))]
#[derive(Debug, Default)]
pub struct StreamCounters {
    rx_packets: AtomicU64,
    rx_bytes: AtomicU64,
    rx_nombuf: AtomicU64,
    generated: AtomicU64,
    tx_packets: AtomicU64,
    tx_bytes: AtomicU64,
    tx_full: AtomicU64,
    nombuf: AtomicU64,
    engine: AtomicU64,
    offload: AtomicU64,
}

/// Adds to a counter that only the calling thread writes: a plain load and store.
#[inline(always)]
fn bump(c: &AtomicU64, v: u64) {
    c.store(c.load(Relaxed).wrapping_add(v), Relaxed);
}

impl StreamCounters {
    /// Counts a received burst.
    #[inline(always)]
    pub fn rx(&self, packets: u64, bytes: u64) {
        bump(&self.rx_packets, packets);
        bump(&self.rx_bytes, bytes);
    }
    /// Counts packets the port could not receive for lack of buffers.
    #[inline(always)]
    pub fn rx_nombuf(&self, n: u64) {
        bump(&self.rx_nombuf, n);
    }
    /// Counts created packets.
    #[inline(always)]
    pub fn generated(&self, n: u64) {
        bump(&self.generated, n);
    }
    /// Counts transmitted packets.
    #[inline(always)]
    pub fn tx(&self, packets: u64, bytes: u64) {
        bump(&self.tx_packets, packets);
        bump(&self.tx_bytes, bytes);
    }
    /// Counts drops.
    #[inline(always)]
    pub fn drops(&self, d: Drops) {
        if d != Drops::default() {
            bump(&self.tx_full, d.tx_full);
            bump(&self.nombuf, d.nombuf);
            bump(&self.engine, d.engine);
            bump(&self.offload, d.offload);
        }
    }
    /// Reads every counter.
    pub fn snapshot(&self) -> Counts {
        Counts {
            rx_packets: self.rx_packets.load(Relaxed),
            rx_bytes: self.rx_bytes.load(Relaxed),
            rx_nombuf: self.rx_nombuf.load(Relaxed),
            generated: self.generated.load(Relaxed),
            tx_packets: self.tx_packets.load(Relaxed),
            tx_bytes: self.tx_bytes.load(Relaxed),
            drops: Drops {
                tx_full: self.tx_full.load(Relaxed),
                nombuf: self.nombuf.load(Relaxed),
                engine: self.engine.load(Relaxed),
                offload: self.offload.load(Relaxed),
            },
        }
    }
}
