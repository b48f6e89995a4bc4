//! `io`: forwards packets unchanged (testpmd iofwd). Marks them with the TX port's offloads only when
//! that port has some, so that `tx_offloads` apply in io mode too.

use super::{mark_all, same, EngineDesc, FwdCtx};
use crate::mbuf::Burst;

/// The engine entry.
pub const ENGINE: EngineDesc = EngineDesc {
    name: "io",
    abi: Some(wasmdp_abi::engine::IO),
    help: "forward unchanged",
    needs_rx: true,
    keeps_packets: true,
    run: same(run),
};

fn run(ctx: &mut FwdCtx<'_>, burst: &mut Burst) {
    mark_all(ctx, burst);
}
