//! The mock's decision imports: engines (recorded; `macswap` and `drop` emulated), offloads, drops,
//! sends, sticky decisions.

use super::{rc, with, Call, MockPacket, MockSticky};
use wasmdp_abi::{engine, err, flags, ALL_PACKETS};

fn swap_macs(data: &mut [u8]) {
    if data.len() >= 12 {
        let (dst, rest) = data.split_at_mut(6);
        dst.swap_with_slice(&mut rest[..6]);
    }
}

/// An engine's emulated effect on one packet (`macswap` swaps, `rxonly` drops; the rest recorded).
pub(super) fn run_on(p: &mut MockPacket, eng: u32) {
    p.engines.push(eng);
    match eng {
        engine::MACSWAP => swap_macs(&mut p.data),
        engine::RXONLY => p.dropped = true,
        _ => {}
    }
}

pub(crate) fn run_engine(eng: i32, start: i32, count: i32) -> i32 {
    with(|h| {
        rc((|| {
            let r = h.range(start, count)?;
            let eng = u32::try_from(eng).ok().filter(|&e| e < engine::COUNT).ok_or(err::BAD_ENGINE)?;
            h.calls.push(Call::RunEngine { engine: eng, start: r.start as u32, count: count as u32 });
            for p in &mut h.packets[r] {
                if p.dropped || p.sent_to.is_some() {
                    continue;
                }
                run_on(p, eng);
            }
            Ok(count)
        })())
    })
}

pub(crate) fn macswap(start: i32, count: i32) -> i32 {
    with(|h| {
        rc((|| {
            let r = h.range(start, count)?;
            h.calls.push(Call::Macswap { start: r.start as u32, count: count as u32 });
            for p in h.packets[r].iter_mut().filter(|p| !p.dropped && p.sent_to.is_none()) {
                swap_macs(&mut p.data);
            }
            Ok(count)
        })())
    })
}

pub(crate) fn set_offloads(idx: i32, fl: i64, tci: i32, outer: i32) -> i32 {
    with(|h| {
        rc((|| {
            let fl = fl as u64;
            if fl & !flags::ALLOWED != 0 {
                return Err(err::BAD_FLAGS);
            }
            let apply = |p: &mut MockPacket| {
                p.flags |= fl;
                if fl & (flags::TX_VLAN | flags::TX_QINQ) != 0 {
                    p.vlan_tci = tci as u16;
                }
                if fl & flags::TX_QINQ != 0 {
                    p.vlan_tci_outer = outer as u16;
                }
            };
            if idx == ALL_PACKETS {
                h.burst()?.iter_mut().filter(|p| !p.dropped && p.sent_to.is_none()).for_each(apply);
            } else {
                apply(h.pkt(idx)?);
            }
            h.calls.push(Call::SetOffloads { idx, flags: fl });
            Ok(0)
        })())
    })
}

pub(crate) fn drop_pkt(idx: i32) -> i32 {
    with(|h| {
        rc(h.pkt(idx).map(|p| {
            p.dropped = true;
            0
        }))
    })
}

pub(crate) fn send_to(idx: i32, port: i32) -> i32 {
    with(|h| {
        rc((|| {
            let ports = h.ports;
            let p = h.pkt(idx)?;
            let port = u32::try_from(port).ok().filter(|&q| q < ports).ok_or(err::BAD_PORT)?;
            p.sent_to = Some(port);
            Ok(0)
        })())
    })
}

pub(crate) fn set_sticky(eng: i32, fl: i64, tci: i32, outer: i32, bursts: i32) -> i32 {
    with(|h| {
        let Some(eng) = u32::try_from(eng).ok().filter(|&e| e < engine::COUNT) else {
            return err::BAD_ENGINE;
        };
        if fl as u64 & !flags::ALLOWED != 0 {
            return err::BAD_FLAGS;
        }
        if bursts == 0 || bursts < -1 {
            return err::BAD_RANGE;
        }
        h.sticky = Some(MockSticky {
            engine: eng,
            flags: fl as u64,
            vlan_tci: tci as u16,
            vlan_tci_outer: outer as u16,
            bursts,
        });
        0
    })
}

pub(crate) fn clear_sticky() -> i32 {
    with(|h| {
        h.sticky = None;
        0
    })
}
