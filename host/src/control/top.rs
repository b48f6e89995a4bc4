//! `wasmdp ctl top`: a live per-port and per-stream view, refreshed every second from the control
//! socket's `stats`: packets and bits per second, drops per second by reason (counted, as testpmd
//! does, on the port that would have transmitted), and on the port where a policy runs its calls,
//! the packets it dropped, its events, and per link of its chain the time per call (a call is a
//! burst) and its own counters.
//! On a terminal the screen is redrawn in place (crossterm); otherwise each view is printed after
//! the previous one.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// Runs for `count` refreshes (0: until interrupted).
pub fn run(path: &Path, count: u64) -> anyhow::Result<()> {
    let mut prev: Option<(Value, Instant)> = None;
    let tty = std::io::stdout().is_terminal();
    let mut shown = 0;
    loop {
        let answer = super::request(path, &json!({"cmd": "stats"}))?;
        let now = Instant::now();
        let stats = answer["result"].clone();
        if let Some((before, at)) = &prev {
            let secs = now.duration_since(*at).as_secs_f64().max(1e-3);
            let text = view(before, &stats, secs);
            let mut out = std::io::stdout().lock();
            if tty {
                use crossterm::{cursor::MoveTo, terminal::Clear, terminal::ClearType, QueueableCommand};
                out.queue(MoveTo(0, 0))?.queue(Clear(ClearType::All))?;
            }
            write!(out, "{text}")?;
            if !tty {
                writeln!(out)?;
            }
            out.flush()?;
            shown += 1;
            if count != 0 && shown >= count {
                return Ok(());
            }
        }
        prev = Some((stats, now));
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Per second between two `stats` documents.
fn rate(a: &Value, b: &Value, key: &str, secs: f64) -> f64 {
    (b[key].as_u64().unwrap_or(0).saturating_sub(a[key].as_u64().unwrap_or(0))) as f64 / secs
}

fn si(v: f64) -> String {
    match v {
        v if v >= 1e9 => format!("{:.2}G", v / 1e9),
        v if v >= 1e6 => format!("{:.2}M", v / 1e6),
        v if v >= 1e3 => format!("{:.1}k", v / 1e3),
        v => format!("{v:.0}"),
    }
}

/// Drops per second by reason, the nonzero ones.
fn drops(a: &Value, b: &Value, secs: f64) -> String {
    let (a, b) = (&a["dropped_by_reason"], &b["dropped_by_reason"]);
    let per: BTreeMap<&str, f64> = b
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| (k.as_str(), rate(a, b, k, secs)))
        .filter(|(_, v)| *v > 0.0)
        .collect();
    if per.is_empty() {
        return "-".into();
    }
    per.iter().map(|(k, v)| format!("{k} {}", si(*v))).collect::<Vec<_>>().join(", ")
}

/// The links of the ports' policies, one line each: calls and drops per second, traps, the mean
/// time of a call (sampled; a call is a burst), and the rates of the policy's own counters, as
/// Envoy shows per filter.
fn links(pa: &[Value], pb: &[Value], secs: f64) -> String {
    let empty = vec![];
    let mut out = String::new();
    for (x, y) in pa.iter().zip(pb) {
        let (lx, ly) = (x["plugin_links"].as_array().unwrap_or(&empty), y["plugin_links"].as_array().unwrap_or(&empty));
        if out.is_empty() && !ly.is_empty() {
            out += "\nPOLICY (PORT/LINK)   calls/s  traps   drops/s  us/call  its counters /s\n";
        }
        for l in ly {
            let before = lx.iter().find(|k| k["link"] == l["link"]).unwrap_or(l);
            let own: Vec<String> = l["counters"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(name, _)| format!("{name} {}", si(rate(&before["counters"], &l["counters"], name, secs))))
                .collect();
            out += &format!(
                "{:<20} {:>7}  {:>5}  {:>8}  {:>7.1}  {}\n",
                format!("{}/{}", y["name"].as_str().unwrap_or(""), l["link"].as_str().unwrap_or("")),
                si(rate(before, l, "calls", secs)),
                l["traps"].as_u64().unwrap_or(0),
                si(rate(before, l, "drops", secs)),
                l["ns_per_call"].as_f64().unwrap_or(0.0) / 1e3,
                if own.is_empty() { "-".into() } else { own.join(", ") }
            );
        }
    }
    out
}

/// The screen.
fn view(a: &Value, b: &Value, secs: f64) -> String {
    let mut out = format!(
        "wasmdp top   up {:.0} s   {:.2} Mpps transmitted   simd {}\n\nPORT          RX pps    RX bps    TX pps    TX bps  calls/s  traps  pol drops/s  events/s  drops/s by reason\n",
        b["duration_s"].as_f64().unwrap_or(0.0),
        rate(&a["totals"], &b["totals"], "tx_packets", secs) / 1e6,
        b["simd"].as_str().unwrap_or("")
    );
    let empty = vec![];
    let (pa, pb) = (a["ports"].as_array().unwrap_or(&empty), b["ports"].as_array().unwrap_or(&empty));
    for (x, y) in pa.iter().zip(pb) {
        // A policy's figures on the port where it runs (its drops also count, by reason, on the
        // port that would have transmitted them).
        let policy = |k: &str| y.get(k).map_or("-".into(), |_| si(rate(x, y, k, secs)));
        out += &format!(
            "{:<12} {:>8}  {:>8}  {:>8}  {:>8}  {:>7}  {:>5}  {:>11}  {:>8}  {}\n",
            y["name"].as_str().unwrap_or(""),
            si(rate(x, y, "rx_packets", secs)),
            si(rate(x, y, "rx_bytes", secs) * 8.0),
            si(rate(x, y, "tx_packets", secs)),
            si(rate(x, y, "tx_bytes", secs) * 8.0),
            policy("plugin_calls"),
            y.get("plugin_traps").map_or("-".into(), |t| t.to_string()),
            policy("plugin_drops"),
            policy("plugin_events"),
            drops(x, y, secs)
        );
    }
    out += &links(pa, pb, secs);
    out += "\nSTREAM                  ENGINE        RX pps    TX pps  drops/s by reason\n";
    let (sa, sb) = (a["streams"].as_array().unwrap_or(&empty), b["streams"].as_array().unwrap_or(&empty));
    for (x, y) in sa.iter().zip(sb) {
        let name = format!(
            "{}/{} -> {}",
            y["rx_port"].as_str().unwrap_or(""),
            y["rx_queue"],
            y["tx_port"].as_str().unwrap_or("")
        );
        out += &format!(
            "{:<23} {:<12} {:>8}  {:>8}  {}\n",
            name,
            y["engine"].as_str().unwrap_or(""),
            si(rate(x, y, "rx_packets", secs)),
            si(rate(x, y, "tx_packets", secs)),
            drops(x, y, secs)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_chain_shows_a_line_per_link_with_its_rates_and_counters() {
        let snap = |calls: u64, drops: u64| {
            json!({"ports": [{"name": "a", "plugin_calls": calls * 2, "plugin_drops": drops, "plugin_events": calls / 100,
                "plugin_links": [
                {"link": "acl", "calls": calls, "traps": 0, "drops": drops, "ns_per_call": 1500, "counters": {"denied": drops}},
                {"link": "lb", "calls": calls, "traps": 2, "drops": 0, "ns_per_call": 800, "counters": {}}]},
                {"name": "b"}], "streams": [], "totals": {}})
        };
        let text = view(&snap(100, 0), &snap(1100, 5000), 1.0);
        assert!(text.contains("a/acl                   1.0k      0      5.0k      1.5  denied 5.0k"), "{text}");
        assert!(text.contains("a/lb                    1.0k      2         0      0.8  -"), "{text}");
        // The policy's drops and events on its own port's line.
        assert!(text.contains("2.0k      -         5.0k        10"), "{text}");
    }

    #[test]
    fn a_single_policy_shows_its_link_line_and_a_port_without_one_dashes() {
        let snap = |n: u64| {
            json!({"ports": [{"name": "fw", "plugin_calls": n, "plugin_drops": n * 3, "plugin_links": [
                {"link": "firewall", "calls": n, "drops": n * 3, "traps": 0, "ns_per_call": 2000, "counters": {"denied": n * 3}}]},
                {"name": "out"}], "streams": [], "totals": {}})
        };
        let text = view(&snap(0), &snap(1000), 1.0);
        assert!(text.contains("fw/firewall"), "{text}");
        assert!(text.contains("denied 3.0k"), "{text}");
        let out_line = text.lines().find(|l| l.starts_with("out ")).unwrap();
        assert!(out_line.contains("-      -            -         -"), "{out_line}");
    }
}
