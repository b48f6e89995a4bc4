//! `mac`: sets the source MAC to the TX port's and the destination to its configured peer (testpmd
//! macfwd), and marks offloads.

use super::{prefetch_pkt, same, EngineDesc, FwdCtx};
use crate::mbuf::Burst;
use crate::offload;

/// The engine entry.
pub const ENGINE: EngineDesc = EngineDesc {
    name: "mac",
    abi: Some(wasmdp_abi::engine::MAC),
    help: "set source MAC to the TX port's, destination to its peer_mac",
    needs_rx: true,
    keeps_packets: true,
    run: same(run),
};

fn run(ctx: &mut FwdCtx<'_>, burst: &mut Burst) {
    let mut addrs = [0u8; 12];
    addrs[..6].copy_from_slice(&ctx.peer_mac);
    addrs[6..].copy_from_slice(&ctx.tx_mac);
    for i in 0..burst.len() {
        prefetch_pkt(burst, i + 1);
        let p = &mut burst[i];
        if let Some(hdr) = p.data_mut().get_mut(..12) {
            hdr.copy_from_slice(&addrs);
        }
        offload::mark(p, &ctx.tx);
    }
}
