//! testpmd-style text: periodic port statistics with rates, and the final forward statistics.

use super::{total, PortCounts, StatsView};
use std::fmt::Write;
use std::time::Instant;

/// What the previous display saw, to compute rates.
pub struct Rates {
    at: Instant,
    ports: Vec<PortCounts>,
}

impl Rates {
    /// Starts measuring now from zero.
    pub fn new(nports: usize) -> Rates {
        Rates { at: Instant::now(), ports: vec![PortCounts::default(); nports] }
    }
}

/// Prints each port's counters and packets per second since the previous call.
pub fn print_periodic(view: &StatsView, rates: &mut Rates) {
    let snap = view.snapshot();
    let ports = view.per_port(&snap);
    let plugins = view.plugins_per_port();
    let now = Instant::now();
    let secs = now.duration_since(rates.at).as_secs_f64().max(1e-9);
    let mut out = String::new();
    for (i, p) in ports.iter().enumerate() {
        let prev = rates.ports[i];
        let rx_pps = (p.rx_packets - prev.rx_packets) as f64 / secs;
        let tx_pps = (p.tx_packets - prev.tx_packets) as f64 / secs;
        let _ = writeln!(
            out,
            "  ######################## Port statistics for port {i} ({}) ########################",
            view.ports[i]
        );
        let _ = writeln!(
            out,
            "  RX-packets: {:<14} RX-nombuf:  {:<14} RX-bytes:  {}",
            p.rx_packets, p.rx_nombuf, p.rx_bytes
        );
        let _ = writeln!(
            out,
            "  TX-packets: {:<14} TX-dropped: {:<14} TX-bytes:  {}",
            p.tx_packets,
            p.dropped(),
            p.tx_bytes
        );
        let _ = writeln!(out, "  Throughput (since last show)");
        let _ = writeln!(out, "  Rx-pps: {:>14.0}          Tx-pps: {:>14.0}", rx_pps, tx_pps);
        if let Some(pl) = &plugins[i] {
            let _ = writeln!(out, "{}", plugin_line(pl));
        }
    }
    if let Some(r) = &view.reloads {
        let _ = writeln!(out, "{}", reload_line(r));
    }
    let _ = writeln!(out, "  ############################################################################");
    crate::output::print_lossy(&out);
    rates.at = now;
    rates.ports = ports;
}

/// Prints the forward statistics per port and accumulated, as testpmd does at stop.
pub fn print_final(view: &StatsView, secs: f64) {
    let snap = view.snapshot();
    let ports = view.per_port(&snap);
    let plugins = view.plugins_per_port();
    let mut out = String::new();
    for (i, p) in ports.iter().enumerate() {
        let _ = writeln!(
            out,
            "  ---------------------- Forward statistics for port {i} ({}) ----------------------",
            view.ports[i]
        );
        let _ = writeln!(
            out,
            "  RX-packets: {:<14} RX-nombuf:  {:<14} RX-total: {}",
            p.rx_packets,
            p.rx_nombuf,
            p.rx_packets + p.rx_nombuf
        );
        let _ = writeln!(
            out,
            "  TX-packets: {:<14} TX-dropped: {:<14} TX-total: {}",
            p.tx_packets,
            p.dropped(),
            p.tx_packets + p.dropped()
        );
        let d = p.drops;
        if d.total() != 0 {
            let _ = writeln!(
                out,
                "  Dropped by reason: tx_full {}  nombuf {}  engine {}  offload {}  plugin {}  policy {}  tunnel {}  headroom {}  tx_oversize {}  tx_error {}",
                d.tx_full, d.nombuf, d.engine, d.offload, d.plugin, d.policy, d.tunnel, d.headroom, d.tx_oversize, d.tx_error
            );
        }
        if p.encapsulated + p.decapsulated + p.tunnel_passed != 0 {
            let _ = writeln!(
                out,
                "  Tunnel: encapsulated {}  decapsulated {}  passed unchanged {}",
                p.encapsulated, p.decapsulated, p.tunnel_passed
            );
        }
        if let Some(pl) = &plugins[i] {
            let _ = writeln!(out, "{}", plugin_line(pl));
        }
    }
    let t = total(&snap);
    let _ = writeln!(out, "  +++++++++++++++ Accumulated forward statistics for all ports +++++++++++++++");
    let _ = writeln!(
        out,
        "  RX-packets: {:<14} RX-nombuf:  {:<14} RX-total: {}",
        t.rx_packets,
        t.rx_nombuf,
        t.rx_packets + t.rx_nombuf
    );
    let _ = writeln!(
        out,
        "  TX-packets: {:<14} TX-dropped: {:<14} TX-total: {}",
        t.tx_packets,
        t.drops.total(),
        t.tx_packets + t.drops.total()
    );
    let _ = writeln!(
        out,
        "  Generated:  {:<14} Mpps (TX):  {:.3} over {:.3} s",
        t.generated,
        t.tx_packets as f64 / secs.max(1e-9) / 1e6,
        secs
    );
    let _ = writeln!(out, "  ++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++");
    crate::output::print_lossy(&out);
}

fn plugin_line(p: &super::PluginTotals) -> String {
    let mut line = format!(
        "  Plugin: calls {}  traps {}  timeouts {}  errors {}  sticky {}",
        p.calls, p.traps, p.timeouts, p.errors, p.sticky
    );
    for (name, v) in &p.counters {
        let _ = write!(line, "  {name} {v}");
    }
    // A chain: a line per link, in order.
    if p.links.len() > 1 {
        for (name, l) in &p.links {
            let _ = write!(
                line,
                "\n    Link {name}: calls {}  traps {}  timeouts {}  drops {}  {} ns/call",
                l.calls,
                l.traps,
                l.timeouts,
                l.drops,
                l.ns_per_call()
            );
            for (c, v) in &l.counters {
                let _ = write!(line, "  {c} {v}");
            }
        }
    }
    line
}

fn reload_line(r: &crate::reload::ReloadStats) -> String {
    use std::sync::atomic::Ordering::Relaxed;
    format!(
        "  Reloads: applied {}  rejected {}  generation {}  last switch {:.3} ms  longest loop gap {} us",
        r.applied.load(Relaxed),
        r.rejected.load(Relaxed),
        r.generation.load(Relaxed),
        r.last_us.load(Relaxed) as f64 / 1e3,
        r.last_max_gap_us.load(Relaxed)
    )
}
