//! The burst loops of the four tunnel engines (`vxlan_encap`, `vxlan_decap`, `geneve_encap`,
//! `geneve_decap`), which differ only in the tunnel they read from [`Tunnels`].
//!
//! Both loops write the second metadata cache line ([`crate::mbuf::FlowMeta`]) of every packet, so
//! they prefetch it for the packet [`AHEAD`] of the one they work on, as the Open vSwitch datapath
//! does, unless the config turned that off to measure it (`prefetch_flow_meta: false`).
//!
//! It reads the ports' `tunnel:` sections from `config` (an upward import: an engine is set up from
//! the configuration of the ports it runs between, and the section's parser is the one rule for it).

use super::FwdCtx;
use crate::config::TunnelOthers;
use crate::mbuf::{flags, Burst, Marks, Pkt, PoolCache};
use crate::offload::{self, TxOffloads};
use crate::simd::{Kernel, Variant};
use crate::wire::tunnel::{self, Expect, FastPath, Found, Kind, Matcher, Outer, OuterSpec, OuterWriter, Underlay};
use crate::wire::{self, Headers, L3};
use std::marker::PhantomData;

/// What a stream's tunnel engines work with: outer headers for its TX port's tunnels, what its RX
/// port's tunnels accept, and what happens to the rest.
#[derive(Debug, Default)]
pub struct Tunnels {
    /// Per kind ([`Kind::index`]): the outer headers encapsulation writes (TX port's section).
    pub encap: [Option<Outer>; 2],
    /// Per kind: what decapsulation accepts (RX port's section).
    pub decap: [Option<Matcher>; 2],
    /// Frames a decapsulation does not accept: dropped or passed (RX port's `tunnel_others`).
    pub others: TunnelOthers,
}

/// Counts of one call of a tunnel engine.
#[derive(Debug, Default, Clone, Copy)]
pub struct TunnelCounts {
    /// Packets encapsulated.
    pub encapsulated: u64,
    /// Packets decapsulated.
    pub decapsulated: u64,
    /// Frames a decapsulation passed on unchanged (`tunnel_others: pass`).
    pub passed: u64,
}

/// How many packets ahead the flow line is prefetched: far enough for the load to land while four
/// packets are worked on, near enough to stay in L1.
pub(super) const AHEAD: usize = 4;

/// Encapsulates every packet of the burst in the TX port's tunnel of kind `KIND` ([`Kind::index`], a
/// constant, so that the loop stores the tunnel type as one), in code compiled for the
/// kernel variant `K` (with AVX the masked compares and the template's lanes load and compare in one
/// instruction each).
pub(super) fn encap<K: Kernel, const KIND: usize>(ctx: &mut FwdCtx<'_>, burst: &mut Burst) {
    // The closure is inlined into `scope`, so the loop is compiled with the variant's instructions.
    // SAFETY: K was resolved against this CPU at start (engines are reached through `PerSimd::get`).
    unsafe {
        K::scope(
            #[inline(always)]
            || encap_loop(ctx, burst, Kind::ALL[KIND]),
        )
    }
}

/// [`encap`]'s work.
#[inline(always)]
fn encap_loop(ctx: &mut FwdCtx<'_>, burst: &mut Burst, kind: Kind) {
    let tunnels = ctx.tunnels;
    let Some(outer) = tunnels.encap[kind.index()].as_ref() else {
        // Only a plugin can get here (the config checks native streams): nothing to build from.
        return drop_all(ctx, burst);
    };
    let n = burst.len() as u64;
    let refused = match outer.family() {
        Underlay::V4(w) => encap_family(ctx, burst, kind, outer, w),
        Underlay::V6(w) => encap_family(ctx, burst, kind, outer, w),
    };
    ctx.drops.headroom += refused;
    ctx.tunnel.encapsulated += n - refused;
}

/// [`encap`]'s loop for one underlay family, so that no packet asks which one it is. Returns how
/// many packets it refused.
#[inline(always)]
fn encap_family<const V6: bool>(
    ctx: &mut FwdCtx<'_>,
    burst: &mut Burst,
    kind: Kind,
    outer: &Outer,
    writer: OuterWriter<'_, V6>,
) -> u64 {
    debug_assert_eq!(outer.kind(), kind);
    let ip_cksum_later = ctx.tx.flags & flags::TX_IP_CKSUM != 0;
    // The tunnel type (a constant: `kind` is) and the VNI as the one word they are in the flow line.
    let type_vni = u64::from(kind.tunnel_type()) | u64::from(outer.vni()) << 32;
    let headers = outer_headers(outer);
    // Whether the writer fills the UDP checksum is fixed for the burst: each branch runs a loop
    // compiled knowing it, which keeps no register for it.
    let udp = writer.udp_checksum();
    // A loop for a TX port with offloads and one without (as for decapsulation); without, the
    // IPv4 checksum is never left to an offload.
    let (pf, cache) = (ctx.prefetch_flow, &mut *ctx.cache);
    if ctx.tx.flags == 0 {
        let ip_cksum_later = false;
        let mut job = Encap::<V6, false> { writer, ip_cksum_later, tx: ctx.tx, headers, type_vni };
        unswitched(udp, || each_pf(pf, cache, burst, &mut job))
    } else {
        let mut job = Encap::<V6, true> { writer, ip_cksum_later, tx: ctx.tx, headers, type_vni };
        unswitched(udp, || each_pf(pf, cache, burst, &mut job))
    }
}

/// Runs `f` in one of two copies, in each of which the compiler knows `c` (it carries a branch's
/// condition into the branch): for a condition fixed for the burst that the loop in `f` would
/// otherwise test for every packet.
#[inline(always)]
#[allow(clippy::if_same_then_else)] // the two copies are the point
fn unswitched<R>(c: bool, f: impl FnOnce() -> R) -> R {
    if c {
        f()
    } else {
        f()
    }
}

/// Decapsulates the packets of the RX port's tunnel of kind `KIND`; the others follow
/// `tunnel_others`. In code compiled for the kernel variant `K`, as [`encap`].
pub(super) fn decap<K: Kernel, const KIND: usize>(ctx: &mut FwdCtx<'_>, burst: &mut Burst) {
    // SAFETY: K was resolved against this CPU at start (engines are reached through `PerSimd::get`).
    unsafe {
        K::scope(
            #[inline(always)]
            || decap_loop::<K>(ctx, burst, Kind::ALL[KIND]),
        )
    }
}

/// [`decap`]'s work.
#[inline(always)]
fn decap_loop<K: Kernel>(ctx: &mut FwdCtx<'_>, burst: &mut Burst, kind: Kind) {
    let tunnels = ctx.tunnels;
    let Some(matcher) = tunnels.decap[kind.index()].as_ref() else {
        return drop_all(ctx, burst);
    };
    let n = burst.len() as u64;
    let (refused, passed) = match matcher.family() {
        Underlay::V4(v4) => decap_family::<K, false>(ctx, burst, kind, matcher, v4),
        Underlay::V6(v6) => decap_family::<K, true>(ctx, burst, kind, matcher, v6),
    };
    ctx.drops.tunnel += refused;
    ctx.tunnel.passed += passed;
    ctx.tunnel.decapsulated += n - refused - passed;
}

/// [`decap`]'s loop for one underlay family, so that no packet asks which one it is. Returns how
/// many packets it refused and passed.
#[inline(always)]
fn decap_family<K: Kernel, const V6: bool>(
    ctx: &mut FwdCtx<'_>,
    burst: &mut Burst,
    kind: Kind,
    matcher: &Matcher,
    fast: FastPath<'_, V6>,
) -> (u64, u64) {
    let pass = ctx.tunnels.others == TunnelOthers::Pass;
    let tunnel_type = kind.tunnel_type();
    // Whether the TX port has offloads to mark is fixed for the burst too: a loop for each, so
    // that no packet tests it (and the loop has a register more).
    if ctx.tx.flags == 0 {
        let mut job = Decap::<K, V6, false> { matcher, fast, tunnel_type, tx: ctx.tx, pass, passed: 0, k: PhantomData };
        (each_pf(ctx.prefetch_flow, ctx.cache, burst, &mut job), job.passed)
    } else {
        let mut job = Decap::<K, V6, true> { matcher, fast, tunnel_type, tx: ctx.tx, pass, passed: 0, k: PhantomData };
        (each_pf(ctx.prefetch_flow, ctx.cache, burst, &mut job), job.passed)
    }
}

/// [`each`] with or without the prefetch, as the config says.
#[inline(always)]
fn each_pf<J: PerPacket>(prefetch: bool, cache: &mut PoolCache, burst: &mut Burst, job: &mut J) -> u64 {
    if prefetch {
        each::<true, _>(cache, burst, job)
    } else {
        each::<false, _>(cache, burst, job)
    }
}

/// No section for the engine: every packet is a `tunnel` drop.
fn drop_all(ctx: &mut FwdCtx<'_>, burst: &mut Burst) {
    ctx.drops.tunnel += burst.len() as u64;
    ctx.cache.free_burst(burst);
}

/// What a tunnel engine does to one packet.
trait PerPacket {
    /// Works on `p` on the fast path; false when `p` is left to [`PerPacket::rest`].
    fn one(&mut self, p: &mut Pkt) -> bool;
    /// Works on a packet [`PerPacket::one`] left; false when it is to be dropped.
    fn rest(&mut self, p: &mut Pkt) -> bool;
}

/// Runs `job` on every packet, the flow line of the packet `AHEAD` prefetched first (when `PF`);
/// then, out of line, the packets its fast path left, and removes and frees those it refused,
/// keeping the order of the others. Returns how many it refused.
///
/// The loop makes no call: the registers a call clobbers stay free for the loop's values, which
/// would otherwise be kept on the stack or made again for every packet.
#[inline(always)]
fn each<const PF: bool, J: PerPacket>(cache: &mut PoolCache, burst: &mut Burst, job: &mut J) -> u64 {
    let pkts: &mut [Pkt] = burst;
    let mut left = Marks::default();
    let mut n = 0;
    // Two loops, so that no packet asks whether there is one `AHEAD` of it: the packets that have
    // one, prefetching it, then the last `AHEAD` (or all of them, without prefetching).
    let ahead = if PF { pkts.len().saturating_sub(AHEAD) } else { 0 };
    if PF {
        pkts.iter().take(AHEAD).for_each(prefetch_flow);
        for i in 0..ahead {
            // SAFETY: i < len - AHEAD, so i + AHEAD < len.
            prefetch_flow(unsafe { pkts.get_unchecked(i + AHEAD) });
            step(job, &mut pkts[i], i, &mut left, &mut n);
        }
    }
    for (i, p) in pkts.iter_mut().enumerate().skip(ahead) {
        step(job, p, i, &mut left, &mut n);
    }
    if n == 0 {
        return 0;
    }
    rest(cache, burst, job, &left)
}

/// [`each`]'s work on packet `i`: the job's fast path, and a mark and a count when it leaves the
/// packet.
#[inline(always)]
fn step<J: PerPacket>(job: &mut J, p: &mut Pkt, i: usize, left: &mut Marks, n: &mut u64) {
    if !job.one(p) {
        left.set(i);
        *n += 1;
    }
}

/// The packets [`each`]'s fast path `left`: the job's [`PerPacket::rest`], then those it refused
/// removed and freed. Returns how many it refused.
#[cold]
#[inline(never)]
fn rest<J: PerPacket>(cache: &mut PoolCache, burst: &mut Burst, job: &mut J, left: &Marks) -> u64 {
    let mut refused = Marks::default();
    let mut n = 0;
    for (i, p) in burst.iter_mut().enumerate() {
        if left.has(i) && !job.rest(p) {
            refused.set(i);
            n += 1;
        }
    }
    if n != 0 {
        burst.remove_marked(&refused, |p| cache.free(p));
    }
    n
}

/// Prefetches the second metadata cache line of `p`.
#[inline(always)]
fn prefetch_flow(p: &Pkt) {
    crate::simd::prefetch(p.meta_ptr().wrapping_add(crate::mbuf::META_SIZE / 2));
}

/// One encapsulation's constants (what the flow line gets copied out of the [`Outer`], so that no
/// packet reads it there again). `MARK`: the TX port has offloads (`tx.flags != 0`).
struct Encap<'a, const V6: bool, const MARK: bool> {
    writer: OuterWriter<'a, V6>,
    /// The flow line's tunnel type (low half) and VNI (high half).
    type_vni: u64,
    /// A TX offload fills the outer IPv4 header checksum.
    ip_cksum_later: bool,
    tx: TxOffloads,
    headers: Headers,
}

impl<const V6: bool, const MARK: bool> PerPacket for Encap<'_, V6, MARK> {
    /// Encapsulates `p`; false when its headroom is too small.
    #[inline(always)]
    fn one(&mut self, p: &mut Pkt) -> bool {
        let hash = match p.meta().hash {
            0 => wire::flow_hash(p.data()),
            h => h,
        };
        let Ok(frame) = p.prepend(self.writer.added()) else { return false };
        self.writer.write(frame, tunnel::src_port(hash), self.ip_cksum_later);
        if MARK {
            offload::mark_with(p, &self.tx, &self.headers);
        }
        // One read of the handle for the stores that follow (as in `record`).
        let (mut meta, f) = p.meta_flow_mut();
        (f.outer_l2_len, f.outer_l3_len) = (self.headers.l2_len, self.headers.l3_len);
        // Two halves of one word: the compiler stores them as one.
        (f.tunnel_type, f.tunnel_id) = (self.type_vni as u32, (self.type_vni >> 32) as u32);
        if !MARK {
            let ol = offload::unmarked(meta.ol_flags);
            meta.set_ol_flags(ol);
        }
        true
    }

    /// A packet without the headroom: dropped.
    fn rest(&mut self, _: &mut Pkt) -> bool {
        false
    }
}

/// The outer headers as [`wire::parse`] would find them, for offload marking without a parse.
fn outer_headers(o: &Outer) -> Headers {
    Headers {
        l2_len: wire::ETH_HLEN as u16,
        vlans: 0,
        l3: if o.is_v6() { L3::Ipv6 } else { L3::Ipv4 },
        l3_len: o.l3_len() as u16,
        l4_proto: 17,
        l4_len: 8,
        l4_whole: true,
    }
}

/// One decapsulation's constants, and what it passed, in code compiled for the kernel variant `K`.
/// `MARK`: the TX port has offloads (`tx.flags != 0`).
struct Decap<'a, K, const V6: bool, const MARK: bool> {
    matcher: &'a Matcher,
    fast: FastPath<'a, V6>,
    tunnel_type: u32,
    tx: TxOffloads,
    pass: bool,
    passed: u64,
    k: PhantomData<K>,
}

impl<K: Kernel, const V6: bool, const MARK: bool> Decap<'_, K, V6, MARK> {
    /// The fast path, its fixed bytes compared 32 at a time where `K` has AVX2.
    #[inline(always)]
    fn fast(&self, frame: &[u8]) -> Option<Found> {
        #[cfg(target_arch = "x86_64")]
        if matches!(K::SIMD, Variant::Avx2 | Variant::Avx512) {
            // SAFETY: K was resolved against this CPU at start, and both variants require AVX2
            // (`Variant::is_supported`).
            return unsafe { self.fast.fast_avx2(frame) };
        }
        self.fast.fast(frame)
    }
}

impl<K: Kernel, const V6: bool, const MARK: bool> PerPacket for Decap<'_, K, V6, MARK> {
    /// Decapsulates `p` when the fast path takes it; false leaves it to `rest`.
    #[inline(always)]
    fn one(&mut self, p: &mut Pkt) -> bool {
        // `check` puts the inner frame within the frame and makes it at least an Ethernet header,
        // so `crop` cannot refuse it; if it somehow did, the frame is treated as not ours.
        match self.fast(p.data()) {
            Some(f) if p.crop(f.outer_len, f.inner_len).is_ok() => {
                record(p, &f, self.tunnel_type, &self.tx, MARK);
                true
            }
            _ => false,
        }
    }

    /// What the fast path left: the full check, then decapsulated, passed (`pass`, counted) or
    /// refused.
    fn rest(&mut self, p: &mut Pkt) -> bool {
        match self.matcher.check(p.data()) {
            Ok(f) if p.crop(f.outer_len, f.inner_len).is_ok() => {
                record(p, &f, self.tunnel_type, &self.tx, MARK);
                true
            }
            _ if self.pass => {
                offload::mark(p, &self.tx);
                self.passed += 1;
                true
            }
            _ => false,
        }
    }
}

/// Records the outer headers in the flow line and marks the packet decapsulated; `marked` says
/// whether `tx` has offloads (`tx.flags != 0`, a constant in the burst loops). Without them (the
/// usual case) the flags word is written once, the port's marking and `RX_TUNNEL` together.
#[inline(always)]
fn record(p: &mut Pkt, f: &Found, tunnel_type: u32, tx: &TxOffloads, marked: bool) {
    debug_assert_eq!(marked, tx.flags != 0);
    if marked {
        offload::mark(p, tx);
    }
    let (mut meta, flow) = p.meta_flow_mut();
    (flow.outer_l2_len, flow.outer_l3_len) = (f.outer_l2, f.outer_l3);
    (flow.tunnel_type, flow.tunnel_id) = (tunnel_type, f.vni);
    let ol = if marked { meta.ol_flags } else { offload::unmarked(meta.ol_flags) };
    meta.set_ol_flags(ol | flags::RX_TUNNEL);
}

/// The [`Tunnels`] of a stream from its RX and TX ports' config; `tx_macs` are the TX port's MAC and
/// peer MAC (the outer MACs).
pub fn resolve(
    rx: &crate::config::PortCfg,
    tx: &crate::config::PortCfg,
    tx_macs: ([u8; 6], [u8; 6]),
) -> anyhow::Result<Tunnels> {
    let mut t = Tunnels { others: rx.tunnel_others, ..Tunnels::default() };
    for kind in Kind::ALL {
        if let Some(c) = crate::config::tunnel_section(tx, kind) {
            if let (Some(vni), Some(remote)) = (c.vni, c.remote_ip) {
                let spec = OuterSpec {
                    kind,
                    src_mac: tx_macs.0,
                    dst_mac: tx_macs.1,
                    src_ip: c.local_ip,
                    dst_ip: remote,
                    dst_port: c.port(kind),
                    vni: vni.0 as u32,
                    ttl: c.ttl.0 as u8,
                    udp_checksum: c.checksums(),
                };
                let outer =
                    Outer::new(&spec).map_err(|e| anyhow::anyhow!("port `{}`.{}: {e}", tx.name, kind.name()))?;
                t.encap[kind.index()] = Some(outer);
            }
        }
        if let Some(c) = crate::config::tunnel_section(rx, kind) {
            t.decap[kind.index()] = Some(Matcher::new(Expect {
                kind,
                local: c.local_ip,
                dst_port: c.port(kind),
                vni: c.vni.map(|v| v.0 as u32),
                zero_csum_v6: !c.checksums(),
            }));
        }
    }
    Ok(t)
}
