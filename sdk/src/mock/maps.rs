//! The mock's maps: declared shapes and their entries (in insertion order), with the host's codes.

use std::string::{String, ToString};
use std::vec;
use std::vec::Vec;

use super::with;
use wasmdp_abi::{err, map};

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
