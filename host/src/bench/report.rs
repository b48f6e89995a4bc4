//! The bench's table and JSON.

use super::calls::CallCost;
use super::{BenchArgs, Cell};
use serde_json::{json, Value};
use std::path::Path;

/// The printed table.
pub struct Table;

impl Table {
    /// Prints the header.
    pub fn start(args: &BenchArgs, lcore: usize) -> Table {
        println!(
            "wasmdp bench: null ports x2 paired, {} B frames, burst {}, lcore {lcore}, {} x {:.1} s per cell",
            args.size, args.burst, args.reps, args.seconds
        );
        println!(
            "{:<8} {:<14} {:<7} {:>9} {:>9} {:>9} {:>8} {:>9}",
            "engine", "path", "simd", "Mpps", "min", "max", "ns/pkt", "x native"
        );
        Table
    }

    /// Prints one cell.
    pub fn row(&mut self, c: &Cell) {
        let s = c.sorted();
        let ratio = c.ratio().map(|r| format!("{r:.3}")).unwrap_or_else(|| "-".into());
        println!(
            "{:<8} {:<14} {:<7} {:>9.2} {:>9.2} {:>9.2} {:>8.2} {:>9}",
            c.engine,
            c.path.name(),
            c.simd.name(),
            c.median(),
            s[0],
            s[s.len() - 1],
            1e3 / c.median(),
            ratio
        );
    }
}

/// Writes `{"results": [cells...], "calls": {...}}`.
pub fn write_json(path: &Path, args: &BenchArgs, cells: &[Cell], calls: Option<&CallCost>) -> anyhow::Result<()> {
    let results: Vec<Value> = cells
        .iter()
        .map(|c| {
            let s = c.sorted();
            json!({
                "engine": c.engine, "path": c.path.name(), "simd": c.simd.name(), "pkt_size": args.size,
                "burst": args.burst, "mpps": c.median(), "mpps_min": s[0], "mpps_max": s[s.len() - 1],
                "ns_per_pkt": 1e3 / c.median(), "ratio_to_native": c.ratio(),
            })
        })
        .collect();
    let mut doc = json!({ "results": results });
    if let Some(c) = calls {
        doc["calls"] = json!({"host_to_plugin_ns": c.host_to_plugin_ns, "plugin_to_host_ns": c.plugin_to_host_ns});
    }
    std::fs::write(path, serde_json::to_string_pretty(&doc)? + "\n")
        .map_err(|e| anyhow::anyhow!("--json {}: {e}", path.display()))
}
