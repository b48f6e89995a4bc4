//! `geneve_encap`: wraps every packet in the TX port's `geneve:` tunnel (RFC 8926): outer Ethernet from the
//! port's `mac` to its `peer_mac`, outer IP from `local_ip` to `remote_ip` with its header checksum
//! (left to the port when it offloads `ipv4_cksum`), UDP from a port chosen by a hash of the inner
//! flow to `dst_port`, and the tunnel header with the VNI. A packet without the headroom for the
//! outer headers is dropped, counted as `headroom`.

use super::{tunnel, EngineDesc, FwdCtx};
use crate::mbuf::Burst;
use crate::simd::Kernel;
use crate::wire::tunnel::Kind;

/// The engine entry.
pub const ENGINE: EngineDesc = EngineDesc {
    name: "geneve_encap",
    abi: Some(wasmdp_abi::engine::GENEVE_ENCAP),
    help: "encapsulate in the TX port's geneve tunnel",
    needs_rx: true,
    keeps_packets: false,
    run: crate::per_simd!(run),
};

fn run<K: Kernel>(ctx: &mut FwdCtx<'_>, burst: &mut Burst) {
    tunnel::encap::<K, { Kind::Geneve.index() }>(ctx, burst);
}
