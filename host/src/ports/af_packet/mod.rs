//! `af_packet`: a Linux interface through AF_PACKET sockets (DPDK net_af_packet). One socket per queue,
//! joined to one PACKET_FANOUT_HASH group when there are several, so lcores share the interface like
//! RSS. RX reads a TPACKET_V3 ring (mmap, no poll(): a block is walked when the kernel hands it over,
//! each frame copied into a pool buffer, the block returned when done); TX copies nothing: one
//! sendmmsg(MSG_DONTWAIT) per burst straight from the buffers, which are then freed. A TPACKET_V2 TX
//! ring with a send(MSG_DONTWAIT) kick is kept for comparison (`WASMDP_AF_PACKET_TX=ring`): on a veth
//! pair it was slower (0.56-0.61 Mpps against 0.65 for sendmmsg, io loop, one core).

#[cfg(target_os = "linux")]
mod sys;

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
    if a.iface.is_empty() || a.iface.len() > 15 || a.iface.contains(['/', ' ', '\0']) {
        return Err(format!(
            "af_packet.iface: invalid interface name {:?}; a Linux interface name is 1 to 15 characters, no '/' or spaces",
            a.iface
        ));
    }
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
        Some(a) => sys::interface_ready(&a.iface),
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
        sys::page_size()
    }
    #[cfg(not(target_os = "linux"))]
    {
        4096
    }
}

#[cfg(target_os = "linux")]
fn open(s: &PortSetup<'_>, _: &mut Shared) -> anyhow::Result<Queues> {
    sys::open(s)
}

#[cfg(not(target_os = "linux"))]
fn open(_: &PortSetup<'_>, _: &mut Shared) -> anyhow::Result<Queues> {
    anyhow::bail!("driver `af_packet` needs Linux (AF_PACKET sockets); use `null`, `ring` or `pcap` on this system")
}
