//! `copy`: copies each packet into a fresh buffer with the variant's memcpy and frees the original,
//! so the cost of a full copy shows next to the zero-copy engines.

use super::{prefetch_pkt, EngineDesc, FwdCtx};
use crate::mbuf::Burst;
use crate::offload;
use crate::simd::{self, Kernel};

/// The engine entry.
pub const ENGINE: EngineDesc = EngineDesc {
    name: "copy",
    abi: Some(wasmdp_abi::engine::COPY),
    help: "copy each packet into a new buffer (SIMD memcpy), free the original",
    needs_rx: true,
    keeps_packets: false,
    run: crate::per_simd!(run),
};

fn run<K: Kernel>(ctx: &mut FwdCtx<'_>, burst: &mut Burst) {
    let mut i = 0;
    while i < burst.len() {
        prefetch_pkt(burst, i + 1);
        let Some(mut fresh) = ctx.cache.alloc() else {
            let p = burst.remove(i);
            ctx.drops.nombuf += 1;
            ctx.cache.free(p);
            continue;
        };
        let old = &burst[i];
        let copied = fresh.set_data_len(old.len()).is_ok();
        if copied {
            // SAFETY: this function is reached only through `PerSimd::get` with a `Simd` for K.
            unsafe { simd::copy::<K>(fresh.data_mut(), old.data()) };
            fresh.meta_mut().copy_from(old.meta());
            *fresh.flow_mut() = *old.flow();
            offload::mark(&mut fresh, &ctx.tx);
            let old = burst.replace(i, fresh);
            ctx.cache.free(old);
        } else {
            // Same pool, same room: cannot happen, but never lose the packet over it.
            ctx.cache.free(fresh);
        }
        i += 1;
    }
}
