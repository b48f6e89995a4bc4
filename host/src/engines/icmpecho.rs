//! `icmpecho`: answers ARP requests and ICMP echo requests for the port's IPv4 addresses, ICMPv6
//! echo requests and neighbour solicitations for its IPv6 addresses (testpmd icmpecho), replying
//! from the TX port's MAC; everything else goes to the port's `icmpecho.others` engine, or is
//! dropped (counted as engine drops). Use it with `topology: loop` so replies leave by the port the
//! requests came in on.

use super::{same, EngineDesc, FwdCtx};
use crate::mbuf::{Burst, Pkt};
use crate::{offload, wire};

/// The engine entry.
pub const ENGINE: EngineDesc = EngineDesc {
    name: "icmpecho",
    help: "answer ARP, ICMP and ICMPv6 echo, neighbour solicitation for the port's icmpecho addresses",
    needs_rx: true,
    keeps_packets: false,
    run: same(run),
};

/// Turns `p` into its reply when it is a request for one of our addresses.
fn answer(p: &mut Pkt, ctx: &FwdCtx<'_>) -> bool {
    let h = wire::parse(p.data());
    let (mac, e) = (ctx.tx_mac, ctx.echo);
    let frame = p.data_mut();
    let len = wire::arp_reply(frame, &h, mac, &e.ipv4)
        .or_else(|| wire::icmp4_echo_reply(frame, &h, mac, &e.ipv4))
        .or_else(|| wire::icmp6_reply(frame, &h, mac, &e.ipv6));
    match len {
        Some(len) => {
            if len < p.len() {
                // Only ever shorter: cannot fail.
                let _ = p.set_data_len(len);
            }
            true
        }
        None => false,
    }
}

fn run(ctx: &mut FwdCtx<'_>, burst: &mut Burst) {
    let mut i = 0;
    while i < burst.len() {
        if answer(&mut burst[i], ctx) {
            offload::mark(&mut burst[i], &ctx.tx);
            i += 1;
        } else {
            let p = burst.remove(i);
            ctx.scratch.push(p);
        }
    }
    if ctx.scratch.is_empty() {
        return;
    }
    let mut others = std::mem::replace(ctx.scratch, Burst::unallocated());
    match ctx.echo.others {
        Some(engine) => {
            engine(ctx, &mut others);
            burst.extend_from(others.drain_from(0));
        }
        None => {
            ctx.drops.engine += others.len() as u64;
            ctx.cache.free_burst(&mut others);
        }
    }
    *ctx.scratch = others;
}
