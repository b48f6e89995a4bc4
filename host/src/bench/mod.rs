//! `wasmdp bench`: engines x paths x kernel variants x frame sizes x bursts through the real poll
//! loop on null ports, and `wasmdp bench memcpy`, the memcpy table.
//!
//! A cell is a whole run of the dataplane: two null ports, paired (two streams), one worker lcore,
//! RX allocating from the pool and filling from the template, TX freeing, exactly as `wasmdp run`
//! does. The path says who decides per burst: the config (`native`), a plugin calling the native
//! engine every burst (`plugin`), a plugin that decided once (`plugin-sticky`), or an example plugin
//! doing the work itself in WebAssembly (`wasm`: macswap, the vxlan engines, and the per-packet
//! examples acl, dnat, dscp_remark, l4_lb and ratelimit, which have no native engine and are measured
//! against `io` on the same ports and frames). Each cell is repeated after a warm-up run; the median is reported with
//! min and max, and its ratio to the native cell (or, for the examples, the io cell) of the same
//! engine, variant, size and burst (paths run in turn, repetition by repetition, and the ratio is the
//! median of the per-repetition ratios). Kernel-only figures are `cargo bench --bench kernels` and `bench memcpy`.

mod calls;
mod cell;
mod clock;
mod memcpy;
mod report;
mod svg;
mod user;

pub use cell::{BenchPath, Cell};
pub use memcpy::MemcpyArgs;
pub use user::UserPlugin;

use crate::simd::Simd;
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;

/// `wasmdp bench` options.
#[derive(Debug, Args, Clone)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BenchArgs {
    /// A separate benchmark instead of the forwarding matrix.
    #[command(subcommand)]
    pub what: Option<BenchWhat>,
    /// The matrix's options.
    #[command(flatten)]
    pub matrix: MatrixArgs,
}

/// Benchmarks other than the forwarding matrix.
#[derive(Debug, Subcommand, Clone)]
pub enum BenchWhat {
    /// The memcpy table (layout of DPDK's memcpy_perf_autotest): wasmdp's memcpy vs libc's.
    Memcpy(MemcpyArgs),
}

/// The forwarding matrix's options.
#[derive(Debug, Args, Clone)]
pub struct MatrixArgs {
    /// Seconds per repetition of a cell (0.01..=3600).
    #[arg(long, default_value_t = 0.25, value_parser = bench_seconds)]
    pub seconds: f64,
    /// Repetitions per cell (median, min and max are reported), after one warm-up run (1..=1000).
    #[arg(long, default_value_t = 3, value_parser = |s: &str| crate::config::in_range(s, 1, 1000))]
    pub reps: usize,
    /// Engines to measure, comma-separated; also the per-packet example plugins acl, dnat,
    /// dscp_remark, l4_lb and ratelimit (measured on the `wasm` path against `io`).
    #[arg(long, value_delimiter = ',', default_value = "io,mac,macswap,5tswap,copy")]
    pub engines: Vec<String>,
    /// Paths, comma-separated: native (the engine; for a per-packet example, its native build),
    /// plugin, plugin-sticky, wasm (an example plugin doing the work in WebAssembly: wasm_macswap
    /// for macswap, the vxlan plugins for the vxlan engines, the per-packet examples), native-build
    /// (that plugin's source compiled into the host), io and no-prefetch (the io engine on the same
    /// frames, for the tunnel engines and the examples; the engine without the metadata prefetch).
    /// Each engine runs the paths that apply to it.
    #[arg(long, value_delimiter = ',', default_value = "native,plugin,plugin-sticky,wasm,native-build,io,no-prefetch")]
    pub paths: Vec<String>,
    /// Kernel variants, comma-separated (default: every variant this CPU supports).
    #[arg(long, value_delimiter = ',')]
    pub simd: Vec<String>,
    /// Frame sizes in bytes, comma-separated (each 60..=9000).
    #[arg(long, value_delimiter = ',', default_value = "64,128,256,512,1024,1518",
        value_parser = |s: &str| crate::config::in_range(s, 60, 9000))]
    pub sizes: Vec<usize>,
    /// Burst sizes, comma-separated (each 1..=512).
    #[arg(long, value_delimiter = ',', default_value = "8,32,64,128", value_parser = crate::config::parse_burst)]
    pub bursts: Vec<usize>,
    /// Core for the worker (default: the last core).
    #[arg(long, value_parser = |s: &str| crate::config::in_range(s, 0, crate::config::MAX_LCORE))]
    pub lcore: Option<usize>,
    /// Where the example plugins are (built by scripts/build-plugins.sh).
    #[arg(long, default_value = "plugins/target/wasm32-unknown-unknown/release")]
    pub plugins: PathBuf,
    /// A short run (about a minute): io, macswap, vxlan_decap and vxlan_encap on every path and the
    /// per-packet examples (acl, dnat, dscp_remark, l4_lb, ratelimit), 64 B, burst 32, the detected
    /// kernel variant, 0.3 s per repetition; with `--plugin`, that plugin alone at 64 B, burst 32.
    #[arg(long)]
    pub quick: bool,
    /// Your plugin instead of the engines: measured on the `wasm` path against `io` on the same
    /// ports and frames (and against `--native`), in the same cells and JSON keys as the examples;
    /// its cells are named by the file's stem.
    #[arg(long, value_name = "FILE.wasm", conflicts_with = "engines")]
    pub plugin: Option<PathBuf>,
    /// The params of `--plugin`, comma-separated `KEY=VALUE` (values are strings, as in the YAML).
    #[arg(long, value_delimiter = ',', value_name = "K=V,...", requires = "plugin")]
    pub params: Vec<String>,
    /// A native engine `--plugin` does the work of (e.g. macswap): measured beside it and the
    /// baseline of its ratios.
    #[arg(long, value_name = "ENGINE", requires = "plugin")]
    pub native: Option<String>,
    /// Also measure the cost of one host->plugin and one plugin->host call.
    #[arg(long)]
    pub calls: bool,
    /// Write the results as JSON to PATH: `{"results": [cells], ...}`.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Draw the main comparison as an SVG chart to PATH.
    #[arg(long, value_name = "PATH")]
    pub svg: Option<PathBuf>,
}

/// Seconds of a bench repetition: 0.01..=3600.
fn bench_seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s.trim().parse().map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !(0.01..=3600.0).contains(&v) {
        return Err(format!("{s}: allowed 0.01 to 3600 seconds"));
    }
    Ok(v)
}

/// Runs what `args` asks for.
pub fn main(args: &BenchArgs) -> anyhow::Result<()> {
    match &args.what {
        Some(BenchWhat::Memcpy(m)) => memcpy::main(m),
        None => matrix(&args.matrix),
    }
}

fn matrix(args: &MatrixArgs) -> anyhow::Result<()> {
    let mut args = args.clone();
    if args.quick {
        args.seconds = 0.3;
        args.engines = ["io", "macswap", "vxlan_decap", "vxlan_encap"].map(String::from).to_vec();
        args.engines.extend(cell::EXAMPLES.iter().map(|(name, _)| name.to_string()));
        args.sizes = vec![64];
        args.bursts = vec![32];
        if args.simd.is_empty() {
            args.simd = vec![Simd::detect().name().into()];
        }
    }
    let user = args.plugin.as_deref().map(|f| UserPlugin::new(f, &args.params, args.native.as_deref())).transpose()?;
    if let Some(u) = &user {
        args.engines = vec![u.name.clone()];
    }
    let variants = variants(&args.simd)?;
    let paths = args
        .paths
        .iter()
        .map(|p| BenchPath::from_name(p).ok_or_else(|| anyhow::anyhow!("--paths `{p}`: allowed {}", BenchPath::NAMES)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let lcore =
        args.lcore.unwrap_or_else(|| core_affinity::get_core_ids().and_then(|c| c.last().map(|c| c.id)).unwrap_or(0));
    let mut groups: Vec<(String, usize, usize, Simd, Vec<BenchPath>)> = Vec::new();
    for e in &args.engines {
        let paths: Vec<_> = match &user {
            Some(u) => paths.iter().copied().filter(|p| p.applies_to_user(u)).collect(),
            None => paths.iter().copied().filter(|p| p.applies_to(e)).collect(),
        };
        if paths.is_empty() {
            anyhow::bail!("--paths {}: none applies to `{e}`", args.paths.join(","));
        }
        for &size in &args.sizes {
            for &burst in &args.bursts {
                for &v in &variants {
                    groups.push((e.clone(), size, burst, v, paths.clone()));
                }
            }
        }
    }
    let total: usize = groups.iter().map(|g| g.4.len()).sum();
    let tsc = clock::TscRate::measure();
    let bar = ProgressBar::new(total as u64).with_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} cells, {elapsed} elapsed, about {eta} left")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut table = report::Table::start(&args, lcore, &bar);
    let mut cells = Vec::new();
    for (engine, size, burst, simd, paths) in groups {
        let spec = cell::Group { engine: &engine, size, burst, simd, paths: &paths, user: user.as_ref() };
        for c in cell::measure_group(&args, &spec, lcore)? {
            table.row(&c, tsc.as_ref(), &bar);
            bar.inc(1);
            cells.push(c);
        }
    }
    bar.finish_and_clear();
    let calls = if args.calls { Some(calls::measure()?) } else { None };
    if let Some(c) = &calls {
        crate::output::print_lossy(&format!(
            "call cost: host->plugin {:.1} ns, plugin->host {:.1} ns; 64 B memory.copy {:.1} ns raw, {:.1} ns in the sandbox (median of 5)\n",
            c.host_to_plugin_ns, c.plugin_to_host_ns, c.copy64_raw_ns, c.copy64_instrumented_ns
        ));
    }
    if let Some(path) = &args.json {
        report::write_json(path, &cells, calls.as_ref(), tsc.as_ref())?;
    }
    if let Some(path) = &args.svg {
        svg::write(path, &cells)?;
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
            let v = crate::simd::Variant::from_name(s)
                .ok_or_else(|| anyhow::anyhow!("--simd `{s}`: allowed scalar, sse, avx2, avx512"))?;
            crate::simd::resolve(crate::simd::SimdChoice::Fixed(v)).map_err(|e| anyhow::anyhow!(e))
        })
        .collect()
}
