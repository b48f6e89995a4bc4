//! Filling a direct area (`area::DIRECT`): descriptors whose `DATA` is where each packet's bytes
//! are in the instance's mapping of the stream's region (`crate::plugin::direct`). Nothing is
//! copied; after the call, [`super::apply`] reads the descriptors as for an area without windows
//! (no dirty bytes: the plugin wrote the packets themselves).

use super::{descriptor, fill_header, put, Area, Stamp};
use crate::mbuf::Burst;
use crate::plugin::direct::Mapping;
use wasmdp_abi::area::{desc, DESC, HEADER};

/// Writes the header and each packet's descriptor, and opens the region (on the worker, the first
/// time). False when the area is not inside the memory, the region cannot be opened, or a packet is
/// not in the stream's pool (the stream copies every packet in; this is the host's own check).
#[inline(never)]
pub(crate) fn fill(a: &Area, mem: &mut [u8], m: &mut Mapping, burst: &Burst, s: &Stamp) -> bool {
    if !m.open() {
        return false;
    }
    let Some(region) = a.region(mem) else { return false };
    let pkts = &burst[..burst.len().min(a.max_pkts)];
    super::drops::reset(a, region, pkts.len());
    let (h, descs) = region.split_at_mut(HEADER);
    fill_header(h, a, burst, s);
    if a.heads {
        return heads(pkts, descs, m);
    }
    if a.flow_hash {
        each::<true>(pkts, descs, m)
    } else {
        each::<false>(pkts, descs, m)
    }
}

/// Direct heads: per packet its length, the bytes to its buffer's end, and where it is, as one
/// 8-byte store; the packet located by the pool's one rule (`Locator`), the metadata line read once.
fn heads(pkts: &[crate::mbuf::Pkt], entries: &mut [u8], m: &Mapping) -> bool {
    use wasmdp_abi::area::{direct_head, DIRECT_HEAD};
    const _: () = assert!(direct_head::LEN == 0 && direct_head::END == 2 && direct_head::DATA == 4);
    let locator = m.pool.locator();
    for (p, e) in pkts.iter().zip(entries.chunks_exact_mut(DIRECT_HEAD)) {
        let Some(off) = locator.offset_of(p) else { return false };
        let meta = p.meta();
        // `buf_len - data_off` is the length plus the tailroom (the packet invariant); the data's
        // offset is below the region's end, which `direct::map` keeps within 4 GiB.
        let end = meta.buf_len - meta.data_off;
        let data = (m.at + off) as u64;
        let word = u64::from(meta.data_len) | u64::from(end) << 16 | data << 32;
        e.copy_from_slice(&word.to_le_bytes());
    }
    true
}

fn each<const HASH: bool>(pkts: &[crate::mbuf::Pkt], descs: &mut [u8], m: &Mapping) -> bool {
    let locator = m.pool.locator();
    for (p, d) in pkts.iter().zip(descs.chunks_exact_mut(DESC)) {
        let Some(off) = locator.offset_of(p) else { return false };
        let mut b = descriptor::<HASH>(p, 0);
        // `at + off` is below the region's end, which `direct::map` keeps within 4 GiB.
        put(&mut b, desc::DATA, &((m.at + off) as u32).to_le_bytes());
        put(&mut b, desc::DIRECT_PORT, &p.meta().port.to_le_bytes());
        put(d, 0, &b);
    }
    true
}
