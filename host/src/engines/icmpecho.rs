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
    abi: None,
    help: "answer ARP, ICMP and ICMPv6 echo, neighbour solicitation for the port's icmpecho addresses",
    needs_rx: true,
    keeps_packets: false,
    run: same(run),
};

/// Turns `p` into its reply when it is a request for one of our addresses. Fragments (an echo request
/// of more than one frame: `ping -s 3000`) are not reassembled: they go to `others`.
fn answer(p: &mut Pkt, ctx: &FwdCtx<'_>) -> bool {
    let h = wire::parse(p.data());
    let (mac, e) = (ctx.tx_mac, ctx.echo);
    let len = {
        let frame = p.data_mut();
        wire::arp_reply(frame, &h, mac, &e.ipv4).or_else(|| wire::icmp4_echo_reply(frame, &h, mac, &e.ipv4))
    };
    let len = len.or_else(|| icmp6(p, &h, mac, &e.ipv6));
    match len {
        Some(len) => {
            if len != p.len() {
                // Within what the frame had (or was grown to): cannot fail.
                let _ = p.set_data_len(len);
            }
            true
        }
        None => false,
    }
}

/// The ICMPv6 reply, with the packet grown to the advertisement's length first when it is shorter
/// (a solicitation without options, as duplicate address detection sends); back to its length when
/// there is no reply.
fn icmp6(p: &mut Pkt, h: &wire::Headers, mac: [u8; 6], ips: &[[u8; 16]]) -> Option<usize> {
    if h.l3 != wire::L3::Ipv6 || ips.is_empty() {
        return None;
    }
    let len = p.len();
    let need = usize::from(h.l2_len) + wire::NS_REPLY_LEN;
    // Only a neighbour solicitation (ICMPv6 type 135) is answered with more bytes than it has.
    let solicitation = h.l4_proto == 58 && p.data().get(usize::from(h.l2_len + h.l3_len)) == Some(&135);
    let grown = solicitation && len < need && p.set_data_len(need).is_ok();
    let r = wire::icmp6_reply(p.data_mut(), h, mac, ips);
    if r.is_none() && grown {
        let _ = p.set_data_len(len);
    }
    r
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
