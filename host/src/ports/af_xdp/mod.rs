//! `af_xdp`: a Linux interface through AF_XDP sockets (DPDK net_af_xdp, VPP af_xdp, OVS's AF_XDP
//! netdev). One socket per queue ([`xsk`]), each with its own UMEM; an XDP program ([`program`],
//! loaded by [`bpf`]) sends each frame received on queue q to the socket of queue q, except the
//! frames the port's `af_xdp.pass` list names, and frames of queues without a socket of ours, which
//! go on to the kernel's stack. By default the dataplane's packet pool is every socket's UMEM
//! ([`pooled`]): RX ([`rx`]) hands the buffer the kernel wrote to the engine and lends a fresh one
//! to the fill ring, TX ([`tx`]) posts a packet where it lies and frees it when completed, no copy
//! either way. With `af_xdp.umem: queue` (or a pool that cannot be a UMEM) each queue has a UMEM of
//! its own, RX copies frames out of it into pool buffers and TX into it. The kernel is only called
//! when a ring asks for it (need_wakeup), or every idle RX call when busy polling.
//!
//! Decisions, measured in BENCHMARKS.md:
//! - **Raw `libc`, no AF_XDP crate.** libc has every structure and constant of `if_xdp.h`; the ring
//!   protocol is a few dozen lines ([`ring`]) and the program six instructions (a few more per
//!   `pass` entry), loaded with four bpf(2) calls. `xdp` 0.8 covers sockets and rings but loads no program; `aya` 0.14 loads
//!   programs but brings an object-file stack for six instructions; `xsk-rs` needs clang and m4 to
//!   build; `xdpilone` is EUPL-licensed. The af_packet driver already speaks libc the same way.
//! - **The pool as the UMEM, registered by each socket.** Every socket registers the pool's whole
//!   region as its own UMEM (unaligned chunks: a fill address is a buffer's data start less the
//!   kernel's 256 B), rather than sharing one UMEM with `XDP_SHARED_UMEM`: nothing is shared
//!   between queues but the pages, each queue's fill, RX, TX and completion rings are its own and
//!   lock-free, and a buffer received on one port is sent from any other without a copy, since
//!   every port's packets are the pool's. What keeps it safe (a buffer is lent through one ring of
//!   one queue and taken back only through it, checked per descriptor) is in [`pooled`]. Measured
//!   against the copying driver in BENCHMARKS.md.
//! - **A UMEM per queue where the pool cannot be one** (`pool.headroom` under 128,
//!   `pool.data_room` over 3840, too few buffers for every queue's rings, or `af_xdp.umem:
//!   queue`): frames are copied to and from pool buffers, counted `umem_copies`.

#[cfg(target_os = "linux")]
mod bpf;
#[cfg(target_os = "linux")]
mod pooled;
#[cfg(target_os = "linux")]
mod program;
#[cfg(target_os = "linux")]
mod ring;
#[cfg(target_os = "linux")]
mod rx;
#[cfg(target_os = "linux")]
mod tx;
#[cfg(target_os = "linux")]
mod xsk;

use super::{DriverDesc, PortSetup, Queues, Shared};
use crate::config::{Config, PortCfg, XdpMode, ZeroCopy};

/// The driver entry.
pub const DRIVER: DriverDesc = DriverDesc {
    name: "af_xdp",
    help: "a Linux interface (af_xdp.iface) through AF_XDP sockets: XDP redirect program, UMEM rings, need_wakeup",
    software_offloads: true,
    macsec: false,
    check,
    preflight,
    open,
};

/// The kernel keeps this much of each UMEM frame in front of the packet (XDP_PACKET_HEADROOM).
const XDP_HEADROOM: usize = 256;

fn check(_: &Config, p: &PortCfg) -> Result<(), String> {
    super::only_own_section(p, "af_xdp")?;
    let a = p.af_xdp.as_ref().ok_or("af_xdp: missing; driver `af_xdp` needs `af_xdp: {iface: NAME}`")?;
    super::iface::check_name("af_xdp", &a.iface)?;
    let fs = a.frame_size.0;
    if fs != 2048 && fs != 4096 {
        return Err(format!("af_xdp.frame_size: {fs} is not allowed; allowed 2048 or 4096"));
    }
    let rs = a.ring_size.0;
    if !rs.is_power_of_two() {
        return Err(format!("af_xdp.ring_size: {rs} is not allowed; it must be a power of two from 64 to 16384"));
    }
    let end = a.queue_start.0 + p.queues.0;
    if end > 4096 {
        return Err(format!(
            "af_xdp.queue_start: {} + queues {} goes past queue 4095; lower one of them",
            a.queue_start.0, p.queues.0
        ));
    }
    if a.zero_copy == ZeroCopy::On && a.mode == XdpMode::Generic {
        return Err("af_xdp.zero_copy: `on` needs mode native (or auto): generic XDP always copies".into());
    }
    Ok(())
}

/// The interface exists in this network namespace, is up, and has the queues the port binds.
fn preflight(p: &PortCfg) -> anyhow::Result<()> {
    match &p.af_xdp {
        Some(a) => ready(p, a).map(|_| ()),
        None => Ok(()),
    }
}

/// [`preflight`]'s checks; the interface's MTU.
fn ready(p: &PortCfg, a: &crate::config::AfXdpCfg) -> anyhow::Result<usize> {
    if a.pass.0.contains(&crate::config::XdpPass::NotOurMac) && p.mac.is_none() {
        anyhow::bail!(
            "af_xdp.pass: `not_our_mac` needs the port's `mac:` (the address wasmdp's traffic is sent to; \
             frames to any other go to the kernel)"
        );
    }
    let mtu = super::iface::interface_ready("af_xdp", &a.iface)?;
    let (start, n) = (a.queue_start.0, p.queues.0);
    if let Some(have) = super::iface::rx_queues(&a.iface) {
        if start + n > u64::from(have) {
            anyhow::bail!(
                "af_xdp.queue_start: the port binds queues {start}..{} of `{}`, which has {have} RX queue(s) (0..{have}); lower queue_start or queues, or give the interface more (`ethtool -L {} combined N`)",
                start + n,
                a.iface,
                a.iface
            );
        }
    }
    Ok(mtu)
}

/// What keeps the program attached while any queue of the port lives: the link, the program and
/// the XSKMAP (closing the link detaches the program).
#[cfg(target_os = "linux")]
struct Attached {
    _link: std::os::fd::OwnedFd,
    _prog: std::os::fd::OwnedFd,
    _map: std::os::fd::OwnedFd,
}

/// Attaches `prog` in the mode asked; auto tries native first.
#[cfg(target_os = "linux")]
fn attach(
    prog: &std::os::fd::OwnedFd,
    ifindex: u32,
    a: &crate::config::AfXdpCfg,
) -> anyhow::Result<(std::os::fd::OwnedFd, bpf::Attach)> {
    use bpf::{Attach, AttachError};
    let mode = match a.mode {
        XdpMode::Generic => Attach::Generic,
        XdpMode::Native | XdpMode::Auto => Attach::Native,
    };
    match bpf::attach(prog, ifindex, &a.iface, mode) {
        Ok(link) => Ok((link, mode)),
        Err(AttachError::Unsupported(e)) if a.mode == XdpMode::Auto => {
            if a.zero_copy == ZeroCopy::On {
                return Err(e.context("af_xdp.zero_copy: on needs native XDP"));
            }
            tracing::info!(iface = %a.iface, "af_xdp: no native XDP ({e}); using generic mode");
            Ok((bpf::attach(prog, ifindex, &a.iface, Attach::Generic)?, Attach::Generic))
        }
        Err(e) => Err(e.into()),
    }
}

/// The pool as the UMEM of the port's queues, as `af_xdp.umem` asks and the pool allows; None: a
/// UMEM per queue.
#[cfg(target_os = "linux")]
fn pool_umem(
    s: &PortSetup<'_>,
    a: &crate::config::AfXdpCfg,
    shared: &mut Shared,
) -> anyhow::Result<Option<std::sync::Arc<pooled::PoolUmem>>> {
    use crate::config::UmemMode;
    if a.umem == UmemMode::Queue {
        return Ok(None);
    }
    let why = match s.pool {
        None => "the port was opened without the dataplane's packet pool".to_string(),
        Some(pool) => {
            // Each queue lends ring_size buffers to its fill ring and posts at most ring_size.
            let (ring, queues) = (a.ring_size.0 as usize, s.cfg.queues.get());
            let lend = 2 * ring * queues;
            match pooled::PoolUmem::new(pool) {
                Ok(u) if shared.lent + lend <= pool.capacity() / 2 => {
                    shared.lent += lend;
                    return Ok(Some(std::sync::Arc::new(u)));
                }
                Ok(_) => format!(
                    "its queues would hold up to {lend} pool buffers in the kernel (2 x ring_size {ring} x queues {queues}), \
                     which with the {} of earlier af_xdp ports is over half of pool.size {}: raise pool.size or lower \
                     af_xdp.ring_size",
                    shared.lent,
                    pool.capacity()
                ),
                Err(why) => why,
            }
        }
    };
    if a.umem == UmemMode::Pool {
        anyhow::bail!("af_xdp.umem: `pool` is not possible here: {why}; or set af_xdp.umem: queue (frames copied)");
    }
    tracing::info!(iface = %a.iface, "port `{}`: af_xdp with a UMEM per queue (frames copied): {why}", s.cfg.name);
    Ok(None)
}

/// The program attached, then one socket per queue, each put in the XSKMAP.
#[cfg(target_os = "linux")]
fn open(s: &PortSetup<'_>, shared: &mut Shared) -> anyhow::Result<Queues> {
    use crate::ports::{RxQueue, TxQueue};
    use std::os::fd::AsRawFd;
    use std::sync::Arc;
    let a = s.cfg.af_xdp.as_ref().ok_or_else(|| anyhow::anyhow!("af_xdp: missing"))?;
    let ifindex = super::iface::ifindex("af_xdp", &a.iface)?;
    let mtu = ready(s.cfg, a)?;
    let pooled = pool_umem(s, a, shared)?;
    // With a UMEM per queue, frames longer than a UMEM frame (less the kernel's headroom) come as
    // several descriptors (multi-buffer, kernel >= 6.6), which RX puts together in one pool buffer
    // and TX writes out again; a kernel without it drops them (rx_missed), as it did before. With
    // the pool as the UMEM a chunk holds the whole data room: a longer frame fits no pool buffer.
    let frame_room = pooled.as_ref().map_or(a.frame_size.get(), |u| u.geo().chunk()) - XDP_HEADROOM;
    // The program is loaded for multi-buffer frames whenever the MTU needs it (a driver refuses
    // to attach one that is not, to an interface whose MTU is over a page); the sockets take them
    // only with a UMEM per queue.
    let mut frags = mtu + 14 > frame_room;
    let (start, n) = (a.queue_start.0 as u32, s.cfg.queues.get() as u32);
    let map = bpf::xskmap(start + n)?;
    let prog = match bpf::load(&map, &a.pass.0, s.mac, frags) {
        Err(e) if frags => {
            tracing::debug!("af_xdp: a program for multi-buffer frames was refused ({e:#}); loading one without");
            frags = false;
            bpf::load(&map, &a.pass.0, s.mac, false)?
        }
        r => r?,
    };
    let mut sg = frags && pooled.is_none();
    let (link, mode) = attach(&prog, ifindex, a)?;
    let mut sockets = Vec::with_capacity(n as usize);
    let mut pooled = pooled;
    for q in start..start + n {
        let copy = mode == bpf::Attach::Generic;
        let mut o = match xsk::open(a, ifindex, q, copy, sg, pooled.as_ref()) {
            Err(e) if sg => {
                tracing::debug!("af_xdp: binding with XDP_USE_SG was refused ({e:#}); binding without");
                sg = false;
                xsk::open(a, ifindex, q, copy, false, pooled.as_ref())?
            }
            r => r?,
        };
        if o.zero_copy && pooled.as_ref().is_some_and(|u| !u.on_huge_pages()) {
            // A chunk of the pool may cross a 4 KiB page; the NIC can follow that only within
            // physically contiguous memory, which 2 MiB huge pages give and normal pages do not (the
            // kernel would refuse such fill addresses, and the queue's fill ring would run dry).
            let why = "zero copy with the pool as the UMEM needs the pool on 2 MiB huge pages (a chunk may cross a \
                       4 KiB page, which the NIC follows only in physically contiguous memory), and none were \
                       available: reserve some (`echo N > /proc/sys/vm/nr_hugepages`)";
            if a.umem == crate::config::UmemMode::Pool {
                anyhow::bail!(
                    "af_xdp.umem: `pool` is not possible here: {why}; or set af_xdp.umem: queue (frames copied)"
                );
            }
            tracing::info!(iface = %a.iface, "port `{}`: af_xdp with a UMEM per queue (frames copied): {why}", s.cfg.name);
            shared.lent -= 2 * a.ring_size.0 as usize * s.cfg.queues.get();
            pooled = None;
            drop(o);
            o = xsk::open(a, ifindex, q, copy, sg, None)?;
        }
        bpf::set_socket(&map, q, o.sock.fd.as_raw_fd())
            .map_err(|e| anyhow::anyhow!("af_xdp: putting the socket of queue {q} in the XSKMAP failed: {e}"))?;
        sockets.push(o);
    }
    if mtu + 14 > frame_room && !sg {
        let raise = if pooled.is_some() { "pool.data_room" } else { "af_xdp.frame_size" };
        tracing::warn!(iface = %a.iface,
            "port `{}`: af_xdp: MTU {mtu} of `{}` does not fit the {frame_room} B a UMEM chunk holds after the kernel's \
             {XDP_HEADROOM} B of headroom, and {}: longer frames are dropped (rx_missed): raise {raise} or lower the MTU",
            s.cfg.name, a.iface,
            if pooled.is_some() { "with the pool as the UMEM a frame is one buffer" }
            else { "this kernel or driver has no multi-buffer AF_XDP (XDP_USE_SG, Linux >= 6.6)" });
    }
    let zc = sockets.iter().all(|o| o.zero_copy);
    let complete_checksums = match a.complete_checksums {
        crate::config::Switch::On => true,
        crate::config::Switch::Off => false,
        // Where a local sender's frames arrive: a virtual interface (veth: no device behind it),
        // or generic mode, which sees the frames the stack hands the driver.
        crate::config::Switch::Auto => mode == bpf::Attach::Generic || !super::iface::has_device(&a.iface),
    };
    if complete_checksums {
        tracing::info!(iface = %a.iface, "port `{}`: af_xdp completes TCP/UDP checksums local senders left partial", s.cfg.name);
    }
    tracing::info!(iface = %a.iface, "port `{}`: af_xdp on queues {start}..{}: XDP in {} mode, {}, {}{}", s.cfg.name,
        start + n, mode.name(), if zc { "zero copy" } else { "copy mode" },
        if pooled.is_some() { "the packet pool as the UMEM" } else { "a UMEM per queue" },
        if sg { ", multi-buffer frames" } else { "" });
    let keep: Arc<dyn Send + Sync> = Arc::new(Attached { _link: link, _prog: prog, _map: map });
    let ring = a.ring_size.0 as u32;
    let mut rx = Vec::with_capacity(n as usize);
    let mut tx = Vec::with_capacity(n as usize);
    for (i, o) in sockets.into_iter().enumerate() {
        let parts = rx::RxParts {
            sock: o.sock.clone(),
            rx: o.rx,
            fill: o.fill,
            busy_poll: a.busy_poll,
            port: s.id,
            queue: i as u16,
            stats: s.stats.clone(),
            keep: keep.clone(),
            complete_checksums,
        };
        rx.push(Box::new(rx::XdpRx::new(parts, ring)) as Box<dyn RxQueue>);
        let parts = tx::TxParts {
            sock: o.sock,
            tx: o.tx,
            comp: o.comp,
            first: ring,
            frames: ring,
            mtu,
            iface: a.iface.clone(),
            copy: !o.zero_copy,
            sg,
            stats: s.stats.clone(),
            keep: keep.clone(),
        };
        tx.push(Box::new(tx::XdpTx::new(parts)) as Box<dyn TxQueue>);
    }
    Ok(Queues { rx, tx })
}

#[cfg(not(target_os = "linux"))]
fn open(_: &PortSetup<'_>, _: &mut Shared) -> anyhow::Result<Queues> {
    anyhow::bail!("driver `af_xdp` needs Linux (AF_XDP sockets); use `null`, `ring` or `pcap` on this system")
}
