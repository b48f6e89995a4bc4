//! Prometheus metrics: `GET /metrics` on `metrics.listen`, served by a thread of its own from the
//! same counters the control socket reads (atomics the workers write; a scrape takes no lock a
//! worker takes). Each scrape fills a fresh `prometheus-client` registry from a snapshot and encodes
//! it in the text format.

use super::http::Answer;
use super::state::State;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;

type Labels = Vec<(String, String)>;

/// Serves `addr` until `stop` (a thread of its own: [`super::http`]).
pub fn spawn(addr: SocketAddr, state: Arc<State>, stop: Arc<AtomicBool>) -> anyhow::Result<JoinHandle<()>> {
    let handler = move |path: &str| match path {
        "/metrics" => Answer {
            status: "200 OK",
            content_type: "text/plain; version=0.0.4; charset=utf-8",
            body: render(&state).into_bytes(),
        },
        _ => Answer { status: "404 Not Found", content_type: "text/plain", body: b"wasmdp: GET /metrics\n".to_vec() },
    };
    let thread =
        super::http::spawn(addr, Box::new(handler), stop).map_err(|e| anyhow::anyhow!("metrics.listen {addr}: {e}"))?;
    tracing::info!("metrics: http://{addr}/metrics");
    Ok(thread)
}

/// Label pairs, each value escaped as the text format requires (`\`, `"` and newline):
/// `prometheus-client` writes label values as they are, and plugin counter, gauge and map names,
/// port names and file names are anyone's text.
fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs.iter().map(|(k, v)| (k.to_string(), escape(v))).collect()
}

/// `v` as a label value of the exposition format.
pub fn escape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A counter family registered under `name`.
fn counters(reg: &mut Registry, name: &str, help: &str) -> Family<Labels, Counter> {
    let f = Family::<Labels, Counter>::default();
    reg.register(name, help, f.clone());
    f
}

/// A gauge family registered under `name`.
fn gauges(reg: &mut Registry, name: &str, help: &str) -> Family<Labels, Gauge> {
    let f = Family::<Labels, Gauge>::default();
    reg.register(name, help, f.clone());
    f
}

/// The exposition text of everything, now.
pub fn render(st: &State) -> String {
    let mut reg = Registry::with_prefix("wasmdp");
    let json = super::commands::live(st);
    let info = gauges(&mut reg, "build_info", "Build information (value 1)");
    let abi = format!("{}.{}", wasmdp_abi::ABI_MAJOR, wasmdp_abi::ABI_MINOR);
    info.get_or_create(&labels(&[("version", env!("CARGO_PKG_VERSION")), ("abi", &abi), ("simd", &st.simd)])).set(1);
    port_metrics(&mut reg, &json);
    stream_metrics(&mut reg, &json);
    plugin_metrics(&mut reg, &json, st);
    reload_metrics(&mut reg, st);
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = encode(&mut out, &reg);
    prometheus_text(&out)
}

/// The OpenMetrics text `prometheus-client` writes, as the Prometheus text format (0.0.4) that
/// Prometheus scrapes by default and `promtool check metrics` checks: a counter's HELP and TYPE
/// name its samples (`..._total`), and there is no `# EOF` or `# UNIT`.
fn prometheus_text(open: &str) -> String {
    let counters: std::collections::HashSet<&str> =
        open.lines().filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" counter")).collect();
    let mut out = String::with_capacity(open.len());
    for line in open.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let meta = ["# HELP ", "# TYPE "].into_iter().find(|p| line.starts_with(p));
        match meta.and_then(|p| line[p.len()..].split_once(' ').map(|(name, rest)| (p, name, rest))) {
            Some((p, name, rest)) if counters.contains(name) => out += &format!("{p}{name}_total {rest}\n"),
            _ => {
                out += line;
                out.push('\n');
            }
        }
    }
    out
}

fn port_metrics(reg: &mut Registry, json: &serde_json::Value) {
    let names = [
        ("rx_packets", "Packets received"),
        ("tx_packets", "Packets transmitted"),
        ("rx_bytes", "Bytes received"),
        ("tx_bytes", "Bytes transmitted"),
        ("rx_nombuf", "Packets not received for lack of buffers"),
        ("rx_missed", "Frames the kernel lost because the port's ring was full"),
    ];
    let fams: Vec<_> = names.iter().map(|(n, h)| (n, counters(reg, &format!("port_{n}"), h))).collect();
    let drops = counters(reg, "port_dropped", "Packets dropped on the port, by reason");
    for p in json["ports"].as_array().into_iter().flatten() {
        let port = p["name"].as_str().unwrap_or("");
        for (n, f) in &fams {
            f.get_or_create(&labels(&[("port", port)])).inc_by(p[**n].as_u64().unwrap_or(0));
        }
        for (reason, v) in p["dropped_by_reason"].as_object().into_iter().flatten() {
            drops.get_or_create(&labels(&[("port", port), ("reason", reason)])).inc_by(v.as_u64().unwrap_or(0));
        }
    }
}

fn stream_metrics(reg: &mut Registry, json: &serde_json::Value) {
    let rx = counters(reg, "stream_rx_packets", "Packets received by the stream");
    let tx = counters(reg, "stream_tx_packets", "Packets the stream transmitted");
    let drops = counters(reg, "stream_dropped", "Packets the stream dropped, by reason");
    for s in json["streams"].as_array().into_iter().flatten() {
        let (port, queue) = (s["rx_port"].as_str().unwrap_or(""), s["rx_queue"].to_string());
        let l = labels(&[("port", port), ("queue", &queue)]);
        rx.get_or_create(&l).inc_by(s["rx_packets"].as_u64().unwrap_or(0));
        tx.get_or_create(&l).inc_by(s["tx_packets"].as_u64().unwrap_or(0));
        for (reason, v) in s["dropped_by_reason"].as_object().into_iter().flatten() {
            let l = labels(&[("port", port), ("queue", &queue), ("reason", reason)]);
            drops.get_or_create(&l).inc_by(v.as_u64().unwrap_or(0));
        }
    }
}

fn plugin_metrics(reg: &mut Registry, json: &serde_json::Value, st: &State) {
    let shown = st.plugins.lock().unwrap_or_else(|p| p.into_inner()).clone();
    // A link's module, by its file's stem.
    let plugin_of = |i: usize, link: &str| {
        let path = shown.get(i).and_then(|c| c.iter().find(|f| f.link == link)).map(|f| f.path.clone());
        let path = path.unwrap_or_default();
        let stem = std::path::Path::new(&path).file_stem().map(|s| s.to_string_lossy().into_owned());
        stem.unwrap_or_default()
    };
    let names = ["calls", "traps", "timeouts", "errors", "sticky", "ticks", "drops"];
    let fams: Vec<_> = names
        .iter()
        .map(|n| (n, counters(reg, &format!("plugin_{n}"), &format!("Plugin {n} on the port, by link of its chain"))))
        .collect();
    let own = counters(reg, "plugin_defined", "Counters the plugin defined, by name");
    let levels = gauges(reg, "plugin_level", "Gauges the plugin defined, by name");
    let entries = gauges(reg, "plugin_map_entries", "Entries in the port's map");
    let evicted = counters(reg, "plugin_map_evicted", "Entries an LRU map evicted to make room");
    let expired = counters(reg, "plugin_map_expired", "Expired entries the map freed");
    let disabled = gauges(reg, "plugin_disabled_streams", "Streams on which the plugin is disabled");
    let events = counters(reg, "plugin_events", "Events the port's policies appended to its event ring");
    let events_lost = counters(reg, "plugin_events_lost", "Events lost because the port's event ring was full");
    let per_call = Family::<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>::default();
    reg.register(
        "plugin_call_seconds",
        "Mean time of a call into the link's plugin (one call in 64 timed)",
        per_call.clone(),
    );
    let ports = json["ports"].as_array().into_iter().flatten().enumerate();
    for (i, p) in ports.filter(|(_, p)| p.get("plugin_calls").is_some()) {
        let port = p["name"].as_str().unwrap_or("");
        for l in p["plugin_links"].as_array().into_iter().flatten() {
            let link = l["link"].as_str().unwrap_or("");
            let plugin = plugin_of(i, link);
            let base = labels(&[("port", port), ("link", link), ("plugin", &plugin)]);
            for (n, f) in &fams {
                f.get_or_create(&base).inc_by(l[**n].as_u64().unwrap_or(0));
            }
            disabled.get_or_create(&base).set(l["disabled"].as_i64().unwrap_or(0));
            per_call.get_or_create(&base).set(l["ns_per_call"].as_u64().unwrap_or(0) as f64 / 1e9);
            let with = |k: &str, v: &str| labels(&[("port", port), ("link", link), ("plugin", &plugin), (k, v)]);
            for (name, v) in l["counters"].as_object().into_iter().flatten() {
                own.get_or_create(&with("name", name)).inc_by(v.as_u64().unwrap_or(0));
            }
            for (name, v) in l["gauges"].as_object().into_iter().flatten() {
                levels.get_or_create(&with("name", name)).set(v.as_i64().unwrap_or(0));
            }
        }
        // The event ring is the port's, as the maps.
        let port_only = labels(&[("port", port)]);
        events.get_or_create(&port_only).inc_by(p["plugin_events"].as_u64().unwrap_or(0));
        events_lost.get_or_create(&port_only).inc_by(p["plugin_events_lost"].as_u64().unwrap_or(0));
        // The maps are the port's: its chain's links share one namespace.
        for m in p["plugin_maps"].as_array().into_iter().flatten() {
            let map = labels(&[("port", port), ("map", m["name"].as_str().unwrap_or(""))]);
            entries.get_or_create(&map).set(m["entries"].as_i64().unwrap_or(0));
            evicted.get_or_create(&map).inc_by(m["evicted"].as_u64().unwrap_or(0));
            expired.get_or_create(&map).inc_by(m["expired"].as_u64().unwrap_or(0));
        }
    }
}

fn reload_metrics(reg: &mut Registry, st: &State) {
    let r = &st.reloads;
    let reloads = counters(reg, "reloads", "Config reloads, by outcome");
    reloads.get_or_create(&labels(&[("outcome", "applied")])).inc_by(r.applied.load(Relaxed));
    reloads.get_or_create(&labels(&[("outcome", "rejected")])).inc_by(r.rejected.load(Relaxed));
    let g = gauges(reg, "reload_generation", "The configuration generation running (0: as started)");
    g.get_or_create(&Vec::new()).set(r.generation.load(Relaxed) as i64);
    let last = Family::<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>::default();
    reg.register("reload_last_switch_seconds", "Event to all workers switched, last reload", last.clone());
    last.get_or_create(&Vec::new()).set(r.last_us.load(Relaxed) as f64 / 1e6);
    let pool = gauges(reg, "pool_buffers", "Packet buffers of the pool, by state");
    let (cap, free) = (st.pool.capacity() as i64, st.pool.available() as i64);
    pool.get_or_create(&labels(&[("state", "free")])).set(free);
    pool.get_or_create(&labels(&[("state", "in_use")])).set(cap - free);
    let up = gauges(reg, "uptime_seconds", "Seconds since forwarding started");
    up.get_or_create(&Vec::new()).set(st.start.elapsed().as_secs() as i64);
}
