//! Forwarding engines: one file per engine, all listed in [`ENGINES`] (testpmd's `fwd_engines[]`).
//!
//! An engine transforms one burst in place between RX and TX; the stream around it owns receiving,
//! transmitting, retries and counting. Engines that use a native kernel are instantiated once per
//! kernel variant ([`crate::per_simd!`]), so the per-packet loop has no indirect calls.
//!
//! Imports that run up the module tree, on purpose: txonly builds frames from its TX port's
//! [`crate::ports::Template`] (the one frame generator of null/ring ports and txonly), and the tunnel
//! engines take their outer headers from the ports' `tunnel:` sections (`tunnel.rs`, from `config`).

mod copy;
mod fivetswap;
mod geneve_decap;
mod geneve_encap;
mod icmpecho;
mod io;
mod mac;
mod macswap;
pub(crate) use macswap::SWAP_ONLY as MACSWAP_ONLY;
mod rxonly;
mod tunnel;
pub use tunnel::{resolve as resolve_tunnels, TunnelCounts, Tunnels};
mod txonly;
mod vxlan_decap;
mod vxlan_encap;

use crate::mbuf::{Burst, Pkt, PoolCache};
use crate::offload::TxOffloads;
use crate::ports::Template;
use crate::simd::PerSimd;
use crate::stats::Drops;

/// What an engine works with besides the burst: the TX port's identity and offloads, the pool.
pub struct FwdCtx<'a> {
    /// The lcore's pool cache (copy allocates, rxonly frees).
    pub cache: &'a mut PoolCache,
    /// Offloads of the TX port.
    pub tx: TxOffloads,
    /// MAC of the TX port.
    pub tx_mac: [u8; 6],
    /// Peer MAC of the TX port (destination for the `mac` engine).
    pub peer_mac: [u8; 6],
    /// Template of the TX port (txonly).
    pub template: &'a Template,
    /// Next flow of the template.
    pub flow: &'a mut u32,
    /// Burst size of the stream.
    pub burst_size: usize,
    /// Drops made in this call, by reason.
    pub drops: Drops,
    /// Packets created in this call (txonly).
    pub generated: u64,
    /// Packets a generator could not create for lack of buffers (counted as `rx_nombuf`: never a
    /// packet, so never a drop).
    pub alloc_failed: u64,
    /// Packets handed to another port's TX in this call (a plugin's `send_to`).
    pub redirected_out: u64,
    /// What the `icmpecho` engine answers for (the RX port's `icmpecho:`).
    pub echo: &'a EchoAddrs,
    /// A second burst for engines that split one (allocated once per stream).
    pub scratch: &'a mut Burst,
    /// The stream's tunnels (the tunnel engines).
    pub tunnels: &'a Tunnels,
    /// Whether engines that write the second metadata line prefetch it (`prefetch_flow_meta`).
    pub prefetch_flow: bool,
    /// What the tunnel engines did in this call.
    pub tunnel: TunnelCounts,
    /// On a stream whose plugin maps its packets (direct packet access), `cache` is the stream's
    /// own pool's and this the lcore's: a packet leaving for another thread (a plugin's `send_to`)
    /// is copied into a buffer of this one first.
    pub outside: Option<&'a mut PoolCache>,
}

/// The addresses the `icmpecho` engine answers for, and the engine for everything else.
#[derive(Default)]
pub struct EchoAddrs {
    /// IPv4 addresses (ARP, ICMP echo).
    pub ipv4: Vec<[u8; 4]>,
    /// IPv6 addresses (neighbour solicitation, ICMPv6 echo).
    pub ipv6: Vec<[u8; 16]>,
    /// Engine for the other packets; None: drop them.
    pub others: Option<EngineFn>,
}

impl FwdCtx<'_> {
    /// Frees a packet the engine decided to drop, counting it.
    #[inline]
    pub fn drop_pkt(&mut self, p: Pkt) {
        self.drops.engine += 1;
        self.cache.free(p);
    }
}

/// An engine's per-burst function.
pub type EngineFn = fn(&mut FwdCtx<'_>, &mut Burst);

/// One engine.
pub struct EngineDesc {
    /// Name in the config (`engine:`).
    pub name: &'static str,
    /// The id a plugin names it by (`wasmdp_abi::engine`), if plugins may run it.
    pub abi: Option<u32>,
    /// One line for `--help` and the README.
    pub help: &'static str,
    /// Whether the stream receives before calling the engine (false for generators).
    pub needs_rx: bool,
    /// Whether it leaves every packet of the burst in its place (it never frees, adds, replaces or
    /// reorders packets): then a plugin can run it on part of a burst without any bookkeeping.
    pub keeps_packets: bool,
    /// The per-burst function, per kernel variant.
    pub run: PerSimd<EngineFn>,
}

/// Every engine. Adding one: a new file and a line here.
pub const ENGINES: &[&EngineDesc] = &[
    &io::ENGINE,
    &mac::ENGINE,
    &macswap::ENGINE,
    &fivetswap::ENGINE,
    &copy::ENGINE,
    &rxonly::ENGINE,
    &txonly::ENGINE,
    &icmpecho::ENGINE,
    &vxlan_encap::ENGINE,
    &vxlan_decap::ENGINE,
    &geneve_encap::ENGINE,
    &geneve_decap::ENGINE,
];

/// The engines a plugin may name, by ABI id: [`ENGINES`] ordered by [`EngineDesc::abi`], made at
/// compile time (the build fails if an id has no engine or two; a test checks the names against
/// `wasmdp_abi::engine::NAMES`).
pub const ABI_ENGINES: [&EngineDesc; wasmdp_abi::engine::COUNT as usize] = by_abi_id_table();

const fn by_abi_id_table() -> [&'static EngineDesc; wasmdp_abi::engine::COUNT as usize] {
    const N: usize = wasmdp_abi::engine::COUNT as usize;
    let (mut out, mut set) = ([ENGINES[0]; N], [false; N]);
    let mut i = 0;
    while i < ENGINES.len() {
        if let Some(id) = ENGINES[i].abi {
            assert!((id as usize) < N && !set[id as usize], "an engine ABI id out of range or given twice");
            out[id as usize] = ENGINES[i];
            set[id as usize] = true;
        }
        i += 1;
    }
    let mut id = 0;
    while id < N {
        assert!(set[id], "an engine ABI id that no engine has");
        id += 1;
    }
    out
}

/// The engine a plugin names by ABI id, if the id exists.
#[inline(always)]
pub fn by_abi_id(id: u32) -> Option<&'static EngineDesc> {
    ABI_ENGINES.get(id as usize).copied()
}

/// An engine a plugin names, resolved for one kernel variant.
#[derive(Debug, Clone, Copy)]
pub struct Resolved {
    /// Its per-burst function for the variant.
    pub run: EngineFn,
    /// [`EngineDesc::keeps_packets`].
    pub keeps_packets: bool,
}

/// The engines plugins name, by ABI id, resolved for `simd` once (a plugin instance keeps the
/// table), so that running one costs no dispatch on the variant per call.
pub fn resolve_abi(simd: crate::simd::Simd) -> [Resolved; wasmdp_abi::engine::COUNT as usize] {
    ABI_ENGINES.map(|d| Resolved { run: d.run.get(simd), keeps_packets: d.keeps_packets })
}

/// The engine named `name`.
pub fn lookup(name: &str) -> Option<&'static EngineDesc> {
    ENGINES.iter().copied().find(|e| e.name == name)
}

/// Engine names, for error messages.
pub fn names() -> String {
    ENGINES.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")
}

/// The same function for every variant, for engines that use no kernel.
pub(crate) const fn same(f: EngineFn) -> PerSimd<EngineFn> {
    PerSimd::new(f, f, f, f)
}

/// Marks every packet with the TX port's offloads, when it has any.
#[inline(always)]
pub(crate) fn mark_all(ctx: &FwdCtx<'_>, burst: &mut Burst) {
    if ctx.tx.flags != 0 {
        for p in burst.iter_mut() {
            crate::offload::mark(p, &ctx.tx);
        }
    }
}

/// Prefetches the data and metadata lines of the packet at `i`, if there is one.
#[inline(always)]
pub(crate) fn prefetch_pkt(burst: &[Pkt], i: usize) {
    if let Some(p) = burst.get(i) {
        crate::simd::prefetch(p.meta_ptr());
        crate::simd::prefetch(p.data_ptr());
    }
}

/// Prefetches the data and metadata lines of the (up to) four packets from `i`: in a loop over
/// groups of four, the next group, with no bounds test per packet while a whole group follows.
#[inline(always)]
pub(crate) fn prefetch_quad(burst: &[Pkt], i: usize) {
    let one = |p: &Pkt| {
        crate::simd::prefetch(p.meta_ptr());
        crate::simd::prefetch(p.data_ptr());
    };
    match burst.get(i..i + 4) {
        Some(quad) => quad.iter().for_each(one),
        None => burst.get(i..).unwrap_or_default().iter().for_each(one),
    }
}

#[cfg(test)]
mod tests;
