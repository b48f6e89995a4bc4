//! `firewall`: a stateful firewall across two ports. Packets entering on the inside port open (or
//! refresh) their flow and pass; packets entering on the outside port pass only when they are
//! replies to a flow the inside opened. The flows live in one LRU map with expiry that both ports'
//! policies share (`shared_maps: [fw_flows]`), so a flood of new flows evicts the least recently
//! used flows, never the flows in use, and idle flows expire without a list kept by the plugin.
//!
//! | param | default | meaning |
//! |---|---|---|
//! | `side` | required | `inside` or `outside`: the side of the port this policy runs on |
//! | `flows` | 65536 | most flows (the map's capacity; both sides must give the same) |
//! | `idle_ms` | 60000 | a flow expires this long after its last packet either way (both sides alike) |
//! | `engine` | `io` | engine for the packets that pass |
//!
//! A flow is the IPv4 5-tuple (TCP, UDP, or any other protocol with ports 0; a fragment after the
//! first also with ports 0), keyed as seen from the inside: inside address, outside address, inside
//! port, outside port, protocol. On the inside every IPv4 packet passes and its flow is written to
//! the map (one `map_update_batch` per burst); on the outside each IPv4 packet's flow is looked up
//! (one `map_lookup_batch` per burst) and the packet dropped unless found. ARP passes both ways;
//! any other frame (IPv6, headers cut short or longer than the first 64 bytes) passes from the
//! inside untracked and is dropped on the outside. Per packet the policy reads its first 64 bytes
//! (heads with drops: copied in, a verdict byte a packet out). Counters: `allowed`, `denied`, `untracked`, and
//! `unrecorded` (flows the map refused: none with LRU, unless the capacity is smaller than a burst).
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::net::fast::bytes_at;
use wasmdp_sdk::{AreaSpec, Burst, Counter, Engine, Error, Map, MapKind, Params, Policy, Refusal};

const MAX: usize = wasmdp_sdk::abi::MAX_BURST as usize;
/// Bytes of each packet the policy reads: Ethernet, two VLAN tags, IPv4 with up to two option
/// words, the ports.
const HEAD: u16 = 64;
/// The flow key: inside address, outside address, inside port, outside port, protocol.
pub type FlowKey = [u8; 13];

/// What a frame is to the firewall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    /// IPv4: source, destination, source port, destination port, protocol.
    Ipv4 { src: [u8; 4], dst: [u8; 4], sport: [u8; 2], dport: [u8; 2], proto: u8 },
    /// ARP.
    Arp,
    /// Anything else.
    Other,
}

/// Parses Ethernet, up to two VLAN tags, IPv4 and the TCP/UDP ports of `head`.
pub fn parse(head: &[u8]) -> Frame {
    let mut off = 12;
    let Some(mut ethertype) = be16(head, off) else { return Frame::Other };
    for _ in 0..2 {
        if !matches!(ethertype, 0x8100 | 0x88a8 | 0x9100) {
            break;
        }
        off += 4;
        let Some(t) = be16(head, off) else { return Frame::Other };
        ethertype = t;
    }
    match ethertype {
        0x0806 => return Frame::Arp,
        0x0800 => {}
        _ => return Frame::Other,
    }
    let Some(ip) = head.get(off + 2..) else { return Frame::Other };
    let Some(&v) = ip.first() else { return Frame::Other };
    let ihl = usize::from(v & 0x0f) * 4;
    if v >> 4 != 4 || ihl < 20 || ip.len() < 20 {
        return Frame::Other;
    }
    let proto = ip[9];
    let (src, dst) = ([ip[12], ip[13], ip[14], ip[15]], [ip[16], ip[17], ip[18], ip[19]]);
    let first_fragment = u16::from_be_bytes([ip[6], ip[7]]) & 0x1fff == 0;
    let (mut sport, mut dport) = ([0; 2], [0; 2]);
    if matches!(proto, 6 | 17) && first_fragment {
        let Some(p) = ip.get(ihl..ihl + 4) else { return Frame::Other };
        (sport, dport) = ([p[0], p[1]], [p[2], p[3]]);
    }
    Frame::Ipv4 { src, dst, sport, dport, proto }
}

/// The flow key of an untagged IPv4 packet without options (the frames that dominate real
/// traffic), read at fixed offsets of the packet's first 38 bytes: the addresses as one word and
/// the ports as another, swapped by a rotation for a packet from the outside. None: any other
/// frame, for [`parse`] (which gives the same key for these: `fast_key_is_parse`).
#[inline(always)]
pub fn fast_key(head: &[u8], outbound: bool) -> Option<FlowKey> {
    let h: &[u8; 38] = head.first_chunk()?;
    // Bytes 12..16 (EtherType, version and header length) and 20..24 (flags and fragment offset,
    // TTL, protocol) one load each, in memory order: a mask and a compare a test, where a byte each
    // cost cranelift an address per byte, and a test of the protocol byte became a jump table.
    if u32::from_le_bytes(bytes_at(h, 12)) & 0xff_ffff != 0x45_0008 {
        return None;
    }
    let l3 = u32::from_le_bytes(bytes_at(h, 20));
    let proto = (l3 >> 24) as u8;
    // TCP or UDP, and a first fragment (offset 0: the low 5 bits of byte 20 and byte 21): the
    // ports, else 0 (masked, no branch).
    let first = l3 & 0xff00_ff1f;
    let has_ports = first == 6 << 24 || first == 17 << 24;
    let addrs = u64::from_le_bytes(bytes_at(h, 26));
    let ports = u32::from_le_bytes(bytes_at(h, 34)) & u32::from(has_ports).wrapping_neg();
    let (addrs, ports) = if outbound { (addrs, ports) } else { (addrs.rotate_left(32), ports.rotate_left(16)) };
    let mut key = [0; 13];
    key[..8].copy_from_slice(&addrs.to_le_bytes());
    key[8..12].copy_from_slice(&ports.to_le_bytes());
    key[12] = proto;
    Some(key)
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

/// The flow key of a packet from the inside (`outbound`) or from the outside.
#[inline(always)]
pub fn flow_key(src: [u8; 4], dst: [u8; 4], sport: [u8; 2], dport: [u8; 2], proto: u8, outbound: bool) -> FlowKey {
    let (inside, outside, iport, oport) = if outbound { (src, dst, sport, dport) } else { (dst, src, dport, sport) };
    [
        inside[0], inside[1], inside[2], inside[3], outside[0], outside[1], outside[2], outside[3], iport[0], iport[1],
        oport[0], oport[1], proto,
    ]
}

wasmdp_sdk::map_layout!("fw_flows", key: "inside:ipv4 outside:ipv4 iport:be16 oport:be16 proto:u8", value: "seen:u8");

/// The policy.
pub struct Firewall {
    inside: bool,
    engine: Engine,
    flows: Map<13, 1>,
    allowed: Counter,
    denied: Counter,
    untracked: Counter,
    unrecorded: Counter,
    scratch: Scratch,
}

/// A burst's flow keys (of its IPv4 packets, in order) and what the lookups found, kept between
/// bursts (each burst reads only what it wrote).
struct Scratch {
    keys: [FlowKey; MAX],
    /// The inside writes 1 for each flow; the outside's lookups write here too.
    values: [[u8; 1]; MAX],
    found: [u8; MAX],
}

impl Policy for Firewall {
    const AREA: AreaSpec = AreaSpec::HeadsWithDrops(HEAD);

    fn init(_port: u32, params: &Params) -> Result<Self, Refusal> {
        let mut buf = [0u8; 16];
        let inside = match params.try_get("side", &mut buf) {
            Ok(Some("inside")) => true,
            Ok(Some("outside")) => false,
            Ok(Some(s)) => return Err(Refusal::param("side", s, "`inside` or `outside`")),
            Ok(None) => return Err(Refusal::missing("side")),
            Err(_) => return Err(Refusal::param("side", "(too long)", "`inside` or `outside`")),
        };
        let capacity = params.get_u32("flows")?.unwrap_or(65536);
        let idle_ms = params.get_u64("idle_ms")?.unwrap_or(60_000);
        if idle_ms == 0 {
            return Err(Refusal::param("idle_ms", "0", "at least 1 (milliseconds)"));
        }
        Ok(Firewall {
            inside,
            engine: params.get_engine("engine")?.unwrap_or(Engine::Io),
            flows: Map::declare_ttl("fw_flows", MapKind::LruHash, capacity, idle_ms)?,
            allowed: Counter::register("allowed")?,
            denied: Counter::register("denied")?,
            untracked: Counter::register("untracked")?,
            unrecorded: Counter::register("unrecorded")?,
            scratch: Scratch { keys: [[0; 13]; MAX], values: [[1]; MAX], found: [0; MAX] },
        })
    }

    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
        burst.pass_with(self.engine)?;
        let Scratch { keys, values, found } = &mut self.scratch;
        let inside = self.inside;
        // The side a constant in each loop: no test of it per packet, one register more for the
        // loop's values.
        let (flows, untracked, mut denied) =
            if inside { keys_of::<true>(burst, keys)? } else { keys_of::<false>(burst, keys)? };
        if inside {
            if flows > 0 {
                values[..flows].fill([1]);
                let written = self.flows.insert_batch(&keys[..flows], &values[..flows])? as usize;
                self.unrecorded.add((flows - written) as u64);
            }
            self.allowed.add(flows as u64);
        } else if flows > 0 {
            let hits = self.flows.get_batch(&keys[..flows], &mut values[..flows], &mut found[..flows])?;
            // Only when a flow is unknown (with every packet a reply, the usual burst, none is
            // dropped): the IPv4 packets found again, out of the loop above.
            let refused = if (hits as usize) < flows { drop_unknown(burst, &found[..flows])? } else { 0 };
            self.allowed.add(flows as u64 - refused);
            denied += refused;
        }
        self.denied.add(denied);
        self.untracked.add(untracked);
        Ok(())
    }
}

/// The flow keys of the burst's IPv4 packets into `keys`, in order; the outside's other frames
/// dropped. How many flows, untracked frames (ARP, and the inside's other frames) and drops.
#[inline(always)]
fn keys_of<const INSIDE: bool>(burst: &mut Burst, keys: &mut [FlowKey; MAX]) -> Result<(usize, u64, u64), Error> {
    let (mut flows, mut untracked, mut denied) = (0, 0u64, 0u64);
    for (bytes, v) in burst.heads::<{ HEAD as usize }>()?.verdicts()? {
        if let Some(key) = fast_key(bytes, INSIDE) {
            // `flows` is below the packets seen, at most `MAX` (a power of two): the mask changes
            // nothing but takes the place of a bounds check and its counter in the loop.
            keys[flows & (MAX - 1)] = key;
            flows += 1;
            continue;
        }
        match parse(bytes) {
            Frame::Ipv4 { src, dst, sport, dport, proto } => {
                keys[flows & (MAX - 1)] = flow_key(src, dst, sport, dport, proto, INSIDE);
                flows += 1;
            }
            Frame::Other if !INSIDE => {
                v.drop();
                denied += 1;
            }
            Frame::Arp | Frame::Other => untracked += 1,
        }
    }
    Ok((flows, untracked, denied))
}

/// Drops the IPv4 packets of `burst` whose flows the outside's lookups did not find: the `k`-th
/// IPv4 packet has the `k`-th key's answer in `found`. How many it dropped. Out of line and apart
/// from the burst's loop, which then keeps no mark per packet: the packets are told apart again
/// by the general parse (the policy writes no packet byte).
#[cold]
#[inline(never)]
fn drop_unknown(burst: &mut Burst, found: &[u8]) -> Result<u64, Error> {
    let (mut k, mut refused) = (0, 0);
    for (bytes, v) in burst.heads::<{ HEAD as usize }>()?.verdicts()? {
        // A flow is a packet the general parse finds IPv4 in (`fast_key` gives the same key for
        // those it reads: `fast_key_is_parse`); this rare path needs no shortcut.
        if !matches!(parse(bytes), Frame::Ipv4 { .. }) {
            continue;
        }
        if found.get(k) == Some(&0) {
            v.drop();
            refused += 1;
        }
        k += 1;
    }
    Ok(refused)
}

wasmdp_sdk::export_policy!(Firewall);

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;
    use wasmdp_sdk::mock;

    /// An Ethernet frame: IPv4 `src:sport -> dst:dport`, protocol `proto`.
    fn frame(src: [u8; 4], dst: [u8; 4], proto: u8, sport: u16, dport: u16) -> Vec<u8> {
        let mut f = Vec::from([0x02u8, 0, 0, 0, 1, 0, 0x02, 0, 0, 0, 0, 0, 0x08, 0x00]);
        f.extend_from_slice(&[0x45, 0, 0, 46, 0, 0, 0, 0, 64, proto, 0, 0]);
        f.extend_from_slice(&src);
        f.extend_from_slice(&dst);
        f.extend_from_slice(&sport.to_be_bytes());
        f.extend_from_slice(&dport.to_be_bytes());
        f.resize(60, 0);
        f
    }

    fn side(name: &str) -> Firewall {
        mock::set_param("side", name);
        mock::set_param("flows", "4");
        Firewall::init(0, &Params::host()).unwrap()
    }

    /// Runs one burst of `frames` through `fw`: which were dropped.
    fn run(fw: &mut Firewall, frames: &[Vec<u8>]) -> Vec<bool> {
        mock::begin_burst(&frames.iter().map(Vec::as_slice).collect::<Vec<_>>());
        fw.on_burst(&mut Burst::current().unwrap()).unwrap();
        mock::end_burst().iter().map(|p| p.dropped).collect()
    }

    #[test]
    fn replies_to_flows_the_inside_opened_pass_and_nothing_else_does() {
        mock::reset();
        mock::set_area(Firewall::AREA);
        // One mock host: both sides declare `fw_flows` and get the one map, as shared_maps gives.
        let (mut inside, mut outside) = (side("inside"), side("outside"));
        let (client, server) = ([10, 0, 0, 5], [198, 51, 100, 7]);
        let mut arp = frame(client, server, 17, 1, 1);
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        let mut v6 = frame(client, server, 17, 1, 1);
        v6[12..14].copy_from_slice(&[0x86, 0xdd]);
        assert_eq!(run(&mut inside, &[frame(client, server, 6, 40000, 443), v6.clone()]), [false, false]);
        let replies = [
            frame(server, client, 6, 443, 40000),  // the reply: pass
            frame(server, client, 6, 443, 40001),  // another port: deny
            frame(server, client, 17, 443, 40000), // another protocol: deny
            frame([1, 2, 3, 4], client, 6, 443, 40000),
            arp,
            v6,
        ];
        assert_eq!(run(&mut outside, &replies), [false, true, true, true, false, true]);
        assert_eq!(
            ["allowed", "denied", "untracked", "unrecorded"].map(mock::counter),
            [Some(2), Some(4), Some(2), Some(0)]
        );
        // A flood of new flows from the inside into the 4-entry map: the flow in use stays.
        for i in 0..20u16 {
            run(&mut inside, &[frame(client, [203, 0, 113, i as u8], 17, 5000 + i, 53)]);
            assert_eq!(run(&mut outside, &[frame(server, client, 6, 443, 40000)]), [false], "after {i} new flows");
        }
        assert_eq!(mock::counter("unrecorded"), Some(0), "LRU: every new flow was written");
        // An idle flow expires.
        mock::with(|h| h.now_ns += 61_000_000_000);
        assert_eq!(run(&mut outside, &[frame(server, client, 6, 443, 40000)]), [true]);
    }

    #[test]
    fn fast_key_is_parse() {
        // Frames with the fast path's prefix (untagged IPv4, no options) and every other byte at
        // random, some with another byte there: wherever the fast path gives a key, it is the
        // general parse's, both ways.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let (mut fast, mut other) = (0, 0);
        for i in 0..20_000 {
            let mut f: Vec<u8> = (0..38 + i % 30)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            if i % 7 != 0 {
                f[12..15].copy_from_slice(&[0x08, 0x00, 0x45]);
            }
            f[23] = [6, 17, 1, f[23]][i % 4];
            if i % 3 == 0 {
                f[20] &= 0xe0;
                f[21] = 0;
            }
            for outbound in [true, false] {
                let want = match parse(&f) {
                    Frame::Ipv4 { src, dst, sport, dport, proto } => {
                        Some(flow_key(src, dst, sport, dport, proto, outbound))
                    }
                    _ => None,
                };
                match fast_key(&f, outbound) {
                    Some(key) => {
                        assert_eq!(Some(key), want, "frame {f:02x?}");
                        fast += 1;
                    }
                    None => other += 1,
                }
            }
        }
        assert!(fast > 30_000 && other > 4_000, "{fast} fast, {other} not");
        assert_eq!(fast_key(&frame([10, 0, 0, 5], [1, 2, 3, 4], 17, 5000, 53)[..37], true), None, "cut short");
    }

    #[test]
    fn parses_what_the_key_needs_and_refuses_a_bad_side() {
        let f = frame([1, 2, 3, 4], [5, 6, 7, 8], 17, 1000, 53);
        assert_eq!(
            parse(&f),
            Frame::Ipv4 { src: [1, 2, 3, 4], dst: [5, 6, 7, 8], sport: [3, 232], dport: [0, 53], proto: 17 }
        );
        let mut frag = f.clone();
        frag[20] = 0x00;
        frag[21] = 0x10;
        assert!(matches!(parse(&frag), Frame::Ipv4 { sport: [0, 0], dport: [0, 0], .. }), "a later fragment");
        assert_eq!(parse(&f[..30]), Frame::Other, "cut short");
        assert_eq!(
            flow_key([1, 2, 3, 4], [5, 6, 7, 8], [0, 1], [0, 2], 6, true),
            flow_key([5, 6, 7, 8], [1, 2, 3, 4], [0, 2], [0, 1], 6, false),
            "a packet and its reply have one key"
        );
        mock::reset();
        mock::set_area(Firewall::AREA);
        mock::set_param("side", "left");
        let e = Firewall::init(0, &Params::host()).err().unwrap();
        assert_eq!(e.reason(), "param `side`: `left` is not `inside` or `outside`");
    }
}
