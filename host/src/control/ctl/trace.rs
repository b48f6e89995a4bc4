//! `wasmdp ctl trace PORT [--count N]`: the paths of the next packets a port receives, as text
//! (VPP's `show trace`: a block per packet, a line per step) or, with `--json`, as the answer.

use serde_json::Value;
use std::fmt::Write;

/// The answer as text.
pub fn text(r: &Value) -> String {
    let mut out = format!("trace of {}: {} of {} packets\n", r["port"].as_str().unwrap_or(""), r["traced"], r["asked"]);
    let s = |v: &Value| v.as_str().unwrap_or("").to_string();
    for (i, p) in r["packets"].as_array().into_iter().flatten().enumerate() {
        let _ = writeln!(out, "\npacket {}  t={} ns", i + 1, p["ts_ns"]);
        let rx = &p["rx"];
        let _ = writeln!(
            out,
            "  rx      {} queue {}, {} bytes: {}",
            s(&rx["port"]),
            rx["queue"],
            rx["len"],
            spaced(&s(&rx["head"]))
        );
        for l in p["links"].as_array().into_iter().flatten() {
            let len = l["len"].as_u64().map(|n| format!(", {n} bytes")).unwrap_or_default();
            let us = l["ns"].as_f64().unwrap_or(0.0) / 1e3;
            let _ = writeln!(out, "  link    {}: {}{len} (call {us:.1} us)", s(&l["link"]), s(&l["verdict"]));
        }
        let _ = writeln!(out, "  engine  {}", s(&p["engine"]));
        if let Some(tx) = p["tx"].as_object() {
            let offloads: Vec<String> = tx["offloads"].as_array().into_iter().flatten().map(s).collect();
            let offloads = if offloads.is_empty() { "none".into() } else { offloads.join(",") };
            let _ = writeln!(
                out,
                "  tx      {} queue {}, {} bytes, offloads {offloads}: {}",
                s(&tx["port"]),
                tx["queue"],
                tx["len"],
                spaced(&s(&tx["head"]))
            );
        }
        let _ = writeln!(out, "  fate    {}", s(&p["fate"]));
    }
    out
}

/// Hex in groups of two digits.
fn spaced(hex: &str) -> String {
    hex.as_bytes().chunks(2).map(|c| String::from_utf8_lossy(c)).collect::<Vec<_>>().join(" ")
}
