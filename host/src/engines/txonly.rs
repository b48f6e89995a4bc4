//! `txonly`: generates a burst of the TX port's template frames each round (testpmd txonly), no RX.

use super::{mark_all, same, EngineDesc, FwdCtx};
use crate::mbuf::Burst;

/// The engine entry.
pub const ENGINE: EngineDesc = EngineDesc {
    name: "txonly",
    abi: None,
    help: "generate the TX port's template frames, no RX",
    needs_rx: false,
    keeps_packets: false,
    run: same(run),
};

fn run(ctx: &mut FwdCtx<'_>, burst: &mut Burst) {
    let start = burst.len();
    let want = ctx.burst_size.saturating_sub(start);
    if !ctx.cache.alloc_bulk(burst, want) {
        ctx.alloc_failed += want as u64;
        return;
    }
    for p in &mut burst[start..] {
        ctx.template.fill(p, ctx.flow);
    }
    ctx.generated += want as u64;
    mark_all(ctx, burst);
}
