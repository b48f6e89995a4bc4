//! What the mock tells a policy and records from it: counters, gauges, params, the clock, log
//! lines, the context.

use std::string::ToString;
use std::vec::Vec;

use super::{put, with};
use wasmdp_abi::{context as cx, err, MAX_COUNTERS};

/// Registering a name again returns the same id. Past [`MAX_COUNTERS`] the mock returns `TOO_SMALL`
/// (ABI v1 names no code for it). Unlike the host, the mock accepts registrations outside init.
pub(crate) fn counter_register(name: &str, _len: i32) -> i32 {
    if name.is_empty() || name.len() > 64 {
        return err::BAD_RANGE;
    }
    with(|h| {
        if let Some(i) = h.counters.iter().position(|(n, _)| n == name) {
            return i as i32;
        }
        if h.counters.len() >= MAX_COUNTERS as usize {
            return err::TOO_SMALL;
        }
        h.counters.push((name.to_string(), 0));
        (h.counters.len() - 1) as i32
    })
}

pub(crate) fn counter_add(id: i32, value: i64) -> i32 {
    if value < 0 {
        return err::BAD_RANGE;
    }
    with(|h| match usize::try_from(id).ok().and_then(|i| h.counters.get_mut(i)) {
        Some((_, v)) => {
            *v = v.wrapping_add(value);
            0
        }
        None => err::NOT_FOUND,
    })
}

pub(crate) fn param_get(key: &str, _key_len: i32, out: &mut [u8], _out_cap: i32) -> i32 {
    with(|h| match h.params.iter().find(|(k, _)| k == key) {
        None => err::NOT_FOUND,
        Some((_, v)) if v.len() > out.len() => err::TOO_SMALL,
        Some((_, v)) => {
            out[..v.len()].copy_from_slice(v.as_bytes());
            v.len() as i32
        }
    })
}

pub(crate) fn random() -> i64 {
    with(|h| {
        let mut rng = fastrand::Rng::with_seed(h.random_seed);
        let r = rng.u64(..);
        h.random_seed = rng.get_seed();
        r as i64
    })
}

pub(crate) fn now_ns() -> i64 {
    with(|h| h.now_ns)
}

pub(crate) fn log(level: i32, msg: &str, _len: i32) {
    with(|h| h.logs.push((level as u32, msg.to_string())));
}

/// What `context` reports: the stream and the ports' MACs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MockContext {
    /// RX port.
    pub port: u16,
    /// RX queue.
    pub queue: u16,
    /// TX port.
    pub tx_port: u16,
    /// Worker core (None: not pinned).
    pub lcore: Option<u16>,
    /// Each port's MAC and peer MAC (all may be sent to).
    pub ports: Vec<([u8; 6], [u8; 6])>,
}

impl Default for MockContext {
    fn default() -> Self {
        let mac = |i: u8| [0x02, 0, 0, 0, 0, i];
        MockContext {
            port: 0,
            queue: 0,
            tx_port: 0,
            lcore: None,
            ports: (0..2).map(|i| (mac(i), mac(0x10 + i))).collect(),
        }
    }
}

pub(crate) fn context(out: &mut [u8], _cap: i32) -> i32 {
    with(|h| {
        let c = &h.context;
        let size = cx::HEADER + cx::PORT * c.ports.len();
        if out.len() < size {
            return err::TOO_SMALL;
        }
        let out = &mut out[..size];
        out.fill(0);
        put(out, cx::RX_PORT, &c.port.to_le_bytes());
        put(out, cx::QUEUE, &c.queue.to_le_bytes());
        put(out, cx::TX_PORT, &c.tx_port.to_le_bytes());
        put(out, cx::PORTS, &(c.ports.len() as u16).to_le_bytes());
        put(out, cx::LCORE, &c.lcore.unwrap_or(u16::MAX).to_le_bytes());
        for (i, (mac, peer)) in c.ports.iter().enumerate() {
            let e = &mut out[cx::HEADER + i * cx::PORT..][..cx::PORT];
            put(e, cx::MAC, mac);
            put(e, cx::PEER_MAC, peer);
            put(e, cx::FLAGS, &cx::SENDABLE.to_le_bytes());
        }
        size as i32
    })
}

pub(crate) fn gauge_register(name: &str, _len: i32) -> i32 {
    if name.is_empty() || name.len() > 64 {
        return err::BAD_RANGE;
    }
    with(|h| {
        if let Some(i) = h.gauges.iter().position(|(n, _)| n == name) {
            return i as i32;
        }
        if h.gauges.len() >= wasmdp_abi::MAX_COUNTERS as usize {
            return err::TOO_SMALL;
        }
        h.gauges.push((name.to_string(), 0));
        (h.gauges.len() - 1) as i32
    })
}

pub(crate) fn gauge_set(id: i32, value: i64) -> i32 {
    with(|h| match usize::try_from(id).ok().and_then(|i| h.gauges.get_mut(i)) {
        Some((_, v)) => {
            *v = value;
            0
        }
        None => err::NOT_FOUND,
    })
}

/// The bytes of an event layout's fields (`NAME:TYPE ...`); None: a type the host does not know.
fn layout_size(layout: &str) -> Option<usize> {
    layout.split_whitespace().try_fold(0, |sum, w| Some(sum + wasmdp_abi::map::field_size(w.split_once(':')?.1)?))
}

pub(crate) fn event_register(name: &str, _len: i32, layout: &str, _layout_len: i32, size: i32) -> i32 {
    if name.is_empty() || layout_size(layout) != Some(size as usize) || !(1..=256).contains(&size) {
        return err::BAD_RANGE;
    }
    with(|h| {
        h.event_kinds.push((name.to_string(), size as usize));
        (h.event_kinds.len() - 1) as i32
    })
}

pub(crate) fn event_emit(id: i32, data: &[u8], len: i32) -> i32 {
    with(|h| match usize::try_from(id).ok().and_then(|i| h.event_kinds.get(i)) {
        Some((name, size)) if *size == len as usize => {
            let name = name.clone();
            h.events.push((name, data[..len as usize].to_vec()));
            0
        }
        Some(_) => err::BAD_RANGE,
        None => err::BAD_RANGE,
    })
}
