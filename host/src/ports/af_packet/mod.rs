//! `af_packet`: a Linux interface through AF_PACKET sockets (DPDK net_af_packet). One socket per queue
//! ([`socket`]), joined to one PACKET_FANOUT_HASH group when there are several, so lcores share the
//! interface like RSS. RX reads a TPACKET_V3 ring ([`rx`]: mmap, no poll(): a block is walked when the
//! kernel hands it over, each frame copied into a pool buffer, the block returned when done); TX
//! copies nothing ([`tx`]: one sendmmsg(MSG_DONTWAIT) per burst straight from the buffers).

#[cfg(target_os = "linux")]
mod rx;
#[cfg(target_os = "linux")]
mod socket;
#[cfg(target_os = "linux")]
mod tx;
#[cfg(target_os = "linux")]
mod vnet;

use super::{DriverDesc, PortSetup, Queues, Shared};
use crate::config::{Config, PortCfg};

/// The driver entry.
pub const DRIVER: DriverDesc = DriverDesc {
    name: "af_packet",
    help: "a Linux interface (af_packet.iface) through AF_PACKET sockets: TPACKET_V3 RX ring, sendmmsg TX",
    software_offloads: true,
    macsec: false,
    check,
    preflight,
    open,
};

fn check(_: &Config, p: &PortCfg) -> Result<(), String> {
    super::only_own_section(p, "af_packet")?;
    let a = p.af_packet.as_ref().ok_or("af_packet: missing; driver `af_packet` needs `af_packet: {iface: NAME}`")?;
    super::iface::check_name("af_packet", &a.iface)?;
    let bs = a.block_size.get();
    let page = page_size();
    if !bs.is_power_of_two() || !bs.is_multiple_of(page) {
        return Err(format!(
            "af_packet.block_size: {bs} is not allowed; it must be a power of two and a multiple of the page size ({page})"
        ));
    }
    Ok(())
}

/// The interface exists in this network namespace and is up.
#[cfg(target_os = "linux")]
fn preflight(p: &PortCfg) -> anyhow::Result<()> {
    match &p.af_packet {
        Some(a) => super::iface::interface_ready("af_packet", &a.iface).map(|_| ()),
        None => Ok(()),
    }
}

#[cfg(not(target_os = "linux"))]
fn preflight(_: &PortCfg) -> anyhow::Result<()> {
    anyhow::bail!("driver `af_packet` needs Linux (AF_PACKET sockets); use `null`, `ring` or `pcap` on this system")
}

/// The page size (4096 where it cannot be asked).
fn page_size() -> usize {
    #[cfg(target_os = "linux")]
    {
        socket::page_size()
    }
    #[cfg(not(target_os = "linux"))]
    {
        4096
    }
}

/// One socket per queue, in a fanout group when there are several.
#[cfg(target_os = "linux")]
fn open(s: &PortSetup<'_>, _: &mut Shared) -> anyhow::Result<Queues> {
    use crate::ports::{RxQueue, TxQueue};
    use std::sync::Arc;
    let a = s.cfg.af_packet.as_ref().ok_or_else(|| anyhow::anyhow!("af_packet: missing"))?;
    let ifindex = super::iface::ifindex("af_packet", &a.iface)?;
    let mtu = super::iface::interface_ready("af_packet", &a.iface)?;
    let frame = s.template.len();
    if mtu + 14 < frame {
        tracing::warn!(iface = %a.iface,
            "port `{}`: af_packet: MTU {mtu} of `{}` is smaller than the port's frames ({frame} B = MTU {} + 14); \
             the kernel will refuse them; raise it with `ip link set {} mtu {}`",
            s.cfg.name, a.iface, frame - 14, a.iface, frame - 14);
    }
    let n = s.cfg.queues.get();
    let group = (ifindex ^ std::process::id() ^ (u32::from(s.id) << 8)) & 0xffff;
    let mut rx = Vec::with_capacity(n);
    let mut tx = Vec::with_capacity(n);
    for q in 0..n {
        let sock = Arc::new(socket::open(a, ifindex)?);
        if n > 1 {
            socket::join_fanout(sock.fd, group).map_err(|e| {
                anyhow::anyhow!("af_packet: joining fanout group {group} for queue {q} of `{}` failed: {e}", a.iface)
            })?;
        }
        let geometry = (a.block_size.get(), a.block_count.get());
        rx.push(Box::new(rx::AfRx::new(sock.clone(), geometry, s.id, q as u16, s.stats.clone())) as Box<dyn RxQueue>);
        tx.push(Box::new(tx::AfTx::new(sock)) as Box<dyn TxQueue>);
    }
    Ok(Queues { rx, tx })
}

#[cfg(not(target_os = "linux"))]
fn open(_: &PortSetup<'_>, _: &mut Shared) -> anyhow::Result<Queues> {
    anyhow::bail!("driver `af_packet` needs Linux (AF_PACKET sockets); use `null`, `ring` or `pcap` on this system")
}
