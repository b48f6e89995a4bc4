//! The YAML configuration: types ([`Config`]), parsing with line numbers ([`load`]), and the checks
//! that need more than one key ([`validate`]).
//!
//! Every struct rejects unknown keys; every value with a range is checked while parsing, so that
//! serde_yaml's error carries the line and column.
//!
//! Imports that run up the module tree, on purpose: a key that names something another module owns is
//! checked against its owner's one rule while loading, so a bad YAML fails with its line rather than at
//! start: driver names and inject sizes against `ports` (the driver table), parameter, map and native
//! plugin names against `plugin`, and the default control socket path from `control`.

mod checks;
mod drivers;
mod error;
mod policy;
mod sizes;
mod topology;
mod tunnel;
mod values;
mod xdp_pass;
mod yaml;

pub use checks::{lcores, port_names, validate, MAX_LCORE, MAX_PARAMS, MAX_PORTS};
pub use drivers::{AfPacketCfg, AfXdpCfg, IcmpEchoCfg, PcapCfg, Repeat, Switch, UmemMode, XdpMode, ZeroCopy};
pub use error::ConfigError;
pub use policy::{Chain, FailurePolicy, LimitsCfg, ParamValue, PolicyCfg, MAX_LINKS};
pub use sizes::{available_memory, footprint, Footprint, MAX_AF_PACKET_RING, MAX_RETRY_BUDGET_US};
pub use topology::{pairs, Pair};
pub use tunnel::{engine_kind, section as tunnel_section, TunnelCfg, TunnelOthers};
pub use values::{in_range, parse_burst, Bounded, DriverName, EngineName, MacAddr, OffloadList};
pub use xdp_pass::{EtherType, PassList, XdpPass, MAX_PASS};
pub use yaml::{MAX_CONFIG_BYTES, MAX_DEPTH};

use crate::simd::SimdChoice;
use serde::Deserialize;
use std::path::Path;

/// The whole file.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Cores that run worker threads; default: the last core of the machine.
    #[serde(default)]
    pub lcores: Option<Vec<usize>>,
    /// Kernel variant: auto, scalar, sse, avx2, avx512.
    #[serde(default, with = "values::simd_choice")]
    pub simd: SimdChoice,
    /// Packets per burst, 1..=512.
    #[serde(default = "default_burst")]
    pub burst: Bounded<1, 512>,
    /// Engine for ports that do not name one.
    #[serde(default = "default_engine")]
    pub engine: EngineName,
    /// Packet pool sizes.
    #[serde(default)]
    pub pool: PoolCfg,
    /// TX retry when a queue is full.
    #[serde(default)]
    pub tx_retry: RetryCfg,
    /// How streams are derived from ports when `streams` is empty: paired, chained or loop.
    #[serde(default)]
    pub topology: Topology,
    /// Whether engines that use the second metadata cache line (the tunnel engines) prefetch it for
    /// the packets ahead, as Open vSwitch does; off only to measure what it is worth.
    #[serde(default = "yes")]
    pub prefetch_flow_meta: bool,
    /// Explicit streams; when given, `topology` is ignored.
    #[serde(default)]
    pub streams: Vec<StreamCfg>,
    /// The control socket (docs/CONTROL.md).
    #[serde(default)]
    pub control: ControlCfg,
    /// Prometheus metrics (docs/CONTROL.md).
    #[serde(default)]
    pub metrics: MetricsCfg,
    /// The ports.
    pub ports: Vec<PortCfg>,
}

/// `metrics:`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MetricsCfg {
    /// Address of the HTTP server for `GET /metrics` (e.g. `127.0.0.1:9465`); default: none.
    #[serde(default)]
    pub listen: Option<std::net::SocketAddr>,
}

/// `control:`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ControlCfg {
    /// Path of the socket `wasmdp run` serves (`null`: none); default: a per-user path
    /// (`$XDG_RUNTIME_DIR/wasmdp.sock`, else `/tmp/wasmdp-UID.sock`).
    #[serde(default = "default_socket")]
    pub socket: Option<std::path::PathBuf>,
}

impl Default for ControlCfg {
    fn default() -> Self {
        ControlCfg { socket: default_socket() }
    }
}

fn default_socket() -> Option<std::path::PathBuf> {
    Some(crate::control::default_path())
}

fn default_burst() -> Bounded<1, 512> {
    Bounded(32)
}

fn yes() -> bool {
    true
}

fn default_engine() -> EngineName {
    EngineName("io".into())
}

/// `pool:`
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PoolCfg {
    /// Number of buffers.
    pub size: Bounded<64, 4_194_304>,
    /// Headroom bytes.
    pub headroom: Bounded<0, 1024>,
    /// Data room bytes (multiple of 64).
    pub data_room: Bounded<64, 16384>,
    /// Per-lcore cache size.
    pub cache_size: Bounded<1, 4096>,
}

impl Default for PoolCfg {
    fn default() -> Self {
        PoolCfg { size: Bounded(16384), headroom: Bounded(128), data_room: Bounded(2048), cache_size: Bounded(256) }
    }
}

/// `tx_retry:`
#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RetryCfg {
    /// Retries after a partial TX before the rest is dropped (`tx_full`).
    pub count: Bounded<0, 100_000>,
    /// Microseconds to wait before each retry.
    pub delay_us: Bounded<0, 1_000_000>,
}

impl Default for RetryCfg {
    fn default() -> Self {
        RetryCfg { count: Bounded(64), delay_us: Bounded(1) }
    }
}

/// `topology:`, as testpmd's `--port-topology`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Topology {
    /// P0 <-> P1, P2 <-> P3, ...; an odd last port forwards to itself.
    #[default]
    Paired,
    /// P0 -> P1 -> ... -> Pn-1 -> P0.
    Chained,
    /// Each port to itself.
    Loop,
}

/// One entry of `streams:`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StreamCfg {
    /// RX port name.
    pub rx: String,
    /// RX queue.
    #[serde(default)]
    pub rx_queue: u16,
    /// TX port name.
    pub tx: String,
    /// TX queue.
    #[serde(default)]
    pub tx_queue: u16,
    /// Core to run on (one of `lcores`); default: spread round-robin.
    #[serde(default)]
    pub lcore: Option<usize>,
}

/// One entry of `ports:`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PortCfg {
    /// Unique name.
    pub name: String,
    /// Driver: see `crate::ports::DRIVERS`.
    pub driver: DriverName,
    /// RX and TX queues.
    #[serde(default = "one")]
    pub queues: Bounded<1, 64>,
    /// The port's MAC address (source MAC for the `mac` engine); default `02:00:00:00:00:<index>`.
    #[serde(default)]
    pub mac: Option<MacAddr>,
    /// Destination MAC for the `mac` engine; default `02:00:00:00:01:<index>`.
    #[serde(default)]
    pub peer_mac: Option<MacAddr>,
    /// Engine for streams received on this port; default: the top-level `engine`.
    #[serde(default)]
    pub engine: Option<EngineName>,
    /// TX offloads to request.
    #[serde(default)]
    pub tx_offloads: OffloadList,
    /// VLAN TCI for vlan_insert / inner TCI for qinq_insert.
    #[serde(default)]
    pub tx_vlan: Bounded<0, 65535>,
    /// Outer TCI for qinq_insert.
    #[serde(default)]
    pub tx_vlan_outer: Bounded<0, 65535>,
    /// Frames this port generates (null RX, tx_first, txonly).
    #[serde(default)]
    pub frame: FrameCfg,
    /// Ring driver options.
    #[serde(default)]
    pub ring: Option<RingCfg>,
    /// Bursts of template frames to send on this port before forwarding starts (testpmd tx_first).
    #[serde(default)]
    pub tx_first: Bounded<0, 65_536>,
    /// WebAssembly policy deciding per burst for the streams that receive on this port, or a chain
    /// of them run in order; `engine` is then the fallback of a link that fails open.
    #[serde(default)]
    pub policy: Chain,
    /// `pcap` driver options.
    #[serde(default)]
    pub pcap: Option<PcapCfg>,
    /// `af_packet` driver options.
    #[serde(default)]
    pub af_packet: Option<AfPacketCfg>,
    /// `af_xdp` driver options.
    #[serde(default)]
    pub af_xdp: Option<AfXdpCfg>,
    /// Addresses the `icmpecho` engine answers for on this port, and what it does with the rest.
    #[serde(default)]
    pub icmpecho: Option<IcmpEchoCfg>,
    /// VXLAN tunnel of this port (engines `vxlan_encap`, `vxlan_decap`).
    #[serde(default)]
    pub vxlan: Option<TunnelCfg>,
    /// Geneve tunnel of this port (engines `geneve_encap`, `geneve_decap`).
    #[serde(default)]
    pub geneve: Option<TunnelCfg>,
    /// What the decapsulation engines receiving on this port do with frames not of their tunnel.
    #[serde(default)]
    pub tunnel_others: TunnelOthers,
}

fn one() -> Bounded<1, 64> {
    Bounded(1)
}

/// `frame:` of a port.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FrameCfg {
    /// Frame length without FCS.
    pub size: Bounded<60, 9000>,
    /// Source MAC; default: the port's MAC.
    pub src_mac: Option<MacAddr>,
    /// Destination MAC; default: the port's peer MAC.
    pub dst_mac: Option<MacAddr>,
    /// Source IPv4.
    pub src_ip: std::net::Ipv4Addr,
    /// Destination IPv4.
    pub dst_ip: std::net::Ipv4Addr,
    /// UDP source port of the first flow.
    pub src_port: Bounded<0, 65535>,
    /// UDP destination port.
    pub dst_port: Bounded<0, 65535>,
    /// Number of flows: UDP source ports src_port .. src_port+flows-1, in turn.
    pub flows: Bounded<1, 65536>,
    /// 802.1Q TCI to tag the frames with.
    pub vlan: Option<Bounded<0, 65535>>,
    /// Send the frame encapsulated in this port's `vxlan:` or `geneve:` tunnel, as the far end
    /// would send it to us: from `remote_ip` to `local_ip`, MACs `peer_mac` to `mac`. `size` is then
    /// the inner frame's.
    #[serde(deserialize_with = "tunnel::tunnel_kind")]
    pub tunnel: Option<crate::wire::tunnel::Kind>,
}

impl Default for FrameCfg {
    fn default() -> Self {
        FrameCfg {
            size: Bounded(64),
            src_mac: None,
            dst_mac: None,
            src_ip: [198, 18, 0, 1].into(),
            dst_ip: [198, 18, 0, 2].into(),
            src_port: Bounded(9),
            dst_port: Bounded(9),
            flows: Bounded(1),
            vlan: None,
            tunnel: None,
        }
    }
}

/// `ring:` options.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RingCfg {
    /// The port at the other end (may be this port itself).
    pub peer: String,
    /// Ring capacity in packets, per queue and direction.
    #[serde(default = "default_ring_size")]
    pub size: Bounded<2, 1_048_576>,
}

fn default_ring_size() -> Bounded<2, 1_048_576> {
    Bounded(1024)
}

/// The built-in default configuration (the repository's `config.yaml`).
pub const DEFAULT_YAML: &str = include_str!("../../../config.yaml");

/// Parses a YAML document. `origin` names it in errors (a path, or "built-in default").
pub fn parse(text: &str, origin: &str) -> Result<Config, ConfigError> {
    let syntax = |message| ConfigError::Syntax { origin: origin.to_string(), message };
    yaml::check_depth(text).map_err(syntax)?;
    let cfg: Config = serde_yaml::from_str(text).map_err(|e| syntax(describe(&e)))?;
    validate(&cfg).map_err(|message| ConfigError::Invalid { origin: origin.to_string(), message })?;
    Ok(cfg)
}

/// Reads and parses a file. Relative plugin, map entries and capture paths are made relative to the file's folder.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let bytes = crate::input::read_bounded(path, MAX_CONFIG_BYTES)
        .map_err(|source| ConfigError::Read { path: path.to_path_buf(), source })?;
    let text = String::from_utf8(bytes).map_err(|source| ConfigError::NotText { path: path.to_path_buf(), source })?;
    let mut cfg = parse(&text, &path.display().to_string())?;
    let base = path.parent().unwrap_or(Path::new("."));
    let rebase = |path: &mut std::path::PathBuf| {
        if path.is_relative() {
            *path = base.join(&*path);
        }
    };
    for p in &mut cfg.ports {
        for pol in p.policy.links_mut() {
            if crate::plugin::native::named(&pol.plugin).is_none() {
                rebase(&mut pol.plugin);
            }
            pol.map_entries.values_mut().chain(pol.map_pins.values_mut()).for_each(rebase);
        }
        if let Some(pc) = &mut p.pcap {
            pc.rx.iter_mut().chain(pc.tx.iter_mut()).for_each(rebase);
        }
    }
    Ok(cfg)
}

fn describe(e: &serde_yaml::Error) -> String {
    let msg = e.to_string();
    match e.location() {
        Some(l) if !msg.contains("line ") => format!("line {} column {}: {msg}", l.line(), l.column()),
        _ => msg,
    }
}
