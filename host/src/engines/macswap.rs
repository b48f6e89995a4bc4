//! `macswap`: swaps source and destination MAC (testpmd macswap), four packets at a time with the
//! variant's kernel: mark offloads, then load four headers, shuffle, store; prefetching the next
//! four.

use super::{prefetch_pkt, EngineDesc, FwdCtx};
use crate::mbuf::{Burst, Pkt};
use crate::offload;
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

/// A kernel may load and store 16 bytes from the data start; frames need 14 to have MACs at all.
#[inline(always)]
fn swappable(p: &Pkt) -> bool {
    p.len() >= 14 && p.len() + p.tailroom() >= 16
}

fn run<K: Kernel>(ctx: &mut FwdCtx<'_>, burst: &mut Burst) {
    let tx = ctx.tx;
    let n = burst.len();
    let mut i = 0;
    while i + 4 <= n {
        for j in 4..8 {
            prefetch_pkt(burst, i + j);
        }
        let quad = &mut burst[i..i + 4];
        if quad.iter().all(swappable) {
            // Marked here, not between the kernel's loads and stores: `tx` stays in registers (a
            // closure handed to the kernel's out-of-line body takes its address, and every packet's
            // stores then reload it), and with no offloads the marking is a few stores a packet.
            for p in quad.iter_mut() {
                offload::mark(p, &tx);
            }
            let frames = [quad[0].data_ptr(), quad[1].data_ptr(), quad[2].data_ptr(), quad[3].data_ptr()];
            // SAFETY: each frame has 16 valid bytes (checked by `swappable`), the four buffers are
            // distinct packets, and K was resolved against this CPU at start.
            unsafe { K::macswap4(frames) };
        } else {
            quad.iter_mut().for_each(|p| one::<K>(p, &tx));
        }
        i += 4;
    }
    for p in &mut burst[i..] {
        one::<K>(p, &tx);
    }
}

#[inline(always)]
fn one<K: Kernel>(p: &mut Pkt, tx: &offload::TxOffloads) {
    offload::mark(p, tx);
    if swappable(p) {
        // SAFETY: 16 valid bytes (checked), K resolved against this CPU at start.
        unsafe { K::macswap1(p.data_ptr()) };
    }
}

/// The kernel alone, without offload marking, per variant: the `macswap` host function of plugins.
pub(crate) const SWAP_ONLY: crate::simd::PerSimd<fn(&mut [Pkt])> = crate::per_simd!(swap_only);

fn swap_only<K: Kernel>(pkts: &mut [Pkt]) {
    let mut quads = pkts.chunks_exact_mut(4);
    for quad in &mut quads {
        if quad.iter().all(swappable) {
            let frames = [quad[0].data_ptr(), quad[1].data_ptr(), quad[2].data_ptr(), quad[3].data_ptr()];
            // SAFETY: as in `run`: 16 valid bytes each, distinct packets, K resolved at start.
            unsafe { K::macswap4(frames) };
        } else {
            quad.iter_mut().filter(|p| swappable(p)).for_each(|p| {
                // SAFETY: 16 valid bytes (checked), K resolved at start.
                unsafe { K::macswap1(p.data_ptr()) }
            });
        }
    }
    for p in quads.into_remainder().iter_mut().filter(|p| swappable(p)) {
        // SAFETY: 16 valid bytes (checked), K resolved at start.
        unsafe { K::macswap1(p.data_ptr()) };
    }
}
