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
    /// Each stream's plugin counters per link of its chain (same order); shown for ports whose
    /// streams have, or had, a policy.
    pub plugins: Vec<Arc<crate::plugin::LinkCounters>>,
    /// Each port's plugin maps (empty for ports whose policies declare none).
    pub maps: Vec<Arc<crate::plugin::maps::Registry>>,
    /// Each port's plugin event ring (empty for views built without ports' policies).
    pub events: Vec<Arc<crate::plugin::events::Events>>,
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
    /// Packets dropped where the policy ran (its own drops, those of the engines it ran, and
    /// bursts dropped under `fail_closed`).
    pub drops: u64,
    /// Calls timed (one in `plugin::TIME_EVERY`).
    pub timed_calls: u64,
    /// Nanoseconds the timed calls took.
    pub timed_ns: u64,
    /// The same figures per link of the port's chain, in the chain's order (one entry for a
    /// single policy). Empty within a link's own figures.
    pub links: Vec<(String, PluginTotals)>,
}

impl PluginTotals {
    /// Mean nanoseconds a call took, from the timed calls (0 before any).
    pub fn ns_per_call(&self) -> u64 {
        self.timed_ns.checked_div(self.timed_calls).unwrap_or(0)
    }

    fn merge(&mut self, o: &PluginTotals) {
        for (a, b) in [
            (&mut self.calls, o.calls),
            (&mut self.traps, o.traps),
            (&mut self.timeouts, o.timeouts),
            (&mut self.errors, o.errors),
            (&mut self.sticky, o.sticky),
            (&mut self.ticks, o.ticks),
            (&mut self.drops, o.drops),
            (&mut self.timed_calls, o.timed_calls),
            (&mut self.timed_ns, o.timed_ns),
            (&mut self.disabled, o.disabled),
            (&mut self.failed, o.failed),
        ] {
            *a += b;
        }
        for (name, v) in &o.counters {
            *self.counters.entry(name.clone()).or_default() += v;
        }
        for (name, v) in &o.gauges {
            *self.gauges.entry(name.clone()).or_default() += v;
        }
    }

    /// One stream's figures for one link, each counter read once.
    fn of(pc: &crate::plugin::PluginCounters) -> PluginTotals {
        use std::sync::atomic::Ordering::Relaxed;
        PluginTotals {
            calls: pc.calls.load(Relaxed),
            traps: pc.traps.load(Relaxed),
            timeouts: pc.timeouts.load(Relaxed),
            errors: pc.errors.load(Relaxed),
            sticky: pc.sticky.load(Relaxed),
            ticks: pc.ticks.load(Relaxed),
            drops: pc.drops.load(Relaxed),
            timed_calls: pc.timed_calls.load(Relaxed),
            timed_ns: pc.timed_ns.load(Relaxed),
            disabled: u64::from(pc.disabled.load(Relaxed)),
            failed: u64::from(pc.failed.load(Relaxed)),
            counters: pc.named(),
            gauges: pc.gauges(),
            links: Vec::new(),
        }
    }
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

    /// Plugin figures per port, summed over its streams and the links of its chain, with each
    /// link's own (None for ports without a policy).
    pub fn plugins_per_port(&self) -> Vec<Option<PluginTotals>> {
        use std::sync::atomic::Ordering::Relaxed;
        let mut out: Vec<Option<PluginTotals>> = vec![None; self.ports.len()];
        for ((info, _), links) in self.streams.iter().zip(&self.plugins) {
            for (name, pc) in links.snapshot() {
                if !pc.attached.load(Relaxed) && pc.calls.load(Relaxed) == 0 {
                    continue;
                }
                // Read once, added twice: the port's sum and the link's agree.
                let one = PluginTotals::of(&pc);
                let t = out[info.rx_port as usize].get_or_insert_with(PluginTotals::default);
                t.merge(&one);
                let k = match t.links.iter().position(|(n, _)| **n == *name) {
                    Some(k) => k,
                    None => {
                        t.links.push((name.to_string(), PluginTotals::default()));
                        t.links.len() - 1
                    }
                };
                t.links[k].1.merge(&one);
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
