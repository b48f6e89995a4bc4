//! The `--stats-json` document. Key names are a stable interface: later fields are added, none renamed.

use super::{total, StatsView};
use serde_json::{json, Value};
use std::sync::atomic::Ordering::Relaxed;

/// Facts about a run that are not counters.
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
    /// Seconds the forwarding ran.
    pub duration_s: f64,
    /// Kernel variant in use.
    pub simd: String,
    /// Packets found in port queues at stop (freed then).
    pub in_flight: u64,
    /// Buffers not back in the pool after stop (should be 0).
    pub leaked_buffers: u64,
    /// Pool facts.
    pub pool: Value,
}

/// One link of a port's policy chain.
fn link_json(name: &str, l: &super::PluginTotals) -> Value {
    json!({"link": name, "calls": l.calls, "traps": l.traps, "timeouts": l.timeouts, "errors": l.errors,
        "sticky": l.sticky, "ticks": l.ticks, "drops": l.drops, "disabled": l.disabled, "ns_per_call": l.ns_per_call(),
        "counters": l.counters, "gauges": l.gauges})
}

/// Builds the JSON report.
pub fn report_json(view: &StatsView, facts: &RunFacts) -> Value {
    let snap = view.snapshot();
    let ports = view.per_port(&snap);
    let t = total(&snap);
    let plugins = view.plugins_per_port();
    let figures: Vec<super::PortFigures> = view.port_stats.iter().map(|s| s.snapshot()).collect();
    let drops =
        |d: super::counters::Drops| Value::Object(d.named().into_iter().map(|(k, v)| (k.into(), v.into())).collect());
    let ports_json: Vec<Value> = ports
        .iter()
        .zip(&view.ports)
        .zip(&plugins)
        .enumerate()
        .map(|(i, ((p, name), pl))| {
            let f = figures.get(i).copied().unwrap_or_default();
            let mut port = json!({
                "name": name, "rx_packets": p.rx_packets, "tx_packets": p.tx_packets,
                "rx_bytes": p.rx_bytes, "tx_bytes": p.tx_bytes, "rx_nombuf": p.rx_nombuf,
                "dropped": p.dropped(), "dropped_by_reason": drops(p.drops), "generated": p.generated,
                "rx_skipped": f.skipped(), "rx_missed": f.missed, "rx_ring_full": f.ring_full,
                "rx_oversize": f.oversize, "rx_csum_completed": f.csum_completed,
                "tx_errors_late": f.tx_errors_late, "umem_copies": f.umem_copies, "umem_lost": f.umem_lost,
                "encapsulated": p.encapsulated, "decapsulated": p.decapsulated,
                "tunnel_passed": p.tunnel_passed,
                "rx_skipped_by_reason": {"short": f.skipped_short, "too_long": f.skipped_too_long,
                    "corrupt": f.skipped_corrupt, "cut_short": f.skipped_cut_short},
            });
            if let Some(pl) = pl {
                port["plugin_calls"] = json!(pl.calls);
                port["plugin_traps"] = json!(pl.traps);
                port["plugin_timeouts"] = json!(pl.timeouts);
                port["plugin_errors"] = json!(pl.errors);
                port["plugin_sticky"] = json!(pl.sticky);
                port["plugin_ticks"] = json!(pl.ticks);
                port["plugin_disabled"] = json!(pl.disabled);
                port["plugin_counters"] = json!(pl.counters);
                port["plugin_gauges"] = json!(pl.gauges);
                port["plugin_drops"] = json!(pl.drops);
                port["plugin_ns_per_call"] = json!(pl.ns_per_call());
                port["plugin_links"] = pl.links.iter().map(|(name, l)| link_json(name, l)).collect();
                port["plugin_maps"] = json!(view.maps.get(i).map(|m| m.snapshot()).unwrap_or_default());
                let events = view.events.get(i);
                port["plugin_events"] = json!(events.map_or(0, |e| e.emitted.load(Relaxed)));
                port["plugin_events_lost"] = json!(events.map_or(0, |e| e.lost.load(Relaxed)));
            }
            port
        })
        .collect();
    let streams: Vec<Value> = view
        .streams
        .iter()
        .zip(&snap)
        .map(|((s, _), c)| {
            json!({
                "rx_port": view.ports[s.rx_port as usize], "rx_queue": s.rx_queue,
                "tx_port": view.ports[s.tx_port as usize], "tx_queue": s.tx_queue,
                "engine": s.engine, "lcore": s.lcore,
                "rx_packets": c.rx_packets, "tx_packets": c.tx_packets, "generated": c.generated,
                "redirected_in": c.redirected_in, "redirected_out": c.redirected_out,
                "encapsulated": c.encapsulated, "decapsulated": c.decapsulated, "tunnel_passed": c.tunnel_passed,
                "dropped": c.drops.total(), "dropped_by_reason": drops(c.drops),
            })
        })
        .collect();
    let secs = facts.duration_s.max(1e-9);
    json!({
        "duration_s": facts.duration_s,
        "simd": facts.simd,
        "mpps": t.tx_packets as f64 / secs / 1e6,
        "ports": ports_json,
        "streams": streams,
        "totals": {
            "rx_packets": t.rx_packets, "tx_packets": t.tx_packets, "dropped": t.drops.total(),
            "rx_nombuf": t.rx_nombuf, "generated": t.generated, "in_flight": facts.in_flight,
            "dropped_by_reason": drops(t.drops),
            "redirected": t.redirected_out,
        },
        "reloads": view.reloads.as_ref().map(|r| {
            use std::sync::atomic::Ordering::Relaxed;
            json!({
                "applied": r.applied.load(Relaxed), "rejected": r.rejected.load(Relaxed),
                "generation": r.generation.load(Relaxed), "last_ms": r.last_us.load(Relaxed) as f64 / 1e3,
                "last_max_gap_us": r.last_max_gap_us.load(Relaxed),
                "max_ms": r.max_us.load(Relaxed) as f64 / 1e3, "max_gap_us": r.max_gap_us.load(Relaxed),
            })
        }),
        "leaked_buffers": facts.leaked_buffers,
        "pool": facts.pool,
    })
}
