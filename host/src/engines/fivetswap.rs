//! `5tswap`: swaps MACs, then IPv4/IPv6 addresses, then TCP/UDP ports, skipping VLAN/QinQ tags
//! (testpmd 5tswap). Swaps what the frame validly holds; malformed frames pass with what could be done.

use super::{prefetch_pkt, same, EngineDesc, FwdCtx};
use crate::mbuf::Burst;
use crate::{offload, wire};

/// The engine entry.
pub const ENGINE: EngineDesc = EngineDesc {
    name: "5tswap",
    abi: Some(wasmdp_abi::engine::FIVETSWAP),
    help: "swap MACs, IP addresses and L4 ports (reflector)",
    needs_rx: true,
    keeps_packets: true,
    run: same(run),
};

fn run(ctx: &mut FwdCtx<'_>, burst: &mut Burst) {
    for i in 0..burst.len() {
        prefetch_pkt(burst, i + 1);
        let p = &mut burst[i];
        wire::swap_five_tuple(p.data_mut());
        offload::mark(p, &ctx.tx);
    }
}
