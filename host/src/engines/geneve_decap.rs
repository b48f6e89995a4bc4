//! `geneve_decap`: strips the outer headers (options included) of the RX port's `geneve:` tunnel
//! (RFC 8926) from packets addressed to its `local_ip` and `dst_port` (and `vni`, when set),
//! recording the outer lengths, tunnel type and VNI in the second metadata cache line and flagging
//! the packet `RX_TUNNEL`. Frames that are not such packets (wrong address, port or VNI, malformed,
//! fragmented, control packets, critical options) are never decapsulated: they are dropped
//! (`tunnel`) or passed unchanged, as the port's `tunnel_others` says.

use super::{tunnel, EngineDesc, FwdCtx};
use crate::mbuf::Burst;
use crate::simd::Kernel;
use crate::wire::tunnel::Kind;

/// The engine entry.
pub const ENGINE: EngineDesc = EngineDesc {
    name: "geneve_decap",
    abi: Some(wasmdp_abi::engine::GENEVE_DECAP),
    help: "decapsulate the RX port's geneve tunnel; others per tunnel_others",
    needs_rx: true,
    keeps_packets: false,
    run: crate::per_simd!(run),
};

fn run<K: Kernel>(ctx: &mut FwdCtx<'_>, burst: &mut Burst) {
    tunnel::decap::<K, { Kind::Geneve.index() }>(ctx, burst);
}
