//! `wasmdp bench`: each engine x kernel variant through the real poll loop on null ports.
//!
//! A cell is a whole run of the dataplane: two null ports, paired (two streams), one worker lcore,
//! RX allocating from the pool and filling from the template, TX freeing, exactly as `wasmdp run`
//! does. Each cell is repeated and reported as the median with min and max.

use crate::config::{self, Config};
use crate::dataplane::{self, Overrides, RunOptions};
use crate::simd::Simd;
use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// `wasmdp bench` options.
#[derive(Debug, Args, Clone)]
pub struct BenchArgs {
    /// Seconds per repetition of a cell.
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
    /// Repetitions per cell (median, min and max are reported).
    #[arg(long, default_value_t = 3)]
    pub reps: usize,
    /// Engines to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "io,mac,macswap,5tswap,copy")]
    pub engines: Vec<String>,
    /// Kernel variants, comma-separated (default: every variant this CPU supports).
    #[arg(long, value_delimiter = ',')]
    pub simd: Vec<String>,
    /// Frame size in bytes.
    #[arg(long, default_value_t = 64)]
    pub size: usize,
    /// Burst size.
    #[arg(long, default_value_t = 32)]
    pub burst: usize,
    /// Core for the worker (default: the last core).
    #[arg(long)]
    pub lcore: Option<usize>,
    /// A short run: 0.3 s per repetition, io and macswap only.
    #[arg(long)]
    pub quick: bool,
    /// Write the results as JSON to PATH.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
}

/// One measured cell.
#[derive(Debug, Clone)]
pub struct Cell {
    /// Engine name.
    pub engine: String,
    /// Kernel variant.
    pub simd: Simd,
    /// Mpps of each repetition.
    pub mpps: Vec<f64>,
}

impl Cell {
    fn sorted(&self) -> Vec<f64> {
        let mut v = self.mpps.clone();
        v.sort_by(f64::total_cmp);
        v
    }
    /// Median Mpps.
    pub fn median(&self) -> f64 {
        let v = self.sorted();
        v[v.len() / 2]
    }
}

/// The YAML of one cell: two null ports, paired, one lcore.
pub fn cell_yaml(engine: &str, size: usize, burst: usize, lcore: usize) -> String {
    format!(
        "lcores: [{lcore}]\nburst: {burst}\nengine: {engine}\nports:\n  - {{name: p0, driver: null, frame: {{size: {size}}}}}\n  - {{name: p1, driver: null, frame: {{size: {size}}}}}\n"
    )
}

fn run_cell(cfg: &Config, simd: Simd, secs: f64) -> anyhow::Result<f64> {
    let o = Overrides { simd: Some(simd.name().into()), ..Overrides::default() };
    let dp = dataplane::build(cfg, &o)?;
    let opts = RunOptions { duration: Some(Duration::from_secs_f64(secs)), ..RunOptions::default() };
    let report = dataplane::run(dp, &opts, Arc::new(AtomicBool::new(false)))?;
    Ok(report.json["mpps"].as_f64().unwrap_or(0.0))
}

/// Runs the matrix and prints (and optionally writes) the results.
pub fn main(args: &BenchArgs) -> anyhow::Result<()> {
    let mut args = args.clone();
    if args.quick {
        args.seconds = 0.3;
        args.engines = vec!["io".into(), "macswap".into()];
    }
    let variants: Vec<Simd> = if args.simd.is_empty() {
        Simd::supported()
    } else {
        args.simd
            .iter()
            .map(|s| {
                Simd::from_name(s).ok_or_else(|| anyhow::anyhow!("--simd `{s}`: allowed scalar, sse, avx2, avx512"))
            })
            .collect::<Result<_, _>>()?
    };
    let lcore =
        args.lcore.unwrap_or_else(|| core_affinity::get_core_ids().and_then(|c| c.last().map(|c| c.id)).unwrap_or(0));
    println!(
        "wasmdp bench: null ports x2 paired, {} B frames, burst {}, lcore {lcore}, {} x {:.1} s per cell",
        args.size, args.burst, args.reps, args.seconds
    );
    println!("{:<8} {:<7} {:>10} {:>10} {:>10} {:>9}", "engine", "simd", "Mpps", "min", "max", "ns/pkt");
    let mut cells = Vec::new();
    for engine in &args.engines {
        let cfg = config::parse(&cell_yaml(engine, args.size, args.burst, lcore), "bench")?;
        for &simd in &variants {
            let mpps = (0..args.reps.max(1))
                .map(|_| run_cell(&cfg, simd, args.seconds))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let cell = Cell { engine: engine.clone(), simd, mpps };
            let s = cell.sorted();
            println!(
                "{:<8} {:<7} {:>10.2} {:>10.2} {:>10.2} {:>9.2}",
                engine,
                simd.name(),
                cell.median(),
                s[0],
                s[s.len() - 1],
                1e3 / cell.median()
            );
            cells.push(cell);
        }
    }
    if let Some(path) = &args.json {
        let arr: Vec<_> = cells
            .iter()
            .map(|c| {
                let s = c.sorted();
                json!({"engine": c.engine, "path": "native", "simd": c.simd.name(), "pkt_size": args.size, "burst": args.burst,
                       "mpps": c.median(), "mpps_min": s[0], "mpps_max": s[s.len()-1], "ns_per_pkt": 1e3 / c.median(), "ratio_to_native": 1.0})
            })
            .collect();
        std::fs::write(path, serde_json::to_string_pretty(&json!({"results": arr}))? + "\n")
            .map_err(|e| anyhow::anyhow!("--json {}: {e}", path.display()))?;
    }
    Ok(())
}
