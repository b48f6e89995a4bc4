//! Filling a direct area (`area::DIRECT`): descriptors whose `DATA` is where each packet's bytes
//! are in the instance's mapping of the stream's region (`crate::plugin::direct`). Nothing is
//! copied; after the call, [`super::apply`] reads the descriptors as for an area without windows
//! (no dirty bytes: the plugin wrote the packets themselves).

use super::{descriptor, fill_header, put, Area, Stamp};
use crate::mbuf::{Burst, Locator, Pkt};
use crate::plugin::direct::Mapping;
use wasmdp_abi::area::{desc, DESC, HEADER};

/// Writes the header and each packet's descriptor, and opens the region (on the worker, the first
/// time). False when the area is not inside the memory, the region cannot be opened, or a packet is
/// not in the stream's pool (the stream copies every packet in; this is the host's own check) or
/// cannot be moved out of its buffer's gap ([`lift`]).
#[inline(never)]
pub(crate) fn fill(a: &Area, mem: &mut [u8], m: &mut Mapping, burst: &mut Burst, s: &Stamp) -> bool {
    if !m.open() {
        return false;
    }
    let Some(region) = a.region(mem) else { return false };
    let n = burst.len().min(a.max_pkts());
    super::drops::reset(a, region, n);
    let (h, descs) = region.split_at_mut(HEADER);
    fill_header(h, a, burst, s);
    let pkts = &mut burst.as_mut_slice()[..n];
    if a.heads() {
        return heads(pkts, descs, m);
    }
    if a.flow_hash() {
        each::<true>(pkts, descs, m)
    } else {
        each::<false>(pkts, descs, m)
    }
}

/// Direct heads: per packet its length, the bytes to its buffer's end, and where it is, as one
/// 8-byte store; the packet located by the pool's one rule (`Locator`), the metadata line read once.
/// Four packets a loop turn (one test of the loop's end for four).
fn heads(pkts: &mut [Pkt], entries: &mut [u8], m: &Mapping) -> bool {
    use wasmdp_abi::area::DIRECT_HEAD;
    let locator = m.pool.locator();
    // The entries of these packets alone, so that the last ones (past the fours) pair with theirs.
    let Some(entries) = entries.get_mut(..pkts.len() * DIRECT_HEAD) else { return false };
    let (pq, pr) = pkts.as_chunks_mut::<4>();
    let (eq, er) = entries.as_chunks_mut::<{ 4 * DIRECT_HEAD }>();
    for (p, e) in pq.iter_mut().zip(eq) {
        for (p, e) in p.iter_mut().zip(e.as_chunks_mut::<DIRECT_HEAD>().0) {
            if !put_entry(p, e, m, &locator) {
                return false;
            }
        }
    }
    for (p, e) in pr.iter_mut().zip(er.as_chunks_mut::<DIRECT_HEAD>().0) {
        if !put_entry(p, e, m, &locator) {
            return false;
        }
    }
    true
}

/// One packet's entry (false when it is not in the pool, or cannot be lifted out of its gap).
#[inline(always)]
fn put_entry(p: &mut Pkt, e: &mut [u8; wasmdp_abi::area::DIRECT_HEAD], m: &Mapping, locator: &Locator) -> bool {
    use wasmdp_abi::area::direct_head;
    const _: () = assert!(direct_head::LEN == 0 && direct_head::END == 2 && direct_head::DATA == 4);
    let Some(off) = locator.data_in_alias(p).or_else(|| lift(p, locator).map(|(off, _)| off)) else {
        return false;
    };
    let meta = p.meta();
    // `buf_len - data_off` is the length plus the tailroom (the packet invariant); the data's
    // offset is below the region's end, which `direct::map` keeps within 4 GiB.
    let end = meta.buf_len - meta.data_off;
    // Two 4-byte stores: as one 8-byte word, the data's offset took a shift and an OR more.
    let (len_end, data) = e.split_at_mut(direct_head::DATA);
    len_end.copy_from_slice(&(u32::from(meta.data_len) | u32::from(end) << 16).to_le_bytes());
    data.copy_from_slice(&((m.at + off) as u32).to_le_bytes());
    true
}

fn each<const HASH: bool>(pkts: &mut [Pkt], descs: &mut [u8], m: &Mapping) -> bool {
    let locator = m.pool.locator();
    for (p, d) in pkts.iter_mut().zip(descs.chunks_exact_mut(DESC)) {
        let Some((off, headroom)) = locator.in_alias(p).or_else(|| lift(p, &locator)) else { return false };
        let mut b = descriptor::<HASH>(p, 0);
        // `at + off` is below the region's end, which `direct::map` keeps within 4 GiB.
        put(&mut b, desc::DATA, &((m.at + off) as u32).to_le_bytes());
        // The headroom the plugin can see and write (the buffer's gap is not in its alias).
        put(&mut b, desc::HEADROOM, &headroom.to_le_bytes());
        put(&mut b, desc::DIRECT_PORT, &p.meta().port.to_le_bytes());
        put(d, 0, &b);
    }
    true
}

/// A packet that starts in its buffer's gap (headers prepended, before this plugin, past the
/// headroom the plugin's alias shows: `crate::mbuf::shared`) moved to the start of its data page,
/// where the plugin sees it; where it is then. `None` when the buffer is not the pool's or its
/// tailroom cannot take the move.
#[cold]
#[inline(never)]
fn lift(p: &mut Pkt, locator: &Locator) -> Option<(usize, u16)> {
    let at = locator.header_at(p)?;
    let short = crate::mbuf::shared::gap(at).checked_sub(usize::from(p.meta().data_off))?;
    p.slide(short).ok()?;
    locator.in_alias(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mbuf::{shared, Pool, PoolConfig};

    /// A packet prepended one byte past the headroom the plugin sees starts in its buffer's gap:
    /// lifted onto its data page, it keeps its bytes, and the alias then shows all of them.
    #[test]
    fn a_packet_in_its_gap_is_lifted_onto_its_data_page_with_its_bytes() {
        let pool = Pool::new_shared(PoolConfig { size: 16, cache_size: 1, ..Default::default() }).unwrap();
        let locator = pool.locator();
        let mut cache = pool.cache();
        let mut burst = Burst::new();
        assert!(cache.alloc_bulk(&mut burst, 16));
        let p = burst.as_mut_slice().iter_mut().max_by_key(|p| shared::gap(p.meta_ptr() as usize)).unwrap();
        let frame: Vec<u8> = (1..=60).collect();
        p.copy_from(&frame).unwrap();
        let (_, seen) = locator.in_alias(p).unwrap();
        let n = usize::from(seen) + 1;
        p.prepend(n).unwrap()[..n].fill(7);
        assert_eq!(locator.in_alias(p), None, "the first byte is in the gap");
        let want = p.data().to_vec();
        let (off, headroom) = lift(p, &locator).unwrap();
        assert_eq!((p.data(), headroom), (&want[..], 0));
        assert_eq!(locator.in_alias(p), Some((off, 0)));
        cache.free_burst(&mut burst);
    }
}
