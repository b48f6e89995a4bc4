//! `ratelimit`: a token bucket per IPv4 source, in a map shared by every queue of the port and kept
//! across a hot swap (a new module declaring the same map continues the buckets).
//!
//! | param | default | meaning |
//! |---|---|---|
//! | `rate_pps` | required | packets per second each source may send (1..=1,000,000,000) |
//! | `burst` | `rate_pps / 10`, at least 1 | packets a source may send at once after being idle |
//! | `sources` | 65536 | most sources tracked (the map's capacity); packets of further sources pass, counted |
//!
//! Per burst: each packet's first 64 bytes (heads with drops: copied in, a verdict byte a packet
//! out) give its IPv4 source; the buckets of the burst's
//! sources are read with one `map_lookup_batch` and written back with one `map_update_batch`, so the
//! host calls are two per burst (per 64 packets in larger bursts), not per packet. Each bucket is
//! charged once for all its source's packets, as if each had taken its credit in turn; over-rate
//! packets get the drop verdict (counted as `policy` drops by the host, and `limited` here). A
//! frame with the IPv4 EtherType counts against the source address in its header even when the
//! rest of the header is malformed, so a broken header is no way past the limit; other frames (not
//! IPv4, or VLAN-tagged) pass. The clock is the burst area's (to within 250 us). Queues updating
//! one source at the same moment may each refill it: the limit is per source to within one burst
//! per queue.
//!
//! Events (`wasmdp ctl events PORT`): `over_rate` (`src:ipv4 dropped:u32 rate_pps:u32`), a source
//! whose packets were dropped and how many in that chunk of the burst; at most one event per
//! [`EVENT_GAP_NS`] per queue, so a flood is reported by samples, never by an event per burst.
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::{AreaSpec, Burst, Counter, Error, Event, Map, MapKind, Params, Policy, Refusal};

/// Bytes of each packet the policy reads.
const HEAD: u16 = 64;

/// Least time between two `over_rate` events of one queue.
pub const EVENT_GAP_NS: u64 = 10_000_000;

/// Packets decided together: their sources' buckets read with one batch call and written with one.
/// 64 takes the usual burst in one round; arrays for the largest burst (512: 17 KiB) cost more to
/// zero, every burst, than the rest of the policy.
const CHUNK: usize = 64;

/// A packet's slot when it has no IPv4 source: past every bucket of a chunk.
const NONE: u8 = u8::MAX;
const _: () = assert!(CHUNK < NONE as usize, "a slot must fit a u8 below NONE");

/// A bucket: credit in nanoseconds of sending time (one packet costs `period_ns`), and when it was
/// last topped up.
type Bucket = [u8; 16];

/// The policy.
pub struct RateLimit {
    period_ns: u64,
    depth_ns: u64,
    buckets: Map<4, 16>,
    limited: Counter,
    untracked: Counter,
    over_rate: Event<12>,
    rate: u32,
    /// When the next `over_rate` event may be emitted.
    next_event_ns: u64,
    scratch: Scratch,
}

/// A chunk's sources, slots, packet counts and buckets, kept between chunks rather than made
/// (zeroed: 1.5 KiB) for each. Each chunk reads only what it wrote: `slot[..n]`, the others `..u`.
struct Scratch {
    uniq: [[u8; 4]; CHUNK],
    slot: [u8; CHUNK],
    /// Packets of each source in the chunk; after the buckets are charged, how many of them pass.
    count: [u8; CHUNK],
    buckets: [Bucket; CHUNK],
    found: [u8; CHUNK],
}

impl Policy for RateLimit {
    const AREA: AreaSpec = AreaSpec::HeadsWithDrops(HEAD);

    fn init(_port: u32, params: &Params) -> Result<Self, Refusal> {
        let rate = params.get_u64("rate_pps")?.ok_or_else(|| Refusal::missing("rate_pps"))?;
        if !(1..=1_000_000_000).contains(&rate) {
            return Err(Refusal::new("param `rate_pps`: give 1..=1000000000 packets per second"));
        }
        let burst = params.get_u64("burst")?.unwrap_or((rate / 10).max(1)).max(1);
        let sources = params.get_u32("sources")?.unwrap_or(65536);
        let period_ns = 1_000_000_000 / rate;
        Ok(RateLimit {
            period_ns,
            depth_ns: period_ns.saturating_mul(burst),
            buckets: Map::declare("buckets", MapKind::Hash, sources)?,
            limited: Counter::register("limited")?,
            untracked: Counter::register("untracked")?,
            over_rate: Event::register("over_rate", "src:ipv4 dropped:u32 rate_pps:u32")?,
            rate: rate as u32,
            next_event_ns: 0,
            scratch: Scratch {
                uniq: [[0; 4]; CHUNK],
                slot: [NONE; CHUNK],
                count: [0; CHUNK],
                buckets: [[0; 16]; CHUNK],
                found: [0; CHUNK],
            },
        })
    }

    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
        let now = burst.now_ns();
        for start in (0..burst.len() as usize).step_by(CHUNK) {
            self.limit(burst, start, now)?;
        }
        Ok(())
    }
}

impl RateLimit {
    /// Packets `start..start + CHUNK` of the burst: over-rate ones get the drop verdict.
    ///
    /// Each source's bucket is charged once for all its packets in the chunk: the first
    /// `credit / period` of them pass, the rest are over, as if each had taken its credit in turn.
    /// Only a chunk with a source over its rate walks its packets a second time.
    fn limit(&mut self, burst: &mut Burst, start: usize, now: u64) -> Result<(), Error> {
        let Scratch { uniq, slot, count, buckets, found } = &mut self.scratch;
        let (u, n) = sources(burst, start, uniq, slot, count)?;
        self.buckets.get_batch(&uniq[..u], &mut buckets[..u], &mut found[..u])?;
        // The first source over its rate in the chunk, and how many of its packets are dropped.
        let mut over: Option<(usize, u8)> = None;
        for (j, ((b, f), c)) in buckets[..u].iter_mut().zip(&found[..u]).zip(&mut count[..u]).enumerate() {
            let topped = refill(self.depth_ns, if *f == 1 { Some(*b) } else { None }, now);
            let (bucket, passed) = charge(self.period_ns, topped, *c);
            if passed < *c && over.is_none() {
                over = Some((j, *c - passed));
            }
            (*b, *c) = (bucket, passed);
        }
        if let Some((j, dropped)) = over {
            if now >= self.next_event_ns {
                // `now` is the burst's clock: the host's ticker's last tick, late by as much as the
                // ticker was (several ms on a loaded machine), so the gap is measured from the
                // precise clock, read only when an event goes: at most one per EVENT_GAP_NS in
                // real time, as the events' timestamps show.
                self.next_event_ns = wasmdp_sdk::now_ns().max(now) + EVENT_GAP_NS;
                let mut rec = [0u8; 12];
                rec[..4].copy_from_slice(&uniq[j]);
                rec[4..8].copy_from_slice(&u32::from(dropped).to_le_bytes());
                rec[8..].copy_from_slice(&self.rate.to_le_bytes());
                self.over_rate.emit(&rec);
            }
            let limited = drop_over(burst, start, &slot[..n], &mut count[..u])?;
            self.limited.add(limited);
        }
        let written = self.buckets.insert_batch(&uniq[..u], &buckets[..u])?;
        self.untracked.add((u - written as usize) as u64);
        Ok(())
    }
}

/// Reads the sources of packets `start..start + CHUNK`: the chunk's distinct sources into `uniq`,
/// each packet's slot among them (NONE: not IPv4) into `slot`, and each source's packets into
/// `count`. Returns the sources found and the packets read.
///
/// A packet from the previous packet's source (the usual case within a flow) takes its slot without
/// a search. The loop state is kept small (a counter, the iterator's index, the previous source and
/// its slot): with `skip`, `take`, `enumerate` and an `Option` for the previous source, cranelift
/// kept them in spilled registers.
fn sources(
    burst: &mut Burst,
    start: usize,
    uniq: &mut [[u8; 4]; CHUNK],
    slot: &mut [u8; CHUNK],
    count: &mut [u8; CHUNK],
) -> Result<(usize, usize), Error> {
    let mut heads = burst.heads::<{ HEAD as usize }>()?;
    let mut packets = heads.verdicts()?;
    if start > 0 {
        packets.nth(start - 1);
    }
    let (mut u, mut n) = (0, 0);
    // `run`: packets of `last_j` since its count was last brought up to date. Counted in a
    // register and added when the source changes, not stored per packet.
    let (mut last_src, mut last_j, mut run) = (0u32, usize::MAX, 0u8);
    while n < CHUNK {
        let Some((bytes, _)) = packets.next() else { break };
        let i = n;
        // The slots written this burst: the later passes read no other.
        n += 1;
        // Both cases end in the one store: a `continue` for the frame without a source made
        // LLVM nest a loop for runs of such frames, and WebAssembly pays an epoch check at each
        // loop header, every packet.
        slot[i] = match source(bytes) {
            None => NONE,
            Some(src) => {
                let key = u32::from_ne_bytes(src);
                if last_j == usize::MAX || key != last_src {
                    if let Some(c) = count.get_mut(last_j) {
                        *c += run;
                    }
                    run = 0;
                    last_j = match uniq[..u].iter().position(|k| *k == src) {
                        Some(j) => j,
                        None => {
                            uniq[u] = src;
                            count[u] = 0;
                            u += 1;
                            u - 1
                        }
                    };
                    last_src = key;
                }
                run += 1;
                last_j as u8
            }
        };
    }
    if let Some(c) = count.get_mut(last_j) {
        *c += run;
    }
    Ok((u, n))
}

/// Gives the drop verdict to each packet of the chunk past its source's `passing` count, in order;
/// returns how many.
fn drop_over(burst: &mut Burst, start: usize, slot: &[u8], passing: &mut [u8]) -> Result<u64, Error> {
    // A packet's verdict is looked up (in O(1)) only for a packet to drop.
    let mut heads = burst.heads::<{ HEAD as usize }>()?;
    let mut packets = heads.verdicts()?.skip(start);
    let (mut limited, mut at) = (0, 0);
    for (i, &s) in slot.iter().enumerate() {
        let Some(p) = passing.get_mut(usize::from(s)) else { continue };
        if *p > 0 {
            *p -= 1;
            continue;
        }
        if let Some((_, v)) = packets.nth(i - at) {
            v.drop();
        }
        at = i + 1;
        limited += 1;
    }
    Ok(limited)
}

/// The bucket topped up to `now`, at most `depth_ns` of credit (a new source starts full).
fn refill(depth_ns: u64, b: Option<Bucket>, now: u64) -> Bucket {
    let (credit, last) = match b {
        Some(b) => (word(&b, 0), word(&b, 1)),
        None => (depth_ns, now),
    };
    let credit = credit.saturating_add(now.saturating_sub(last)).min(depth_ns);
    bucket(credit, now.max(last))
}

/// Charges `packets` packets of `period_ns` each to bucket `b`, as many as its credit covers:
/// the bucket after, and how many were covered.
fn charge(period_ns: u64, b: Bucket, packets: u8) -> (Bucket, u8) {
    let credit = word(&b, 0);
    let want = period_ns * u64::from(packets);
    let passed = if credit >= want { packets } else { (credit / period_ns) as u8 };
    (bucket(credit - period_ns * u64::from(passed), word(&b, 1)), passed)
}

fn word(b: &Bucket, i: usize) -> u64 {
    u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]))
}

fn bucket(credit: u64, last: u64) -> Bucket {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&credit.to_le_bytes());
    b[8..].copy_from_slice(&last.to_le_bytes());
    b
}

/// The IPv4 source address field of an untagged frame with the IPv4 EtherType. The rest of the
/// header is not checked: a malformed header must not be a way past the limit (the next router
/// drops it anyway), and checking it would cost more than the rest of the parse.
fn source(frame: &[u8]) -> Option<[u8; 4]> {
    let f = frame.first_chunk::<30>()?;
    (f[12..14] == [0x08, 0x00]).then(|| [f[26], f[27], f[28], f[29]])
}

wasmdp_sdk::export_policy!(RateLimit);

#[cfg(test)]
mod tests {
    use super::*;
    use wasmdp_sdk::mock;

    fn frame(src: u8) -> std::vec::Vec<u8> {
        let mut f = std::vec![0u8; 60];
        f[12..14].copy_from_slice(&[8, 0]);
        f[14..34].copy_from_slice(&[0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, src, 10, 0, 0, 99]);
        f
    }

    fn burst(p: &mut RateLimit, srcs: &[u8], now_ms: i64) -> std::vec::Vec<bool> {
        let frames: std::vec::Vec<_> = srcs.iter().map(|&s| frame(s)).collect();
        mock::with(|h| h.now_ns = now_ms * 1_000_000);
        mock::begin_burst(&frames.iter().map(|f| f.as_slice()).collect::<std::vec::Vec<_>>());
        p.on_burst(&mut Burst::current().unwrap()).unwrap();
        mock::end_burst().iter().map(|o| !o.dropped).collect()
    }

    /// A fresh mock host and a policy of 1000 packets/s with bursts of `depth`.
    fn limiter(depth: &str) -> RateLimit {
        mock::reset();
        mock::set_area(RateLimit::AREA);
        mock::set_param("rate_pps", "1000");
        mock::set_param("burst", depth);
        RateLimit::init(0, &Params::host()).unwrap()
    }

    #[test]
    fn each_source_gets_its_burst_then_its_rate() {
        let mut p = limiter("2");
        // Source 1: two pass, the third is over; source 2 has its own bucket.
        assert_eq!(burst(&mut p, &[1, 1, 1, 2], 0), [true, true, false, true]);
        // 1 ms later: one packet's credit back for source 1.
        assert_eq!(burst(&mut p, &[1, 1], 1), [true, false]);
        // A new instance (a hot swap) finds the same buckets: source 1 is still empty.
        let mut q = RateLimit::init(0, &Params::host()).unwrap();
        assert_eq!(burst(&mut q, &[1], 1), [false]);
        assert_eq!(mock::counter("limited"), Some(3));
        // One event for the first drop (source 1, one packet of 1000/s); the second burst is 1 ms
        // later, within EVENT_GAP_NS: no event.
        let rec: std::vec::Vec<u8> = [10, 0, 0, 1, 1, 0, 0, 0, 0xe8, 3, 0, 0].to_vec();
        assert_eq!(mock::events(), [("over_rate".into(), rec.clone()), ("over_rate".into(), rec)]);
    }

    /// Sources interleaved and repeated, with a non-IPv4 frame among them: each keeps its own bucket.
    #[test]
    fn interleaved_sources_each_keep_their_bucket() {
        let mut p = limiter("2");
        let mut frames: std::vec::Vec<_> = [3, 4, 3, 3, 5, 4, 3, 4, 5].iter().map(|&s| frame(s)).collect();
        frames.insert(2, std::vec![0u8; 60]);
        mock::begin_burst(&frames.iter().map(|f| f.as_slice()).collect::<std::vec::Vec<_>>());
        p.on_burst(&mut Burst::current().unwrap()).unwrap();
        let passed: std::vec::Vec<bool> = mock::end_burst().iter().map(|o| !o.dropped).collect();
        assert_eq!(passed, [true, true, true, true, false, true, true, false, false, true]);
        assert_eq!(mock::counter("limited"), Some(3));
    }

    /// The arrays outlive a burst: a non-IPv4 frame where the burst before had an IPv4 one takes
    /// no bucket.
    #[test]
    fn a_burst_reads_nothing_the_burst_before_left() {
        let mut p = limiter("1");
        assert_eq!(burst(&mut p, &[1, 1], 0), [true, false]);
        let frames = [std::vec![0u8; 60], frame(2)];
        mock::begin_burst(&frames.iter().map(|f| f.as_slice()).collect::<std::vec::Vec<_>>());
        p.on_burst(&mut Burst::current().unwrap()).unwrap();
        let passed: std::vec::Vec<bool> = mock::end_burst().iter().map(|o| !o.dropped).collect();
        assert_eq!(passed, [true, true], "source 2's one packet of credit is its own");
    }

    /// A malformed IPv4 header (version 5, header length 0, total length 0) still counts against
    /// its source address; a VLAN-tagged or ARP frame passes.
    #[test]
    fn a_broken_ipv4_header_is_no_way_past_the_limit() {
        let mut p = limiter("1");
        let mut broken = frame(9);
        broken[14] = 0x50;
        broken[16..18].fill(0);
        let mut tagged = frame(9);
        tagged[12..14].copy_from_slice(&[0x81, 0x00]);
        let mut arp = frame(9);
        arp[13] = 0x06;
        let frames = [frame(9), broken.clone(), broken, tagged, arp];
        mock::begin_burst(&frames.iter().map(|f| f.as_slice()).collect::<std::vec::Vec<_>>());
        p.on_burst(&mut Burst::current().unwrap()).unwrap();
        let passed: std::vec::Vec<bool> = mock::end_burst().iter().map(|o| !o.dropped).collect();
        assert_eq!(passed, [true, false, false, true, true]);
        assert_eq!(mock::counter("limited"), Some(2));
    }

    /// A burst longer than one chunk: the second chunk finds the bucket the first wrote.
    #[test]
    fn a_bucket_carries_over_the_chunks_of_a_long_burst() {
        let mut p = limiter("100");
        let passed = burst(&mut p, &[7; 150], 0);
        let want: std::vec::Vec<bool> = (0..150).map(|i| i < 100).collect();
        assert_eq!(passed, want);
        assert_eq!(mock::counter("limited"), Some(50));
    }

    /// Against a model that takes each packet's credit in turn: random bursts (some longer than a
    /// chunk) of a few sources and non-IPv4 frames, at random times.
    #[test]
    fn verdicts_match_a_packet_by_packet_token_bucket() {
        let mut p = limiter("3");
        let (period, depth) = (1_000_000u64, 3_000_000u64);
        let mut model: std::collections::HashMap<u8, (u64, u64)> = std::collections::HashMap::new();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        let mut now_ms = 0;
        for _ in 0..300 {
            now_ms += next(4) as i64;
            let now = now_ms as u64 * 1_000_000;
            let srcs: std::vec::Vec<u8> = (0..1 + next(150)).map(|_| next(7) as u8).collect();
            let frames: std::vec::Vec<_> =
                srcs.iter().map(|&s| if s == 0 { std::vec![0u8; 60] } else { frame(s) }).collect();
            mock::with(|h| h.now_ns = now_ms * 1_000_000);
            mock::begin_burst(&frames.iter().map(|f| f.as_slice()).collect::<std::vec::Vec<_>>());
            p.on_burst(&mut Burst::current().unwrap()).unwrap();
            let got: std::vec::Vec<bool> = mock::end_burst().iter().map(|o| !o.dropped).collect();
            let want: std::vec::Vec<bool> = srcs
                .iter()
                .map(|&s| {
                    if s == 0 {
                        return true;
                    }
                    let (credit, last) = model.entry(s).or_insert((depth, now));
                    *credit = (*credit + now.saturating_sub(*last)).min(depth);
                    *last = now.max(*last);
                    let pass = *credit >= period;
                    if pass {
                        *credit -= period;
                    }
                    pass
                })
                .collect();
            assert_eq!(got, want, "sources {srcs:?} at {now_ms} ms");
        }
    }
}
