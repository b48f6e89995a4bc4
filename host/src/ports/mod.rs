//! Ports: one file per driver, all listed in [`DRIVERS`].
//!
//! A driver opens a port as a set of RX and TX queues. Each queue is owned by exactly one stream (the
//! config checks that no queue is used twice), so queues need no locks.

mod af_packet;
mod af_xdp;
mod counted;
pub(crate) mod iface;
mod inject;
mod null;
mod pcap;
mod ring;
mod template;

pub use inject::{Batch as InjectBatch, Inject, BATCH as INJECT_BATCH, SLOTS as INJECT_SLOTS};
pub use pcap::load::{load as load_capture, Capture, Record};
pub use template::Template;

use crate::config::{Config, PortCfg};
use crate::mbuf::{Burst, PoolCache};
use crate::offload::TxOffloads;
use std::collections::HashMap;
use std::sync::Arc;

/// What one RX call produced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rx {
    /// Packets appended to the burst.
    pub packets: usize,
    /// Bytes of those packets.
    pub bytes: u64,
    /// Packets the port could not receive for lack of buffers (`rx_nombuf`).
    pub nombuf: usize,
}

/// The receive side of one queue.
///
/// A queue's state is written on every burst by the one worker that polls it, while the other
/// queues of the port, built next to it on the heap, are polled by other workers: each driver's
/// queue types (both sides) are `#[repr(align(128))]`, a cache line and the one the adjacent-line
/// prefetcher pairs with it, so that no two workers write one line. Sharing lines this way (with
/// the streams themselves, `lcore::Stream`) held two lcores at about 1.5x one (BENCHMARKS.md).
pub trait RxQueue: Send {
    /// Appends up to `max` packets to `out`.
    fn rx_burst(&mut self, cache: &mut PoolCache, out: &mut Burst, max: usize) -> Rx;

    /// Frees the packets still waiting in the queue (at stop) and returns how many there were.
    fn drain(&mut self, _cache: &mut PoolCache) -> u64 {
        0
    }

    /// Whether the packets it appends come from elsewhere rather than from the cache it is given (a
    /// `ring` port's peer made them): a stream with its own pool then copies them in (direct packet
    /// access). Every other driver receives into buffers of the cache it is given, and holds none
    /// between calls.
    fn foreign(&self) -> bool {
        false
    }
}

/// Packets a TX queue took off the front of a burst and freed without sending them, by reason: the
/// port cannot send them at all (a retry would fail as well).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxRefused {
    /// Larger than the port can send (its MTU, a UMEM frame; the kernel's EMSGSIZE).
    pub oversize: u64,
    /// Refused by the kernel for another reason (the interface down, a device error).
    pub error: u64,
    /// Their bytes.
    pub bytes: u64,
}

impl TxRefused {
    /// Counts `n` bytes refused as `oversize` (else `error`).
    #[cold]
    pub fn count(&mut self, oversize: bool, n: usize) {
        if oversize {
            self.oversize += 1;
        } else {
            self.error += 1;
        }
        self.bytes += n as u64;
    }
}

/// The transmit side of one queue.
pub trait TxQueue: Send {
    /// Transmits packets from the front of `burst`, removing those it took; returns how many it
    /// sent. Packets it could not take now (queue full) stay in `burst`, in order, for the stream's
    /// retry; packets the port can never send are removed, freed and counted in `refused`.
    fn tx_burst(&mut self, cache: &mut PoolCache, burst: &mut Burst, refused: &mut TxRefused) -> usize;

    /// Whether the packets it takes are handed to another thread (a `ring` port's peer) rather
    /// than sent or copied before `tx_burst` returns: a stream with its own pool then copies them
    /// out of it first (direct packet access).
    fn crosses_threads(&self) -> bool {
        false
    }

    /// Called when the stream polled nothing: a queue that holds frames the kernel has not taken
    /// yet gives it another chance. Also at stop, before the queues are dropped.
    fn flush(&mut self) {}
}

/// An opened port: its queues, before streams take them.
pub struct Queues {
    /// RX queues, by index.
    pub rx: Vec<Box<dyn RxQueue>>,
    /// TX queues, by index.
    pub tx: Vec<Box<dyn TxQueue>>,
}

/// What a driver gets to open a port.
pub struct PortSetup<'a> {
    /// Index of the port in the config.
    pub id: u16,
    /// The port's config entry.
    pub cfg: &'a PortCfg,
    /// The frame this port generates.
    pub template: Arc<Template>,
    /// The port's MAC (`mac:`, or its default).
    pub mac: [u8; 6],
    /// The port's driver-level counters.
    pub stats: Arc<crate::stats::PortStats>,
    /// The dataplane's packet pool, for a driver that lends its buffers to the kernel (af_xdp);
    /// None where ports are opened without one (tests of the drivers alone).
    pub pool: Option<&'a Arc<crate::mbuf::Pool>>,
}

/// State drivers share while opening ports (the rings between two ring ports, the pool buffers
/// af_xdp queues lend to the kernel).
#[derive(Default)]
pub struct Shared {
    rings: HashMap<(String, String), Vec<Arc<ring::PktRing>>>,
    /// Pool buffers the af_xdp ports opened so far may hold in the kernel at once.
    pub(crate) lent: usize,
}

/// A driver: its name and how to check and open a port.
pub struct DriverDesc {
    /// Name in `driver:`.
    pub name: &'static str,
    /// One line for `--help` and the README.
    pub help: &'static str,
    /// Transmit applies TX offloads in software.
    pub software_offloads: bool,
    /// Accepts `macsec_insert`.
    pub macsec: bool,
    /// Checks the driver's own keys; the error starts with the key name.
    pub check: fn(&Config, &PortCfg) -> Result<(), String>,
    /// Checks what opening the port needs from the machine (an interface, a capture file), without
    /// opening it: what `wasmdp validate` runs so that it refuses what `run` would.
    pub preflight: fn(&PortCfg) -> anyhow::Result<()>,
    /// Opens the port.
    pub open: fn(&PortSetup<'_>, &mut Shared) -> anyhow::Result<Queues>,
}

impl DriverDesc {
    /// What a port of this driver does with offload requests.
    pub fn caps(&self) -> crate::offload::Caps {
        crate::offload::Caps { software: self.software_offloads, macsec: self.macsec }
    }
}

/// Every driver. Adding one: a new file and a line here.
pub const DRIVERS: &[&DriverDesc] = &[&null::DRIVER, &ring::DRIVER, &pcap::DRIVER, &af_packet::DRIVER, &af_xdp::DRIVER];

/// Refuses the option sections of other drivers on a port of driver `driver` (the error starts with
/// the key, as `DriverDesc::check` errors do).
pub fn only_own_section(p: &PortCfg, driver: &str) -> Result<(), String> {
    let sections = [
        ("ring", p.ring.is_some()),
        ("pcap", p.pcap.is_some()),
        ("af_packet", p.af_packet.is_some()),
        ("af_xdp", p.af_xdp.is_some()),
    ];
    match sections.iter().find(|(name, present)| *present && *name != driver) {
        Some((name, _)) => Err(format!("{name}: only for driver `{name}`, and this port's driver is `{driver}`")),
        None => Ok(()),
    }
}

/// A preflight for drivers that need nothing of the machine.
pub(crate) fn nothing_needed(_: &PortCfg) -> anyhow::Result<()> {
    Ok(())
}

/// The driver named `name`.
pub fn lookup(name: &str) -> Option<&'static DriverDesc> {
    DRIVERS.iter().copied().find(|d| d.name == name)
}

/// Driver names, for error messages.
pub fn names() -> String {
    DRIVERS.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
}

/// A port at run time: identity, addresses, offloads, template, and the queues not yet taken.
pub struct Port {
    /// Index in the config.
    pub id: u16,
    /// Name from the config.
    pub name: String,
    /// Its driver.
    pub driver: &'static DriverDesc,
    /// Its MAC address.
    pub mac: [u8; 6],
    /// The MAC the `mac` engine sends to.
    pub peer_mac: [u8; 6],
    /// TX offloads requested in the config.
    pub tx: TxOffloads,
    /// Frames it generates.
    pub template: Arc<Template>,
    /// Bursts to send before forwarding (tx_first).
    pub tx_first: usize,
    /// Its driver-level counters.
    pub stats: Arc<crate::stats::PortStats>,
    /// RX queues not yet taken by a stream.
    pub rxqs: Vec<Option<Box<dyn RxQueue>>>,
    /// TX queues not yet taken by a stream.
    pub txqs: Vec<Option<Box<dyn TxQueue>>>,
}

/// Default MAC of port `id`: locally administered 02:00:00:00:00:id.
pub fn default_mac(id: u16) -> [u8; 6] {
    [2, 0, 0, 0, (id >> 8) as u8, id as u8]
}

/// Default peer MAC of port `id`: 02:00:00:00:01:id.
pub fn default_peer_mac(id: u16) -> [u8; 6] {
    [2, 0, 0, 1, (id >> 8) as u8, id as u8]
}

/// Opens every port of the config, without the packet pool (af_xdp ports then have UMEMs of their
/// own): for tests of the drivers alone.
pub fn open_all(cfg: &Config) -> anyhow::Result<Vec<Port>> {
    open_all_with(cfg, None)
}

/// Opens every port of the config; `pool`: the dataplane's packet pool.
pub fn open_all_with(cfg: &Config, pool: Option<&Arc<crate::mbuf::Pool>>) -> anyhow::Result<Vec<Port>> {
    let mut shared = Shared::default();
    let mut ports = Vec::with_capacity(cfg.ports.len());
    for (i, pc) in cfg.ports.iter().enumerate() {
        let id = i as u16;
        let driver = lookup(&pc.driver.0).ok_or_else(|| anyhow::anyhow!("ports[{i}].driver: unknown driver"))?;
        let mac = pc.mac.map(|m| m.0).unwrap_or(default_mac(id));
        let peer_mac = pc.peer_mac.map(|m| m.0).unwrap_or(default_peer_mac(id));
        let template =
            Arc::new(Template::from_config(pc, mac, peer_mac).map_err(|e| anyhow::anyhow!("port `{}`: {e}", pc.name))?);
        let stats = Arc::new(crate::stats::PortStats::default());
        let setup = PortSetup { id, cfg: pc, template: template.clone(), mac, stats: stats.clone(), pool };
        let q = (driver.open)(&setup, &mut shared).map_err(|e| anyhow::anyhow!("port `{}`: {e}", pc.name))?;
        ports.push(Port {
            id,
            name: pc.name.clone(),
            driver,
            mac,
            peer_mac,
            tx: TxOffloads {
                flags: pc.tx_offloads.0,
                vlan_tci: pc.tx_vlan.u16(),
                vlan_tci_outer: pc.tx_vlan_outer.u16(),
            },
            template,
            stats,
            tx_first: pc.tx_first.get(),
            rxqs: q.rx.into_iter().map(Some).collect(),
            txqs: q.tx.into_iter().map(Some).collect(),
        });
    }
    Ok(ports)
}
