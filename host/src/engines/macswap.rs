//! `macswap`: swaps source and destination MAC (testpmd macswap), four packets at a time with the
//! variant's kernel, prefetching the next four.

use super::{mark_all, prefetch_quad, EngineDesc, FwdCtx};
use crate::mbuf::{Burst, Pkt};
use crate::simd::Kernel;

/// The engine entry.
pub const ENGINE: EngineDesc = EngineDesc {
    name: "macswap",
    abi: Some(wasmdp_abi::engine::MACSWAP),
    help: "swap source and destination MAC (SIMD kernel)",
    needs_rx: true,
    keeps_packets: true,
    run: crate::per_simd!(run),
};

fn run<K: Kernel>(ctx: &mut FwdCtx<'_>, burst: &mut Burst) {
    // The TX port's offloads, as every engine marks them (nothing to do when it has none); the MAC
    // swap does not change the header lengths the marking records.
    mark_all(ctx, burst);
    swap_only::<K>(burst);
}

/// The kernel alone, without offload marking, per variant: the `macswap` host function of plugins.
pub(crate) const SWAP_ONLY: crate::simd::PerSimd<fn(&mut [Pkt])> = crate::per_simd!(swap_only);

fn swap_only<K: Kernel>(pkts: &mut [Pkt]) {
    // SAFETY: K was resolved against this CPU at start (it is reached through `PerSimd::get`).
    unsafe { K::scope(|| swap::<K>(pkts)) }
}

/// The loop, inlined into [`Kernel::scope`]'s function so that the kernel is inlined into it.
#[inline(always)]
fn swap<K: Kernel>(pkts: &mut [Pkt]) {
    let n = pkts.len();
    let mut i = 0;
    while i + 4 <= n {
        prefetch_quad(pkts, i + 4);
        let quad = &mut pkts[i..i + 4];
        // Any real Ethernet frame has 16 bytes or more: then the kernel's 16-byte loads and stores
        // stay inside the frame, with one length test a packet. Shorter frames take `one`.
        if quad.iter().all(|p| p.len() >= 16) {
            let frames = [quad[0].data_ptr(), quad[1].data_ptr(), quad[2].data_ptr(), quad[3].data_ptr()];
            // SAFETY: each frame has 16 valid bytes (its length), the four buffers are distinct
            // packets, and K was resolved against this CPU at start.
            unsafe { K::macswap4(frames) };
        } else {
            quad.iter_mut().for_each(one::<K>);
        }
        i += 4;
    }
    pkts[i..].iter_mut().for_each(one::<K>);
}

/// One frame: swapped when it has MACs (14 bytes) and the kernel's 16 bytes fit in its buffer.
#[inline(always)]
fn one<K: Kernel>(p: &mut Pkt) {
    if p.len() >= 14 && p.len() + p.tailroom() >= 16 {
        // SAFETY: 16 valid bytes (checked), K resolved against this CPU at start.
        unsafe { K::macswap1(p.data_ptr()) };
    }
}
