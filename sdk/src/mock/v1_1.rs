//! The mock host's ABI 1.1 part: the burst area (filled at [`begin_burst`](super::begin_burst),
//! carried out at [`end_burst`](super::end_burst) in the host's order: length changes, window bytes,
//! verdicts and engines, offloads), length changes, the context, maps and gauges.

use std::string::{String, ToString};
use std::vec;
use std::vec::Vec;

use wasmdp_abi::area::{self, desc, hdr, verdict, DESC, HEADER};
use wasmdp_abi::{context as cx, engine, err, flags, map};

use super::{run_on, with, MockHost, MockPacket};
use crate::AreaSpec;

/// A registered burst area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MockArea {
    ptr: usize,
    len: usize,
    max_pkts: usize,
    window: usize,
    /// Whether descriptors get the host's flow hash (`area::FLOW_HASH`).
    flow_hash: bool,
    /// Windows without descriptors (`area::HEADS`).
    heads: bool,
    /// The code the host would have failed the last call with (a bad verdict, port or engine in the
    /// area), if any.
    pub refused: Option<i32>,
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

/// A declared map: its shape and entries (in insertion order; per-instance kinds are one table, as
/// the mock has one instance).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MockMap {
    /// Name.
    pub name: String,
    /// `wasmdp_abi::map` kind.
    pub kind: u32,
    /// Key bytes.
    pub key_size: usize,
    /// Value bytes.
    pub value_size: usize,
    /// Most entries.
    pub capacity: usize,
    /// Entries (LRU maps and maps with expiry: least recently used first).
    pub entries: Vec<(Vec<u8>, Vec<u8>)>,
    /// Milliseconds after its last use an entry expires (0: never).
    pub ttl_ms: u64,
    /// Each entry's last use (the mock's `now_ns`), beside `entries`.
    pub used: Vec<i64>,
    /// The mock's time during the call (set by each map call).
    now: i64,
}

impl MockMap {
    fn is_array(&self) -> bool {
        matches!(self.kind, map::ARRAY | map::PERCPU_ARRAY)
    }

    /// `key` as stored: an `LPM_TRIE` prefix with its address cleared past its length (a length
    /// past the address: [`err::BAD_RANGE`]); any other kind's key as given.
    fn stored(&self, key: &[u8]) -> Result<Vec<u8>, i32> {
        if self.kind != map::LPM_TRIE {
            return Ok(key.to_vec());
        }
        let len = u32::from_le_bytes(key[..4].try_into().map_err(|_| err::BAD_RANGE)?) as usize;
        if len > (key.len() - 4) * 8 {
            return Err(err::BAD_RANGE);
        }
        let mut out = key.to_vec();
        for (i, b) in out[4..].iter_mut().enumerate() {
            *b &= (0xFF00u16 >> len.saturating_sub(i * 8).min(8)) as u8;
        }
        Ok(out)
    }

    /// `LPM_TRIE`: the entry of the longest prefix holding `key`'s address within its length.
    fn longest(&self, key: &[u8]) -> Option<usize> {
        let most = u32::from_le_bytes(key[..4].try_into().ok()?);
        (0..=most).rev().find_map(|len| {
            let probe = self.stored(&[&len.to_le_bytes()[..], &key[4..]].concat()).ok()?;
            self.entries.iter().position(|(k, _)| *k == probe)
        })
    }

    /// Whether uses reorder the entries (LRU, expiry).
    fn tracks_use(&self) -> bool {
        self.kind == map::LRU_HASH || self.ttl_ms > 0
    }

    /// Drops the entries expired now.
    fn expire(&mut self) {
        let ttl = i64::try_from(self.ttl_ms.saturating_mul(1_000_000)).unwrap_or(i64::MAX);
        while self.ttl_ms > 0 && self.used.first().is_some_and(|&u| self.now.saturating_sub(u) > ttl) {
            self.entries.remove(0);
            self.used.remove(0);
        }
    }

    /// Where `key` is, marked used now (moved last when uses are tracked).
    fn position(&mut self, key: &[u8]) -> Option<usize> {
        let i = self.entries.iter().position(|(k, _)| k == key)?;
        if !self.tracks_use() {
            return Some(i);
        }
        let e = self.entries.remove(i);
        self.used.remove(i);
        self.entries.push(e);
        self.used.push(self.now);
        Some(self.entries.len() - 1)
    }

    /// The entry of `key`, inserting a zero value (arrays: any index below the capacity).
    fn slot(&mut self, key: &[u8]) -> Result<&mut Vec<u8>, i32> {
        if let Some(i) = self.position(key) {
            return Ok(&mut self.entries[i].1);
        }
        if self.is_array() {
            let idx = u32::from_le_bytes(key.try_into().map_err(|_| err::BAD_RANGE)?) as usize;
            if idx >= self.capacity {
                return Err(err::NOT_FOUND);
            }
        } else if self.entries.len() >= self.capacity {
            if self.kind != map::LRU_HASH {
                return Err(err::FULL);
            }
            // The least recently used goes (the host samples; the mock is exact).
            self.entries.remove(0);
            self.used.remove(0);
        }
        self.entries.push((key.to_vec(), vec![0; self.value_size]));
        self.used.push(self.now);
        Ok(&mut self.entries.last_mut().expect("just pushed").1)
    }
}

/// Registers a thread-local burst area of `spec` for policies tested without the exports (the
/// export's `wasmdp_init` does this itself).
pub fn set_area(spec: AreaSpec) {
    let buf = vec![0u8; spec.bytes()].leak();
    // SAFETY: a leaked buffer nothing else references.
    let r = unsafe { crate::area::register(buf.as_mut_ptr(), buf.len(), spec) };
    assert!(r.is_ok(), "mock::set_area: {r:?}");
}

/// The value of gauge `name`.
pub fn gauge(name: &str) -> Option<i64> {
    with(|h| h.gauges.iter().find(|(n, _)| n == name).map(|&(_, v)| v))
}

pub(crate) fn burst_area(ptr: usize, len: usize, max_pkts: i32, window: i32) -> i32 {
    let Ok(max_pkts) = usize::try_from(max_pkts) else { return err::BAD_RANGE };
    let Some(shape) = area::parse_window(window as u32).filter(|_| max_pkts <= wasmdp_abi::MAX_BURST as usize) else {
        return err::BAD_RANGE;
    };
    let (window, flow_hash, heads) = (shape.window, shape.flow_hash, shape.heads);
    with(|h| h.area = Some(MockArea { ptr, len, max_pkts, window, flow_hash, heads, refused: None }));
    0
}

/// The area's bytes, while no `Burst` holds them.
fn region(a: &MockArea) -> &'static mut [u8] {
    assert!(!crate::area::in_use(), "mock::begin_burst/end_burst while a Burst holds the area: drop it first");
    // SAFETY: registered through `burst_area`, whose contract makes the region the area's alone; the
    // SDK references it only through a `Burst`, and none exists now (checked above). The reference
    // lives only for this fill or apply.
    unsafe { core::slice::from_raw_parts_mut(a.ptr as *mut u8, a.len) }
}

fn put(b: &mut [u8], at: usize, v: &[u8]) {
    b[at..at + v.len()].copy_from_slice(v);
}

fn get<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    b[at..at + N].try_into().expect("N bytes")
}

pub(super) fn fill_area(h: &mut MockHost) {
    let Some(a) = h.area else { return };
    let r = region(&a);
    let (head, rest) = r.split_at_mut(HEADER);
    head.fill(0);
    put(head, hdr::LEN, &(h.packets.len() as u32).to_le_bytes());
    put(head, hdr::PORT, &h.context.port.to_le_bytes());
    put(head, hdr::QUEUE, &h.context.queue.to_le_bytes());
    put(head, hdr::TX_PORT, &h.context.tx_port.to_le_bytes());
    put(head, hdr::WINDOW, &(a.window as u16).to_le_bytes());
    put(head, hdr::ENGINE, &(-1i32).to_le_bytes());
    put(head, hdr::NOW_NS, &(h.now_ns as u64).to_le_bytes());
    if a.heads {
        let (lens, wins) = rest.split_at_mut(a.max_pkts * area::LEN_BYTES);
        for (p, (l, w)) in h.packets.iter().zip(lens.chunks_exact_mut(4).zip(wins.chunks_exact_mut(a.window))) {
            l.copy_from_slice(&(p.data.len() as u32).to_le_bytes());
            let k = p.data.len().min(a.window);
            w[..k].copy_from_slice(&p.data[..k]);
            w[k..].fill(0);
        }
        return;
    }
    let (descs, wins) = rest.split_at_mut(a.max_pkts * DESC);
    for (i, p) in h.packets.iter().enumerate().take(a.max_pkts) {
        let d = &mut descs[i * DESC..][..DESC];
        d.fill(0);
        let win = p.data.len().min(a.window);
        put(d, desc::LEN, &(p.data.len() as u32).to_le_bytes());
        put(d, desc::WIN, &(win as u16).to_le_bytes());
        put(d, desc::PORT, &h.context.port.to_le_bytes());
        if a.flow_hash {
            put(d, desc::HASH, &wasmdp_abi::hash::flow_hash(&p.data).to_le_bytes());
        }
        put(d, desc::HEADROOM, &(p.headroom.min(0xFFFF) as u16).to_le_bytes());
        put(d, desc::TAILROOM, &(p.tailroom.min(0xFFFF) as u16).to_le_bytes());
        wins[i * a.window..][..win].copy_from_slice(&p.data[..win]);
    }
}

/// One packet's decision read back.
struct Decision {
    verdict: u8,
    arg: u16,
    head: i16,
    tail: i16,
    dirty: usize,
}

pub(super) fn apply_area(h: &mut MockHost) {
    let Some(mut a) = h.area else { return };
    if !h.in_burst {
        return;
    }
    let r = region(&a);
    let engine_id = i32::from_le_bytes(get(r, hdr::ENGINE));
    let offloads = u64::from_le_bytes(get(r, hdr::OFFLOADS));
    let changed = u32::from_le_bytes(get(r, hdr::CHANGED)) != 0;
    let n = h.packets.len().min(a.max_pkts);
    let mut decided = Vec::new();
    if changed && !a.heads {
        for i in 0..n {
            let d = &r[HEADER + i * DESC..][..DESC];
            decided.push(Decision {
                verdict: d[desc::VERDICT],
                arg: u16::from_le_bytes(get(d, desc::ARG)),
                head: i16::from_le_bytes(get(d, desc::HEAD)),
                tail: i16::from_le_bytes(get(d, desc::TAIL)),
                dirty: usize::from(u16::from_le_bytes(get(d, desc::DIRTY))),
            });
        }
    }
    a.refused = check(&decided, engine_id, offloads, h.ports, a.window);
    h.area = Some(a);
    if a.refused.is_some() {
        return;
    }
    if changed && a.heads {
        let wins = &r[HEADER + a.max_pkts * area::LEN_BYTES..];
        for (p, w) in h.packets.iter_mut().zip(wins.chunks_exact(a.window)) {
            if !p.dropped && p.sent_to.is_none() {
                let k = p.data.len().min(a.window);
                p.data[..k].copy_from_slice(&w[..k]);
            }
        }
    }
    let wins = HEADER + a.max_pkts * DESC;
    for (i, (p, d)) in h.packets.iter_mut().zip(&decided).enumerate() {
        if p.dropped || p.sent_to.is_some() {
            continue;
        }
        if (d.head != 0 || d.tail != 0) && !adjust(p, d.head.into(), d.tail.into()) {
            p.dropped = true;
            p.no_room = true;
            continue;
        }
        let k = d.dirty.min(p.data.len());
        p.data[..k].copy_from_slice(&r[wins + i * a.window..][..k]);
    }
    for (i, p) in h.packets.iter_mut().enumerate() {
        if p.dropped || p.sent_to.is_some() {
            continue;
        }
        match decided.get(i).map_or((verdict::PASS, 0), |d| (d.verdict, d.arg)) {
            (verdict::DROP, _) => p.dropped = true,
            (verdict::SEND, port) => p.sent_to = Some(port.into()),
            (verdict::ENGINE, e) => run_on(p, e.into()),
            _ if engine_id >= 0 => run_on(p, engine_id as u32),
            _ => {}
        }
        if offloads != 0 && !p.dropped {
            p.flags |= offloads;
            p.vlan_tci = u16::from_le_bytes(get(r, hdr::VLAN_TCI));
            p.vlan_tci_outer = u16::from_le_bytes(get(r, hdr::VLAN_OUTER));
        }
    }
}

/// What the host refuses in an area (the call then fails with that code and nothing is done).
fn check(decided: &[Decision], engine_id: i32, offloads: u64, ports: u32, window: usize) -> Option<i32> {
    if engine_id < -1 || engine_id >= engine::COUNT as i32 {
        return Some(err::BAD_ENGINE);
    }
    if offloads & !flags::ALLOWED != 0 {
        return Some(err::BAD_FLAGS);
    }
    decided.iter().find_map(|d| match d.verdict {
        _ if d.dirty > window => Some(err::BAD_RANGE),
        verdict::PASS | verdict::DROP => None,
        verdict::SEND if u32::from(d.arg) < ports => None,
        verdict::SEND => Some(err::BAD_PORT),
        verdict::ENGINE if u32::from(d.arg) < engine::COUNT => None,
        verdict::ENGINE => Some(err::BAD_ENGINE),
        _ => Some(err::BAD_RANGE),
    })
}

/// Applies a length change if it fits (front, then tail); false (nothing changed) otherwise.
fn adjust(p: &mut MockPacket, head: i32, tail: i32) -> bool {
    let len = p.data.len() as i64;
    let (head64, tail64) = (i64::from(head), i64::from(tail));
    let fits =
        head64 <= p.headroom as i64 && tail64 <= p.tailroom as i64 && len + head64 >= 14 && len + head64 + tail64 >= 14;
    if !fits {
        return false;
    }
    if head > 0 {
        p.data.splice(0..0, core::iter::repeat_n(0u8, head as usize));
    } else {
        p.data.drain(..(-head) as usize);
    }
    p.headroom = (p.headroom as i64 - i64::from(head)) as usize;
    if tail > 0 {
        p.data.extend(core::iter::repeat_n(0u8, tail as usize));
    } else {
        p.data.truncate((p.data.len() as i64 + i64::from(tail)) as usize);
    }
    p.tailroom = (p.tailroom as i64 - i64::from(tail)) as usize;
    true
}

pub(crate) fn pkt_adjust(idx: i32, head: i32, tail: i32) -> i32 {
    with(|h| match h.pkt(idx) {
        Ok(p) => {
            if adjust(p, head, tail) {
                p.data.len() as i32
            } else {
                err::NO_ROOM
            }
        }
        Err(e) => e,
    })
}

pub(crate) fn pkt_room(idx: i32) -> i64 {
    with(|h| match h.pkt(idx) {
        Ok(p) => ((p.headroom.min(u32::MAX as usize) as i64) << 32) | p.tailroom.min(u32::MAX as usize) as i64,
        Err(e) => e.into(),
    })
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

pub(crate) fn map_declare(name: &str, nl: i32, kind: i32, ks: i32, vs: i32, cap: i32) -> i32 {
    map_declare_ttl(name, nl, kind, ks, vs, cap, 0)
}

pub(crate) fn map_declare_ttl(name: &str, _nl: i32, kind: i32, ks: i32, vs: i32, cap: i32, ttl_ms: i64) -> i32 {
    let (Ok(kind), Ok(ks), Ok(vs), Ok(cap), Ok(ttl_ms)) =
        (u32::try_from(kind), u32::try_from(ks), u32::try_from(vs), u32::try_from(cap), u64::try_from(ttl_ms))
    else {
        return err::BAD_RANGE;
    };
    let array = matches!(kind, map::ARRAY | map::PERCPU_ARRAY);
    let lpm = kind == map::LPM_TRIE;
    if kind > map::LPM_TRIE
        || (lpm && (ttl_ms > 0 || !(5..=4 + map::MAX_LPM_DATA).contains(&ks)))
        || ttl_ms > map::MAX_TTL_MS
        || (array && ttl_ms > 0)
        || name.is_empty()
        || name.len() > map::MAX_NAME as usize
        || !(1..=map::MAX_KEY).contains(&ks)
        || (array && ks != 4)
        || !(1..=map::MAX_VALUE).contains(&vs)
        || !(1..=map::MAX_CAPACITY).contains(&cap)
    {
        return err::BAD_RANGE;
    }
    let m = MockMap {
        name: name.to_string(),
        kind,
        key_size: ks as usize,
        value_size: vs as usize,
        capacity: cap as usize,
        entries: Vec::new(),
        ttl_ms,
        used: Vec::new(),
        now: 0,
    };
    with(|h| match h.maps.iter().position(|x| x.name == name) {
        Some(i) if MockMap { entries: Vec::new(), used: Vec::new(), now: 0, ..h.maps[i].clone() } == m => i as i32,
        Some(_) => err::BAD_RANGE,
        None => {
            h.maps.push(m);
            h.maps.len() as i32 - 1
        }
    })
}

fn with_map<R>(id: i32, f: impl FnOnce(&mut MockMap) -> Result<R, i32>) -> Result<R, i32> {
    with(|h| {
        let now = h.now_ns;
        let m = usize::try_from(id).ok().and_then(|i| h.maps.get_mut(i)).ok_or(err::NOT_FOUND)?;
        m.now = now;
        m.expire();
        f(m)
    })
}

fn code(r: Result<i32, i32>) -> i32 {
    r.unwrap_or_else(|e| e)
}

pub(crate) fn map_lookup(id: i32, key: &[u8], value: &mut [u8]) -> i32 {
    code(with_map(id, |m| {
        let (key, value) =
            (key.get(..m.key_size).ok_or(err::BAD_MEMORY)?, value.get_mut(..m.value_size).ok_or(err::BAD_MEMORY)?);
        if m.kind == map::LPM_TRIE {
            let i = m.longest(key).ok_or(err::NOT_FOUND)?;
            value.copy_from_slice(&m.entries[i].1);
            return Ok(0);
        }
        match m.position(key) {
            Some(i) => value.copy_from_slice(&m.entries[i].1),
            None if m.is_array() => m.slot(key).map(|v| value.copy_from_slice(v))?,
            None => return Err(err::NOT_FOUND),
        }
        Ok(0)
    }))
}

pub(crate) fn map_update(id: i32, key: &[u8], value: &[u8]) -> i32 {
    code(with_map(id, |m| {
        let (ks, vs) = (m.key_size, m.value_size);
        let value = value.get(..vs).ok_or(err::BAD_MEMORY)?;
        let key = m.stored(key.get(..ks).ok_or(err::BAD_MEMORY)?)?;
        m.slot(&key)?.copy_from_slice(value);
        Ok(0)
    }))
}

pub(crate) fn map_delete(id: i32, key: &[u8]) -> i32 {
    code(with_map(id, |m| {
        let key = m.stored(key.get(..m.key_size).ok_or(err::BAD_MEMORY)?)?;
        if m.is_array() {
            m.slot(&key)?.fill(0);
            return Ok(0);
        }
        let i = m.position(&key).ok_or(err::NOT_FOUND)?;
        m.entries.remove(i);
        m.used.remove(i);
        Ok(0)
    }))
}

pub(crate) fn map_add(id: i32, key: &[u8], word: i32, delta: i64) -> i32 {
    code(with_map(id, |m| {
        let ks = m.key_size;
        let words = m.value_size.div_ceil(8);
        let w = usize::try_from(word).ok().filter(|&w| w < words).ok_or(err::BAD_RANGE)?;
        let key = m.stored(key.get(..ks).ok_or(err::BAD_MEMORY)?)?;
        let v = m.slot(&key)?;
        let end = (w * 8 + 8).min(v.len());
        let bytes = &mut v[w * 8..end];
        let mut b = [0u8; 8];
        b[..bytes.len()].copy_from_slice(bytes);
        let sum = u64::from_le_bytes(b).wrapping_add(delta as u64).to_le_bytes();
        let n = bytes.len();
        bytes.copy_from_slice(&sum[..n]);
        Ok(0)
    }))
}

pub(crate) fn map_lookup_batch(id: i32, keys: &[u8], n: i32, values: &mut [u8], found: &mut [u8]) -> i32 {
    let Some((ks, vs)) =
        with(|h| usize::try_from(id).ok().and_then(|i| h.maps.get(i)).map(|m| (m.key_size, m.value_size)))
    else {
        return err::NOT_FOUND;
    };
    let n = n.max(0) as usize;
    if keys.len() < n * ks || values.len() < n * vs || found.len() < n {
        return err::BAD_MEMORY;
    }
    let mut hits = 0;
    for i in 0..n {
        let rc = map_lookup(id, &keys[i * ks..][..ks], &mut values[i * vs..][..vs]);
        found[i] = u8::from(rc == 0);
        hits += i32::from(rc == 0);
    }
    hits
}

pub(crate) fn map_update_batch(id: i32, keys: &[u8], values: &[u8], n: i32) -> i32 {
    let Some((ks, vs)) =
        with(|h| usize::try_from(id).ok().and_then(|i| h.maps.get(i)).map(|m| (m.key_size, m.value_size)))
    else {
        return err::NOT_FOUND;
    };
    let n = n.max(0) as usize;
    if keys.len() < n * ks || values.len() < n * vs {
        return err::BAD_MEMORY;
    }
    for i in 0..n {
        if map_update(id, &keys[i * ks..][..ks], &values[i * vs..][..vs]) != 0 {
            return i as i32;
        }
    }
    n as i32
}

/// The walk runs from the last entry down, as the host's from its last slot: deleting the key just
/// returned hides none not yet returned. The cursor is 0 at the start, then one past the index of
/// the entry returned last; one call returns one key (the mock has no empty slots).
pub(crate) fn map_next_key(id: i32, cursor: &mut u64, key: &mut [u8]) -> i32 {
    code(with_map(id, |m| {
        let key = key.get_mut(..m.key_size).ok_or(err::BAD_MEMORY)?;
        let len = if m.is_array() { m.capacity } else { m.entries.len() };
        let at = match *cursor {
            0 => len.checked_sub(1),
            c => (c as usize).checked_sub(2).map(|i| i.min(len.wrapping_sub(1))),
        };
        let i = at.filter(|&i| i < len).ok_or(err::NOT_FOUND)?;
        if m.is_array() {
            key.copy_from_slice(&(i as u32).to_le_bytes());
        } else {
            key.copy_from_slice(&m.entries[i].0);
        }
        *cursor = i as u64 + 1;
        Ok(1)
    }))
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
