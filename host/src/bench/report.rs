//! The bench's table and JSON.

use super::calls::CallCost;
use super::clock::TscRate;
use super::{BenchPath, Cell, MatrixArgs};
use indicatif::ProgressBar;
use serde_json::{json, Value};
use std::path::Path;

/// The printed table.
pub struct Table;

impl Table {
    /// Prints the header.
    pub fn start(args: &MatrixArgs, lcore: usize, bar: &ProgressBar) -> Table {
        say(
            bar,
            format!(
            "wasmdp bench: null ports x2 paired, lcore {lcore}, warm-up + {} x {:.2} s per cell; Mpps median (min-max)",
            args.reps, args.seconds
        ),
        );
        say(
            bar,
            format!(
                "{:<12} {:<14} {:<7} {:>5} {:>5} {:>9} {:>9} {:>9} {:>8} {:>9} {:>9}",
                "engine", "path", "simd", "size", "burst", "Mpps", "min", "max", "ns/pkt", "cyc/pkt", "x native"
            ),
        );
        Table
    }

    /// Prints one cell.
    pub fn row(&mut self, c: &Cell, tsc: Option<&TscRate>, bar: &ProgressBar) {
        let s = c.sorted();
        let of_io = if c.baseline == Some(super::BenchPath::Io) { " io" } else { "" };
        let ratio = c.ratio().map(|r| format!("{r:.3}{of_io}")).unwrap_or_else(|| "-".into());
        let ns = 1e3 / c.median();
        let cycles = tsc.map(|t| format!("{:.1}", ns * t.0)).unwrap_or_else(|| "-".into());
        say(
            bar,
            format!(
                "{:<12} {:<14} {:<7} {:>5} {:>5} {:>9.2} {:>9.2} {:>9.2} {:>8.2} {:>9} {:>9}",
                c.engine,
                c.path.name(),
                c.simd.name(),
                c.size,
                c.burst,
                c.median(),
                s[0],
                s[s.len() - 1],
                ns,
                cycles,
                ratio
            ),
        );
    }
}

/// Writes `{"results": [cells...], "calls": {...}, "tsc_ghz": ...}`.
pub fn write_json(path: &Path, cells: &[Cell], calls: Option<&CallCost>, tsc: Option<&TscRate>) -> anyhow::Result<()> {
    let results: Vec<Value> = cells
        .iter()
        .map(|c| {
            let s = c.sorted();
            let ns = 1e3 / c.median();
            json!({
                "engine": c.engine, "path": c.path.name(), "simd": c.simd.name(), "pkt_size": c.size,
                "burst": c.burst, "mpps": c.median(), "mpps_min": s[0], "mpps_max": s[s.len() - 1],
                "ns_per_pkt": ns, "cycles_per_pkt": tsc.map(|t| ns * t.0),
                "ratio_to_native": c.ratio().filter(|_| c.baseline == Some(BenchPath::Native)),
                "ratio_to_io": c.ratio().filter(|_| c.baseline == Some(BenchPath::Io)),
                "reps": c.mpps,
            })
        })
        .collect();
    let mut doc = json!({ "results": results, "tsc_ghz": tsc.map(|t| t.0) });
    if let Some(c) = calls {
        doc["calls"] = json!({"host_to_plugin_ns": c.host_to_plugin_ns, "plugin_to_host_ns": c.plugin_to_host_ns,
            "copy64_raw_ns": c.copy64_raw_ns, "copy64_instrumented_ns": c.copy64_instrumented_ns});
    }
    std::fs::write(path, serde_json::to_string_pretty(&doc)? + "\n")
        .map_err(|e| anyhow::anyhow!("--json {}: {e}", path.display()))
}

/// Prints a line above the progress bar, or plainly when there is no bar (not a terminal).
fn say(bar: &ProgressBar, line: String) {
    if bar.is_hidden() {
        crate::output::print_lossy(&format!("{line}\n"));
    } else {
        bar.println(line);
    }
}
