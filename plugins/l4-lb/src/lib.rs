//! `l4_lb`: spreads flows over ports by consistent hashing, each flow pinned to its port in a map
//! shared by every queue of the port and kept across a hot swap, so changing the port list moves
//! only new flows.
//!
//! | param | default | meaning |
//! |---|---|---|
//! | `ports` | required | comma list of up to 16 port indexes (in `ports:`) to send to |
//! | `flows` | 65536 | most flows pinned (the map's capacity); further flows are hashed, not pinned |
//!
//! Per burst: each packet's flow hash ([`wasmdp_sdk::flow_hash`]: the 5-tuple, VLANs and IPv6
//! extension headers walked), which the host computes natively and hands over in the descriptors
//! (`AreaSpec::HashedWindows`; the policy reads no packet bytes, so its windows are empty); the
//! pinned ports of the burst's flows with one `map_lookup_batch`, new flows placed by rendezvous
//! hashing (highest hash of flow and port wins: removing a port moves only its flows) and pinned
//! with one `map_update_batch`; each packet gets the send verdict for its port. Two host calls per
//! burst.
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::{AreaSpec, Burst, Context, Counter, Error, Map, MapKind, Params, Policy, Refusal};

const MAX: usize = wasmdp_sdk::abi::MAX_BURST as usize;
const MAX_PORTS: usize = 16;

/// The policy.
pub struct L4Lb {
    ports: [u16; MAX_PORTS],
    n_ports: usize,
    /// The listed ports below 64 as bits: the membership test per packet is a shift, where a
    /// search of the list is a loop (in WebAssembly, an epoch check per iteration).
    listed: u64,
    flows: Map<4, 4>,
    unpinned: Counter,
    scratch: Scratch,
}

/// A burst's keys, pinned ports and new flows, kept between bursts: arrays for the largest burst
/// (512 packets, 8.5 KiB) made fresh every burst were zeroed every burst, a `memset` that cost more
/// per packet than the lookups. Each burst reads only what it wrote: entries `..n` and `..fresh`.
struct Scratch {
    keys: [[u8; 4]; MAX],
    pinned: [[u8; 4]; MAX],
    found: [u8; MAX],
    new_keys: [[u8; 4]; MAX],
    new_ports: [[u8; 4]; MAX],
}

impl Policy for L4Lb {
    const AREA: AreaSpec = AreaSpec::HashedWindows(0);

    fn init(_port: u32, params: &Params) -> Result<Self, Refusal> {
        let (ports, n_ports) = params.get_u16_list::<MAX_PORTS>("ports")?.ok_or_else(|| Refusal::missing("ports"))?;
        if n_ports == 0 {
            return Err(Refusal::new("param `ports`: give at least one port index"));
        }
        let ctx = Context::get()?;
        if let Some(p) = ports[..n_ports].iter().find(|&&p| !ctx.can_send(p)) {
            return Err(wasmdp_sdk::refuse!("param `ports`: port {p} is not one this stream can send to"));
        }
        let capacity = params.get_u32("flows")?.unwrap_or(65536);
        let listed = ports[..n_ports].iter().filter(|&&p| p < 64).fold(0u64, |bits, &p| bits | 1 << p);
        Ok(L4Lb {
            ports,
            n_ports,
            listed,
            flows: Map::declare("flows", MapKind::Hash, capacity)?,
            unpinned: Counter::register("unpinned")?,
            scratch: Scratch {
                keys: [[0; 4]; MAX],
                pinned: [[0; 4]; MAX],
                found: [0; MAX],
                new_keys: [[0; 4]; MAX],
                new_ports: [[0; 4]; MAX],
            },
        })
    }

    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
        let Scratch { keys, pinned, found, new_keys, new_ports } = &mut self.scratch;
        let mut n = 0;
        for w in burst.windows()? {
            keys[n] = w.hash().to_le_bytes();
            n += 1;
        }
        self.flows.get_batch(&keys[..n], &mut pinned[..n], &mut found[..n])?;
        let mut fresh = 0;
        let ports = &self.ports[..self.n_ports];
        let listed = |p: u16| if p < 64 { self.listed >> p & 1 == 1 } else { ports.contains(&p) };
        // One pass decides and sets each verdict (a second loop over the windows costs per packet
        // in WebAssembly); the new flows are pinned after it.
        for ((mut w, key), (pin, &found)) in burst.windows()?.zip(&keys[..n]).zip(pinned[..n].iter().zip(&found[..n])) {
            let mut port = u16::from_le_bytes([pin[0], pin[1]]);
            if found == 0 || !listed(port) {
                (port, fresh) = pin_new(ports, *key, new_keys, new_ports, fresh);
            }
            w.send_to(port);
        }
        if fresh > 0 {
            let written = self.flows.insert_batch(&new_keys[..fresh], &new_ports[..fresh])? as usize;
            self.unpinned.add((fresh - written) as u64);
        }
        Ok(())
    }
}

/// The port of a new (or no longer placeable) flow `key`, added to the first `fresh` new flows
/// unless there: the port and the new count. Out of line: the common packet, a pinned flow, then
/// keeps its loop's values in registers in WebAssembly.
#[cold]
#[inline(never)]
fn pin_new(
    listed: &[u16],
    key: [u8; 4],
    keys: &mut [[u8; 4]; MAX],
    ports: &mut [[u8; 4]; MAX],
    fresh: usize,
) -> (u16, usize) {
    let port = place(listed, u32::from_le_bytes(key));
    if keys[..fresh].contains(&key) {
        return (port, fresh);
    }
    (keys[fresh], ports[fresh]) = (key, u32::from(port).to_le_bytes());
    (port, fresh + 1)
}

/// Rendezvous hashing: the port of `ports` with the highest mix of flow and port.
fn place(ports: &[u16], flow: u32) -> u16 {
    let score = |p: u16| {
        let mut h = (u64::from(flow) << 16 | u64::from(p)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 31;
        h.wrapping_mul(0xBF58_476D_1CE4_E5B9)
    };
    ports.iter().copied().max_by_key(|&p| score(p)).unwrap_or(0)
}

wasmdp_sdk::export_policy!(L4Lb);

#[cfg(test)]
mod tests {
    use super::*;
    use wasmdp_sdk::{flow_hash, mock};

    fn frame(sport: u16) -> std::vec::Vec<u8> {
        let mut f = std::vec![0u8; 60];
        f[12..14].copy_from_slice(&[8, 0]);
        f[14..34].copy_from_slice(&[0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        f[34..38].copy_from_slice(&[(sport >> 8) as u8, sport as u8, 0, 53]);
        f
    }

    fn send(p: &mut L4Lb, sports: &[u16]) -> std::vec::Vec<u32> {
        let frames: std::vec::Vec<_> = sports.iter().map(|&s| frame(s)).collect();
        mock::begin_burst(&frames.iter().map(|f| f.as_slice()).collect::<std::vec::Vec<_>>());
        p.on_burst(&mut Burst::current().unwrap()).unwrap();
        mock::end_burst().iter().map(|o| o.sent_to.unwrap()).collect()
    }

    /// A fresh mock host of `ports` ports, every one sendable, and a balancer over `list`.
    fn balancer(ports: u8, list: &str) -> L4Lb {
        mock::reset();
        mock::set_area(L4Lb::AREA);
        mock::with(|h| {
            h.ports = ports.into();
            h.context.ports = (0..ports).map(|i| ([2, 0, 0, 0, 0, i], [2, 0, 0, 0, 1, i])).collect();
        });
        mock::set_param("ports", list);
        L4Lb::init(0, &Params::host()).unwrap()
    }

    #[test]
    fn flows_spread_stay_put_and_survive_a_port_list_change() {
        let mut p = balancer(4, "1,2,3");
        let sports: std::vec::Vec<u16> = (1000..1300).collect();
        let first = send(&mut p, &sports);
        for port in 1..=3 {
            let share = first.iter().filter(|&&x| x == port).count();
            assert!((60..=140).contains(&share), "port {port} got {share} of 300 flows");
        }
        assert_eq!(send(&mut p, &sports), first, "each flow stays on its port");
        // Port 3 removed (a reload with a new list): only its flows move.
        mock::set_param("ports", "1,2");
        let mut q = L4Lb::init(0, &Params::host()).unwrap();
        let after = send(&mut q, &sports);
        for (a, b) in first.iter().zip(&after) {
            assert!(if *a == 3 { *b != 3 } else { a == b });
        }
        mock::set_param("ports", "1,7");
        assert!(L4Lb::init(0, &Params::host()).is_err(), "a port the stream cannot reach is refused");
    }

    #[test]
    fn a_pinned_port_no_longer_listed_or_out_of_range_is_placed_again() {
        let mut p = balancer(32, "3,31");
        let sports: std::vec::Vec<u16> = (2000..2100).collect();
        let first = send(&mut p, &sports);
        assert!(first.contains(&3) && first.contains(&31), "both ports get flows");
        // A map entry naming a port past the bitmask's 64 (kept from another module, say).
        let key = flow_hash(&frame(sports[0])).to_le_bytes();
        p.flows.insert(&key, &100u32.to_le_bytes()).unwrap();
        assert_eq!(send(&mut p, &sports), first, "pinned flows stay; the stale one is placed again");
        assert_eq!(p.flows.get(&key).unwrap(), Some(first[0].to_le_bytes()), "and pinned again");
    }
}
