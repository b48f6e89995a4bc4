//! `wasmdp bench`: engines x paths x kernel variants through the real poll loop on null ports.
//!
//! A cell is a whole run of the dataplane: two null ports, paired (two streams), one worker lcore,
//! RX allocating from the pool and filling from the template, TX freeing, exactly as `wasmdp run`
//! does. The path says who decides per burst: the config (`native`), a plugin calling the native
//! engine every burst (`plugin`), a plugin that decided once (`plugin-sticky`), or a plugin doing the
//! work itself in WebAssembly (`wasm`, macswap only). Each cell is repeated; the median is reported
//! with min and max, and its ratio to the native cell of the same engine and variant (paths run in
//! turn, repetition by repetition, and the ratio is the median of the per-repetition ratios).

mod calls;
mod cell;
mod report;

pub use cell::{BenchPath, Cell};

use crate::simd::Simd;
use clap::Args;
use std::path::PathBuf;

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
    /// Paths, comma-separated: native, plugin, plugin-sticky, wasm (wasm: macswap only).
    #[arg(long, value_delimiter = ',', default_value = "native,plugin,plugin-sticky,wasm")]
    pub paths: Vec<String>,
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
    /// Where the example plugins are (built by scripts/build-plugins.sh).
    #[arg(long, default_value = "plugins/target/wasm32-unknown-unknown/release")]
    pub plugins: PathBuf,
    /// A short run: 0.3 s per repetition, io and macswap only, the detected kernel variant.
    #[arg(long)]
    pub quick: bool,
    /// Also measure the cost of one host->plugin and one plugin->host call.
    #[arg(long)]
    pub calls: bool,
    /// Write the results as JSON to PATH.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
}

/// Runs the matrix and prints (and optionally writes) the results.
pub fn main(args: &BenchArgs) -> anyhow::Result<()> {
    let mut args = args.clone();
    if args.quick {
        args.seconds = 0.3;
        args.engines = vec!["io".into(), "macswap".into()];
        if args.simd.is_empty() {
            args.simd = vec![Simd::detect().name().into()];
        }
    }
    let variants = variants(&args.simd)?;
    let paths = args
        .paths
        .iter()
        .map(|p| BenchPath::from_name(p).ok_or_else(|| anyhow::anyhow!("--paths `{p}`: allowed {}", BenchPath::NAMES)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let lcore =
        args.lcore.unwrap_or_else(|| core_affinity::get_core_ids().and_then(|c| c.last().map(|c| c.id)).unwrap_or(0));
    let mut out = report::Table::start(&args, lcore);
    let mut cells = Vec::new();
    for engine in &args.engines {
        let paths: Vec<_> = paths.iter().copied().filter(|p| p.applies_to(engine)).collect();
        for &simd in &variants {
            for c in cell::measure_group(&args, engine, &paths, simd, lcore)? {
                out.row(&c);
                cells.push(c);
            }
        }
    }
    let calls = if args.calls { Some(calls::measure()?) } else { None };
    if let Some(c) = &calls {
        println!(
            "call cost: host->plugin {:.1} ns, plugin->host {:.1} ns (median of 5)",
            c.host_to_plugin_ns, c.plugin_to_host_ns
        );
    }
    if let Some(path) = &args.json {
        report::write_json(path, &args, &cells, calls.as_ref())?;
    }
    Ok(())
}

fn variants(names: &[String]) -> anyhow::Result<Vec<Simd>> {
    if names.is_empty() {
        return Ok(Simd::supported());
    }
    names
        .iter()
        .map(|s| {
            let v =
                Simd::from_name(s).ok_or_else(|| anyhow::anyhow!("--simd `{s}`: allowed scalar, sse, avx2, avx512"))?;
            crate::simd::resolve(crate::simd::SimdChoice::Fixed(v)).map_err(|e| anyhow::anyhow!(e))
        })
        .collect()
}
