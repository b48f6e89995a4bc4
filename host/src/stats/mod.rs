//! Counters and their display.
//!
//! Each stream owns one [`StreamCounters`], written only by the worker that polls the stream (a load
//! and a store, no atomic read-modify-write) and read by the display thread. Port figures are sums
//! over streams: RX side from the streams that receive on the port, TX side (and drops, as testpmd
//! shows them) from the streams that transmit on it.
//!
//! Imports that run up the module tree, on purpose: stats displays counters that other layers own and
//! share with it by `Arc` (a policy's [`crate::plugin::PluginCounters`] and map registry, the
//! reloads' [`crate::reload::ReloadStats`]); it reads them and never calls into those layers.

mod counters;
mod display;
mod json;
mod port;

pub use counters::{Counts, Drops, Flow, StreamCounters};
pub use display::{print_final, print_periodic, Rates};
pub use json::{report_json, RunFacts};
pub use port::{PortFigures, PortStats};

use std::sync::Arc;

/// Where a stream goes, for stats and logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamInfo {
    /// RX port index.
    pub rx_port: u16,
    /// RX queue.
    pub rx_queue: u16,
    /// TX port index.
    pub tx_port: u16,
    /// TX queue.
    pub tx_queue: u16,
    /// Engine name.
    pub engine: &'static str,
    /// Core the stream runs on, if pinned.
    pub lcore: Option<usize>,
}

/// Everything the display needs: port names and every stream's counters.
#[derive(Clone)]
pub struct StatsView {
    /// Port names, by index.
    pub ports: Vec<String>,
    /// Each port's driver-level counters, by index.
    pub port_stats: Vec<Arc<PortStats>>,
    /// Streams and their counters.
    pub streams: Vec<(StreamInfo, Arc<StreamCounters>)>,
    /// Each stream's plugin counters (same order); shown for ports whose streams have, or had, a policy.
    pub plugins: Vec<Arc<crate::plugin::PluginCounters>>,
    /// Each port's plugin maps (empty for ports whose policies declare none).
    pub maps: Vec<Arc<crate::plugin::maps::Registry>>,
    /// Live reload figures.
    pub reloads: Option<Arc<crate::reload::ReloadStats>>,
}

/// A port's plugin figures, summed over its streams.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PluginTotals {
    /// Calls into the plugin.
    pub calls: u64,
    /// Calls that trapped (timeouts included).
    pub traps: u64,
    /// Calls that returned an error code.
    pub errors: u64,
    /// Calls stopped at the deadline.
    pub timeouts: u64,
    /// Bursts handled by a sticky decision.
    pub sticky: u64,
    /// Calls of the plugin's tick.
    pub ticks: u64,
    /// Streams on which the plugin was disabled after too many failures.
    pub disabled: u64,
    /// Streams whose instance trapped and that have none now (a new one may be on its way).
    pub failed: u64,
    /// The plugin's own counters.
    pub counters: std::collections::BTreeMap<String, u64>,
    /// The plugin's gauges (summed over the port's live instances).
    pub gauges: std::collections::BTreeMap<String, i64>,
}

/// One port's figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortCounts {
    /// Packets received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Packets the port could not receive for lack of buffers.
    pub rx_nombuf: u64,
    /// Packets transmitted.
    pub tx_packets: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Drops of streams transmitting on this port, by reason.
    pub drops: counters::Drops,
    /// Packets created by streams transmitting on this port (txonly, tx_first).
    pub generated: u64,
    /// Packets encapsulated in this port's tunnel (by streams transmitting on it).
    pub encapsulated: u64,
    /// Packets of this port's tunnel decapsulated (by streams receiving on it).
    pub decapsulated: u64,
    /// Frames received on this port that a decapsulation passed on unchanged.
    pub tunnel_passed: u64,
}

impl PortCounts {
    /// All drops.
    pub fn dropped(&self) -> u64 {
        self.drops.total()
    }
}

impl StatsView {
    /// Snapshot of every stream, in order.
    pub fn snapshot(&self) -> Vec<Counts> {
        self.streams.iter().map(|(_, c)| c.snapshot()).collect()
    }

    /// Plugin figures per port (None for ports without a policy).
    pub fn plugins_per_port(&self) -> Vec<Option<PluginTotals>> {
        use std::sync::atomic::Ordering::Relaxed;
        let mut out: Vec<Option<PluginTotals>> = vec![None; self.ports.len()];
        for ((info, _), pc) in self.streams.iter().zip(&self.plugins) {
            if !pc.attached.load(Relaxed) && pc.calls.load(Relaxed) == 0 {
                continue;
            }
            let t = out[info.rx_port as usize].get_or_insert_with(PluginTotals::default);
            t.calls += pc.calls.load(Relaxed);
            t.traps += pc.traps.load(Relaxed);
            t.timeouts += pc.timeouts.load(Relaxed);
            t.errors += pc.errors.load(Relaxed);
            t.sticky += pc.sticky.load(Relaxed);
            t.ticks += pc.ticks.load(Relaxed);
            t.disabled += u64::from(pc.disabled.load(Relaxed));
            t.failed += u64::from(pc.failed.load(Relaxed));
            for (name, v) in pc.named() {
                *t.counters.entry(name).or_default() += v;
            }
            for (name, v) in pc.gauges() {
                *t.gauges.entry(name).or_default() += v;
            }
        }
        out
    }

    /// Per-port figures from a snapshot.
    pub fn per_port(&self, snap: &[Counts]) -> Vec<PortCounts> {
        let mut ports = vec![PortCounts::default(); self.ports.len()];
        for ((info, _), c) in self.streams.iter().zip(snap) {
            let rx = &mut ports[info.rx_port as usize];
            rx.rx_packets += c.rx_packets;
            rx.rx_bytes += c.rx_bytes;
            rx.rx_nombuf += c.rx_nombuf;
            rx.decapsulated += c.decapsulated;
            rx.tunnel_passed += c.tunnel_passed;
            let tx = &mut ports[info.tx_port as usize];
            tx.tx_packets += c.tx_packets;
            tx.tx_bytes += c.tx_bytes;
            tx.drops = tx.drops + c.drops;
            tx.generated += c.generated;
            tx.encapsulated += c.encapsulated;
        }
        ports
    }
}

/// Sum of all streams.
pub fn total(snap: &[Counts]) -> Counts {
    snap.iter().fold(Counts::default(), |a, b| a + *b)
}
