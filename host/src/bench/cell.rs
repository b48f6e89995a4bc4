//! One cell of the matrix: its config and its measurement.

use super::MatrixArgs;
use crate::config;
use crate::dataplane::{self, Overrides, RunOptions};
use crate::plugin::native::PREFIX;
use crate::simd::Simd;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Who decides per burst.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchPath {
    /// The engine from the config; for a per-packet example (no engine of its own), its native
    /// build (`plugin: native:NAME`, the same source as its WebAssembly build).
    Native,
    /// The static-policy plugin calls the native engine every burst.
    Plugin,
    /// The static-policy plugin decides once (sticky); the host repeats it.
    PluginSticky,
    /// The work done inside WebAssembly by an example plugin: wasm-macswap for `macswap`, the
    /// vxlan plugins for the vxlan engines, the per-packet examples (`EXAMPLES`) for themselves.
    Wasm,
    /// The plugin of `wasm` built natively (`plugin: native:NAME`), for the engines that also have
    /// a native engine (`macswap`, the vxlan engines): the wasm tax without the engine's own code.
    NativeBuild,
    /// The `io` engine on the same ports and frames: what a tunnel engine or a per-packet example
    /// costs over forwarding.
    Io,
    /// The engine from the config with `prefetch_flow_meta: false` (tunnel engines).
    NoPrefetch,
}

impl BenchPath {
    /// Accepted names, for errors.
    pub const NAMES: &'static str = "native, plugin, plugin-sticky, wasm, native-build, io, no-prefetch";

    const ALL: [BenchPath; 7] = [
        BenchPath::Native,
        BenchPath::Plugin,
        BenchPath::PluginSticky,
        BenchPath::Wasm,
        BenchPath::NativeBuild,
        BenchPath::Io,
        BenchPath::NoPrefetch,
    ];

    /// The name in the table and the JSON.
    pub fn name(self) -> &'static str {
        match self {
            BenchPath::Native => "native",
            BenchPath::Plugin => "plugin",
            BenchPath::PluginSticky => "plugin-sticky",
            BenchPath::Wasm => "wasm",
            BenchPath::NativeBuild => "native-build",
            BenchPath::Io => "io",
            BenchPath::NoPrefetch => "no-prefetch",
        }
    }

    /// Parses a name.
    pub fn from_name(s: &str) -> Option<BenchPath> {
        BenchPath::ALL.into_iter().find(|p| p.name() == s)
    }

    /// Whether the path exists for this engine: the WebAssembly path (and its native build) for
    /// the engines an example plugin does in WebAssembly and for the per-packet examples, plugins
    /// run the engines the ABI names, the io baseline is for the tunnel engines and the examples,
    /// the prefetch switch for the tunnel engines. The examples' native builds only where the binary
    /// has them.
    pub fn applies_to(self, engine: &str) -> bool {
        let tunnel = config::engine_kind(engine).is_some();
        let example = example(engine).is_some();
        let has_plugin = matches!(engine, "macswap" | "vxlan_decap" | "vxlan_encap");
        // The examples' native builds are in the binary with the feature `native-examples` only.
        let twins = crate::plugin::native::available();
        match self {
            BenchPath::Native => !example || twins,
            BenchPath::Plugin | BenchPath::PluginSticky => crate::engines::ABI_ENGINES.iter().any(|e| e.name == engine),
            BenchPath::Wasm => has_plugin || example,
            BenchPath::NativeBuild => has_plugin && twins,
            BenchPath::Io => tunnel || example,
            BenchPath::NoPrefetch => tunnel,
        }
    }

    /// Whether the path exists for a user's plugin: itself (`wasm`), `io`, and `native` when it
    /// names a native engine.
    pub fn applies_to_user(self, user: &super::UserPlugin) -> bool {
        match self {
            BenchPath::Wasm | BenchPath::Io => true,
            BenchPath::Native => user.native.is_some(),
            _ => false,
        }
    }

    /// Whether this path runs the example plugin's code (WebAssembly or its native build).
    fn runs_plugin(self, engine: &str) -> bool {
        match self {
            BenchPath::Wasm | BenchPath::NativeBuild => true,
            BenchPath::Native => example(engine).is_some(),
            _ => false,
        }
    }

    /// The engine the config of this path names for `engine`.
    fn config_engine(self, engine: &str) -> &str {
        match self {
            BenchPath::Io => "io",
            _ if engine != "macswap" && self.runs_plugin(engine) => "io",
            _ => engine,
        }
    }

    /// The policy of port 192.0.2.`local` (whose tunnel's far end is .`remote`) on this path.
    fn policy(self, engine: &str, plugins: &std::path::Path, (local, remote): (u8, u8)) -> Option<String> {
        let tail = POLICY_TAIL;
        let file = |name: &str| plugins.join(format!("{name}.wasm")).display().to_string();
        if self.runs_plugin(engine) {
            let (name, params) = match engine {
                "macswap" => ("wasm_macswap", String::new()),
                "vxlan_decap" => (engine, format!("local_ip: 192.0.2.{local}, vni: 42")),
                "vxlan_encap" => (engine, format!("vni: 42, local_ip: 192.0.2.{local}, remote_ip: 192.0.2.{remote}")),
                _ => (engine, example(engine).unwrap_or_default().to_string()),
            };
            let plugin = if self == BenchPath::Wasm { file(name) } else { format!("'{}{name}'", PREFIX) };
            return Some(format!("{{plugin: {plugin}, params: {{{params}}}, {tail}}}"));
        }
        match self {
            BenchPath::Plugin => {
                Some(format!("{{plugin: {}, params: {{engine: {engine}}}, {tail}}}", file("static_policy")))
            }
            BenchPath::PluginSticky => Some(format!(
                "{{plugin: {}, params: {{engine: {engine}, sticky: true}}, {tail}}}",
                file("static_policy")
            )),
            _ => None,
        }
    }
}

/// What follows every bench policy's plugin and params: a failure fails the cell (see `run_once`);
/// a generous deadline, as a bench run must not trip over preemption on a shared machine.
pub const POLICY_TAIL: &str = "on_failure: fail_closed, limits: {deadline_us: 1000000}";

/// The per-packet example plugins the bench runs as engines of their own, with their params: the
/// plugin (`wasm`) against its native build (`native`), and native io on the same ports and frames
/// (`io`), the floor of any forwarding.
pub const EXAMPLES: [(&str, &str); 5] = [
    // Every frame denied: the null ports' template goes to UDP port 9.
    ("acl", "deny_udp_dst_port: 9"),
    ("dnat", "match: 198.18.0.0/24, to: 10.9.9.9"),
    ("dscp_remark", "dscp: 46"),
    ("l4_lb", "ports: '0,1'"),
    ("ratelimit", "rate_pps: 1000000000"),
];

/// The params of example `engine`, if it is one.
pub fn example(engine: &str) -> Option<&'static str> {
    EXAMPLES.iter().find(|(name, _)| *name == engine).map(|(_, params)| *params)
}

/// One measured cell.
#[derive(Debug, Clone)]
pub struct Cell {
    /// Engine name.
    pub engine: String,
    /// Who decides per burst.
    pub path: BenchPath,
    /// Kernel variant.
    pub simd: Simd,
    /// Frame size in bytes.
    pub size: usize,
    /// Burst size.
    pub burst: usize,
    /// Mpps of each repetition.
    pub mpps: Vec<f64>,
    /// Per repetition, Mpps over the baseline cell's Mpps of the same repetition (empty without a
    /// baseline).
    pub ratios: Vec<f64>,
    /// The path the ratios are to: `native`, or `io` for the per-packet examples.
    pub baseline: Option<BenchPath>,
}

impl Cell {
    /// Repetitions, sorted.
    pub fn sorted(&self) -> Vec<f64> {
        let mut v = self.mpps.clone();
        v.sort_by(f64::total_cmp);
        v
    }
    /// Median Mpps.
    pub fn median(&self) -> f64 {
        let v = self.sorted();
        v[v.len() / 2]
    }

    /// Median ratio to the baseline, when one ran alongside.
    pub fn ratio(&self) -> Option<f64> {
        let mut v = self.ratios.clone();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied()
    }
}

/// The cells measured together: one engine, size, burst and variant, every path.
pub struct Group<'a> {
    /// Engine name.
    pub engine: &'a str,
    /// Frame size.
    pub size: usize,
    /// Burst size.
    pub burst: usize,
    /// Kernel variant.
    pub simd: Simd,
    /// Paths, in the order they run.
    pub paths: &'a [BenchPath],
    /// The user's plugin (`--plugin`), whose cells these are.
    pub user: Option<&'a super::UserPlugin>,
}

/// The YAML of one cell: two null ports, paired, one lcore, the path's policy on both. For a tunnel
/// engine (a user's plugin's `--native` one) both ports have the tunnel (each the other's far end),
/// and for a decapsulation their frames are the tunnel's: `size` is the inner frame's.
pub fn yaml(g: &Group<'_>, path: BenchPath, plugins: &std::path::Path, lcore: usize) -> String {
    let tunnel = config::engine_kind(g.user.map_or(Some(g.engine), |u| u.native.as_deref()).unwrap_or(""));
    let frame_tunnel = match tunnel {
        Some((kind, false)) => format!(", tunnel: {}", kind.name()),
        _ => String::new(),
    };
    let port = |name: &str, local: u8, remote: u8| {
        let section = tunnel
            .map(|(kind, _)| {
                format!(", {}: {{vni: 42, local_ip: 192.0.2.{local}, remote_ip: 192.0.2.{remote}}}", kind.name())
            })
            .unwrap_or_default();
        let policy = match g.user {
            Some(u) => (path == BenchPath::Wasm).then(|| u.policy()),
            None => path.policy(g.engine, plugins, (local, remote)),
        };
        let policy = policy.map(|p| format!(", policy: {p}")).unwrap_or_default();
        format!("  - {{name: {name}, driver: null, frame: {{size: {}{frame_tunnel}}}{section}{policy}}}\n", g.size)
    };
    let engine = match g.user {
        Some(u) if path == BenchPath::Native => u.native.as_deref().unwrap_or("io"),
        Some(_) => "io",
        None => path.config_engine(g.engine),
    };
    let prefetch = if path == BenchPath::NoPrefetch { "prefetch_flow_meta: false\n" } else { "" };
    format!(
        "lcores: [{lcore}]\nburst: {}\nengine: {engine}\n{prefetch}ports:\n{}{}",
        g.burst,
        port("p0", 1, 2),
        port("p1", 2, 1)
    )
}

/// Runs the cells of a group, repetition by repetition in turn (native, plugin, ..., native,
/// plugin, ...) after one short warm-up run of each, so that drift of a shared machine touches every
/// path alike; each cell's ratio to native is the median of the per-repetition ratios.
pub fn measure_group(args: &MatrixArgs, g: &Group<'_>, lcore: usize) -> anyhow::Result<Vec<Cell>> {
    let cfgs = g
        .paths
        .iter()
        .map(|&p| config::parse(&yaml(g, p, &args.plugins, lcore), "bench cell"))
        .collect::<Result<Vec<_>, _>>()?;
    let new = |path| Cell {
        engine: g.engine.into(),
        path,
        simd: g.simd,
        size: g.size,
        burst: g.burst,
        mpps: Vec::new(),
        ratios: Vec::new(),
        baseline: None,
    };
    let mut cells: Vec<Cell> = g.paths.iter().map(|&p| new(p)).collect();
    for (cell, cfg) in cells.iter().zip(&cfgs) {
        run_once(cfg, (args.seconds / 4.0).max(0.05), cell)?;
    }
    for _ in 0..args.reps.max(1) {
        for (cell, cfg) in cells.iter_mut().zip(&cfgs) {
            let m = run_once(cfg, args.seconds, cell)?;
            cell.mpps.push(m);
        }
        let baseline = [BenchPath::Native, BenchPath::Io].into_iter().find(|b| g.paths.contains(b));
        if let Some(b) = baseline.and_then(|b| cells.iter().position(|c| c.path == b)) {
            let base = *cells[b].mpps.last().unwrap_or(&0.0);
            for c in &mut cells {
                c.baseline = baseline;
                let last = *c.mpps.last().unwrap_or(&0.0);
                c.ratios.push(if base > 0.0 { last / base } else { 0.0 });
            }
        }
    }
    Ok(cells)
}

fn run_once(cfg: &config::Config, seconds: f64, cell: &Cell) -> anyhow::Result<f64> {
    let o = Overrides { simd: Some(cell.simd.name().into()), ..Overrides::default() };
    let dp = dataplane::build(cfg, &o)?;
    let opts = RunOptions { duration: Some(Duration::from_secs_f64(seconds)), ..RunOptions::default() };
    let r = dataplane::run(dp, &opts, Arc::new(AtomicBool::new(false)))?;
    let failed: u64 = r.json["ports"].as_array().into_iter().flatten().filter_map(|p| p["plugin_traps"].as_u64()).sum();
    if failed != 0 {
        anyhow::bail!(
            "bench cell {}/{}/{}: the plugin failed {failed} times; the figure would not be the path's",
            cell.engine,
            cell.path.name(),
            cell.simd
        );
    }
    // Packets handled: sent, or dropped with a counted reason (a policy's drops are its work: an ACL
    // dropping every frame is measured at the rate it decides, not at zero).
    let t = &r.json["totals"];
    let handled = t["tx_packets"].as_u64().unwrap_or(0) + t["dropped"].as_u64().unwrap_or(0);
    Ok(handled as f64 / r.json["duration_s"].as_f64().unwrap_or(0.0).max(1e-9) / 1e6)
}

#[cfg(test)]
mod tests {
    use super::BenchPath;

    #[test]
    fn plugin_paths_are_for_the_engines_the_abi_names() {
        for e in wasmdp_abi::engine::NAMES {
            assert!(BenchPath::Plugin.applies_to(e), "{e}");
        }
        for e in ["txonly", "icmpecho"] {
            assert!(!BenchPath::Plugin.applies_to(e) && !BenchPath::PluginSticky.applies_to(e), "{e}");
        }
    }

    #[test]
    fn a_users_plugin_runs_against_io_and_the_native_engine_it_names() {
        let dir = std::env::temp_dir().join(format!("wasmdp-bench-cell-{}, it's {{mine}}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("mine.wasm");
        std::fs::write(&f, b"\0asm").unwrap();
        let u = super::super::UserPlugin::new(&f, &["k=v".into()], Some("macswap")).unwrap();
        let g = super::Group {
            engine: &u.name,
            size: 64,
            burst: 32,
            simd: crate::simd::Simd::detect(),
            paths: &[],
            user: Some(&u),
        };
        let y = super::yaml(&g, BenchPath::Wasm, std::path::Path::new("p"), 0);
        let v: serde_yaml::Value = serde_yaml::from_str(&y).unwrap();
        assert_eq!(v["engine"].as_str(), Some("io"), "{y}");
        assert_eq!(v["ports"][1]["policy"]["plugin"].as_str(), Some(f.to_str().unwrap()), "{y}");
        assert_eq!(v["ports"][0]["policy"]["params"]["k"].as_str(), Some("v"), "{y}");
        let y = super::yaml(&g, BenchPath::Native, std::path::Path::new("p"), 0);
        assert!(y.contains("engine: macswap") && !y.contains("policy"), "{y}");
        assert!(BenchPath::Native.applies_to_user(&u) && BenchPath::Io.applies_to_user(&u));
        assert!(!BenchPath::Plugin.applies_to_user(&u) && !BenchPath::NativeBuild.applies_to_user(&u));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn examples_run_as_plugins_against_their_native_builds_and_vxlan_plugins_against_their_engines() {
        let g = super::Group {
            engine: "dnat",
            size: 64,
            burst: 32,
            simd: crate::simd::Simd::detect(),
            paths: &[],
            user: None,
        };
        let y = super::yaml(&g, BenchPath::Wasm, std::path::Path::new("p"), 0);
        assert!(y.contains("engine: io") && y.contains("dnat.wasm") && y.contains("match: 198.18.0.0/24"), "{y}");
        assert!(BenchPath::Io.applies_to("dnat") && !BenchPath::NativeBuild.applies_to("dnat"));
        let y = super::yaml(&g, BenchPath::Native, std::path::Path::new("p"), 0);
        assert!(y.contains("engine: io") && y.contains("plugin: 'native:dnat'") && y.contains("match: 198"), "{y}");
        // The native builds run where the binary has them (feature `native-examples`), and are
        // left out otherwise: the examples are then measured against io alone.
        let twins = cfg!(feature = "native-examples");
        assert_eq!(BenchPath::Native.applies_to("dnat"), twins);
        assert_eq!(BenchPath::NativeBuild.applies_to("macswap"), twins);
        assert!(BenchPath::Native.applies_to("macswap"), "the native engine is always there");
        let g = super::Group { engine: "vxlan_encap", ..g };
        let y = super::yaml(&g, BenchPath::Wasm, std::path::Path::new("p"), 0);
        assert!(y.contains("local_ip: 192.0.2.1, remote_ip: 192.0.2.2") && y.contains("engine: io"), "{y}");
        assert!(y.contains("local_ip: 192.0.2.2, remote_ip: 192.0.2.1"), "each port its own end: {y}");
        assert!(BenchPath::Native.applies_to("vxlan_encap") && BenchPath::Wasm.applies_to("vxlan_encap"));
    }
}
