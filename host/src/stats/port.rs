//! Figures a port's driver counts itself, outside any stream: what arrived (or was in the capture)
//! but could not be received, and why. They reconcile a port's input with its `rx_packets`.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A port's driver-level counters (shared by its queues and the display).
#[derive(Debug, Default)]
pub struct PortStats {
    /// Capture records shorter than an Ethernet header (pcap).
    pub skipped_short: AtomicU64,
    /// Capture records longer than a buffer's data room (pcap).
    pub skipped_too_long: AtomicU64,
    /// Corrupt capture blocks (pcap).
    pub skipped_corrupt: AtomicU64,
    /// Capture records cut short by the end of the file (pcap).
    pub skipped_cut_short: AtomicU64,
    /// Frames the kernel had for the port but could not put in its RX ring, full at the time
    /// (af_packet: `tp_drops` of PACKET_STATISTICS; DPDK's `imissed`).
    pub missed: AtomicU64,
    /// Times the RX ring was found full (af_packet: `tp_freeze_q_cnt`).
    pub ring_full: AtomicU64,
    /// Frames received but too big for a buffer, cut short by the ring, or super-frames that could
    /// not be segmented: not receivable (af_packet).
    pub oversize: AtomicU64,
    /// Frames received whose TCP or UDP checksum the sender's kernel had left to the device
    /// (partial), completed in software (af_packet, af_xdp).
    pub csum_completed: AtomicU64,
    /// Frames the kernel took from the TX ring and the device then refused, found after the burst
    /// that posted them was counted as sent (af_xdp; rare: the device had said it was busy).
    pub tx_errors_late: AtomicU64,
    /// Packets the driver copied between a pool buffer and a UMEM frame of its own (af_xdp: every
    /// packet with `af_xdp.umem: queue`; with the pool as the UMEM, only packets of another pool).
    pub umem_copies: AtomicU64,
    /// Buffers lent to the kernel that it gave back at an address it was not lent, or will never
    /// give back: never reused (af_xdp with the pool as the UMEM; a broken kernel or driver).
    pub umem_lost: AtomicU64,
}

/// [`PortStats`] at one moment.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PortFigures {
    /// See [`PortStats`].
    pub skipped_short: u64,
    /// See [`PortStats`].
    pub skipped_too_long: u64,
    /// See [`PortStats`].
    pub skipped_corrupt: u64,
    /// See [`PortStats`].
    pub skipped_cut_short: u64,
    /// See [`PortStats`].
    pub missed: u64,
    /// See [`PortStats`].
    pub ring_full: u64,
    /// See [`PortStats`].
    pub oversize: u64,
    /// See [`PortStats`].
    pub csum_completed: u64,
    /// See [`PortStats`].
    pub tx_errors_late: u64,
    /// See [`PortStats`].
    pub umem_copies: u64,
    /// See [`PortStats`].
    pub umem_lost: u64,
}

impl PortFigures {
    /// Every skipped record.
    pub fn skipped(&self) -> u64 {
        self.skipped_short + self.skipped_too_long + self.skipped_corrupt + self.skipped_cut_short
    }
}

impl PortStats {
    /// Adds to a counter (several queues may count at once).
    pub fn add(c: &AtomicU64, n: u64) {
        if n != 0 {
            c.fetch_add(n, Relaxed);
        }
    }

    /// Reads every counter.
    pub fn snapshot(&self) -> PortFigures {
        PortFigures {
            skipped_short: self.skipped_short.load(Relaxed),
            skipped_too_long: self.skipped_too_long.load(Relaxed),
            skipped_corrupt: self.skipped_corrupt.load(Relaxed),
            skipped_cut_short: self.skipped_cut_short.load(Relaxed),
            missed: self.missed.load(Relaxed),
            ring_full: self.ring_full.load(Relaxed),
            oversize: self.oversize.load(Relaxed),
            csum_completed: self.csum_completed.load(Relaxed),
            tx_errors_late: self.tx_errors_late.load(Relaxed),
            umem_copies: self.umem_copies.load(Relaxed),
            umem_lost: self.umem_lost.load(Relaxed),
        }
    }
}
