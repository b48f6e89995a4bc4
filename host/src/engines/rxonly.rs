//! `rxonly`: receives and frees (testpmd rxonly); every packet counts as an engine drop.

use super::{same, EngineDesc, FwdCtx};
use crate::mbuf::Burst;

/// The engine entry.
pub const ENGINE: EngineDesc = EngineDesc {
    name: "rxonly",
    abi: Some(wasmdp_abi::engine::RXONLY),
    help: "receive and free",
    needs_rx: true,
    keeps_packets: false,
    run: same(run),
};

fn run(ctx: &mut FwdCtx<'_>, burst: &mut Burst) {
    ctx.drops.engine += burst.len() as u64;
    ctx.cache.free_burst(burst);
}
