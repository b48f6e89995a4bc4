//! Maps (1.1): `map_declare` in init, then lookups, updates, deletes and atomic adds, one at a time or
//! in batches of up to [`MAX_BATCH`] entries (one host call for a whole burst's keys).
//!
//! The tables are `crate::plugin::maps`: shared by the port's instances or the instance's own, kept
//! across a reload that declares them identically. Keys are copied out of the plugin's memory before
//! the table is touched, so no range the plugin passes can overlap what the host writes.

use super::{guest_bytes, guest_span, C};
use crate::plugin::maps::{word_of, MapError, MapKind, MapSpec, Table};
use crate::plugin::state::HostState;
use std::sync::Arc;
use wasmdp_abi::{err, import, map};
use wasmtime::Linker;

/// Most entries in one batch call (bounds its time).
pub const MAX_BATCH: usize = 4096;

pub(super) fn link(linker: &mut Linker<HostState>, m: &str) -> anyhow::Result<()> {
    linker.func_wrap(
        m,
        import::MAP_DECLARE,
        |mut c: C<'_>, np: i32, nl: i32, kind: i32, ks: i32, vs: i32, cap: i32| {
            if !c.data().in_init {
                return err::NOT_INIT;
            }
            match guest_bytes(&mut c, np, nl, map::MAX_NAME as usize) {
                Ok((name, total)) => declare(c.data_mut(), &name, total, kind, ks, vs, cap),
                Err(e) => e,
            }
        },
    )?;
    linker
        .func_wrap(m, import::MAP_LOOKUP, |mut c: C<'_>, id: i32, kp: i32, vp: i32| one(&mut c, id, kp, vp, lookup))?;
    linker.func_wrap(m, import::MAP_UPDATE, |mut c: C<'_>, id: i32, kp: i32, vp: i32| {
        one(&mut c, id, kp, vp, |t, k, v| update(t, k, v))
    })?;
    linker.func_wrap(m, import::MAP_DELETE, |mut c: C<'_>, id: i32, kp: i32| match table_and_key(&mut c, id, kp) {
        Ok((t, key)) => delete(&t, &key[..t.spec().key_size as usize]),
        Err(e) => e,
    })?;
    linker.func_wrap(
        m,
        import::MAP_ADD,
        |mut c: C<'_>, id: i32, kp: i32, word: i32, delta: i64| match table_and_key(&mut c, id, kp) {
            Ok((t, key)) => add(&t, &key[..t.spec().key_size as usize], word, delta),
            Err(e) => e,
        },
    )?;
    linker.func_wrap(m, import::MAP_LOOKUP_BATCH, lookup_batch)?;
    linker.func_wrap(m, import::MAP_UPDATE_BATCH, update_batch)?;
    Ok(())
}

/// Map `id` of the instance.
pub(crate) fn table(st: &HostState, id: i32) -> Result<Arc<Table>, i32> {
    usize::try_from(id).ok().and_then(|i| st.maps.get(i).cloned()).ok_or(err::NOT_FOUND)
}

pub(crate) fn lookup(t: &Table, key: &[u8], value: &mut [u8]) -> i32 {
    if t.lookup(key, value) {
        0
    } else {
        err::NOT_FOUND
    }
}

pub(crate) fn update(t: &Table, key: &[u8], value: &[u8]) -> i32 {
    t.update(key, value).map_or_else(code, |()| 0)
}

pub(crate) fn delete(t: &Table, key: &[u8]) -> i32 {
    if t.delete(key) {
        0
    } else {
        err::NOT_FOUND
    }
}

pub(crate) fn add(t: &Table, key: &[u8], word: i32, delta: i64) -> i32 {
    let words = (t.spec().value_size as usize).div_ceil(8);
    let Some(w) = usize::try_from(word).ok().filter(|&w| w < words) else { return err::BAD_RANGE };
    t.add(key, w, delta as u64).map_or_else(code, |_| 0)
}

/// The ABI code of a refused write.
fn code(e: MapError) -> i32 {
    match e {
        MapError::Full => err::FULL,
        MapError::BadIndex => err::NOT_FOUND,
    }
}

/// `map_declare(name, kind, key_size, value_size, capacity)` (`name` holds at most
/// [`map::MAX_NAME`] of the `total` bytes given): checked, counted against `limits.map_kib` before
/// anything is allocated.
pub(crate) fn declare(st: &mut HostState, name: &[u8], total: usize, kind: i32, ks: i32, vs: i32, cap: i32) -> i32 {
    if !st.in_init {
        return err::NOT_INIT;
    }
    let kind = match u32::try_from(kind) {
        Ok(map::HASH) => MapKind::Hash,
        Ok(map::ARRAY) => MapKind::Array,
        Ok(map::PERCPU_HASH) => MapKind::PerInstanceHash,
        Ok(map::PERCPU_ARRAY) => MapKind::PerInstanceArray,
        _ => return err::BAD_RANGE,
    };
    let (Ok(key_size), Ok(value_size), Ok(capacity)) = (u32::try_from(ks), u32::try_from(vs), u32::try_from(cap))
    else {
        return err::BAD_RANGE;
    };
    let Some(name) = std::str::from_utf8(name).ok().filter(|n| total == n.len()) else {
        return err::BAD_RANGE;
    };
    let spec = MapSpec { name: name.to_string(), kind, key_size, value_size, capacity };
    if let Err(why) = spec.check() {
        tracing::error!(plugin = %st.label, "map_declare refused: {why}");
        return err::BAD_RANGE;
    }
    if let Some(i) = st.maps.iter().position(|t| t.spec().name == spec.name) {
        return if *st.maps[i].spec() == spec { i as i32 } else { err::BAD_RANGE };
    }
    let registry = st.env.maps.clone();
    match registry.declare(&spec, u32::from(st.env.queue), &mut st.map_budget) {
        Ok(table) => {
            st.maps.push(table);
            st.maps.len() as i32 - 1
        }
        Err(why) => {
            tracing::error!(plugin = %st.label, "map_declare refused: {why}");
            err::TOO_SMALL
        }
    }
}

/// The table `id` and a copy of its key from guest memory.
fn table_and_key(c: &mut C<'_>, id: i32, kp: i32) -> Result<(Arc<Table>, [u8; map::MAX_KEY as usize]), i32> {
    let t = table(c.data(), id)?;
    let ks = t.spec().key_size as usize;
    let mem = c.data().memory.ok_or(err::BAD_MEMORY)?;
    let data = mem.data(&*c);
    let r = guest_span(kp, ks as i32, data.len()).ok_or(err::BAD_MEMORY)?;
    let mut key = [0u8; map::MAX_KEY as usize];
    key[..ks].copy_from_slice(&data[r]);
    Ok((t, key))
}

/// A single-entry operation with the key copied and the value range checked.
fn one(c: &mut C<'_>, id: i32, kp: i32, vp: i32, f: impl FnOnce(&Table, &[u8], &mut [u8]) -> i32) -> i32 {
    let (t, key) = match table_and_key(c, id, kp) {
        Ok(x) => x,
        Err(e) => return e,
    };
    let (ks, vs) = (t.spec().key_size as usize, t.spec().value_size as usize);
    let Some(mem) = c.data().memory else { return err::BAD_MEMORY };
    let data = mem.data_mut(&mut *c);
    let Some(r) = guest_span(vp, vs as i32, data.len()) else { return err::BAD_MEMORY };
    f(&t, &key[..ks], &mut data[r])
}

/// The ranges of a batch of `n` entries: keys, values, found bytes (None: out of the memory).
fn batch_ranges(
    t: &Table,
    n: i32,
    kp: i32,
    vp: i32,
    fp: Option<i32>,
    len: usize,
) -> Result<[std::ops::Range<usize>; 3], i32> {
    let n = usize::try_from(n).ok().filter(|&n| n <= MAX_BATCH).ok_or(err::BAD_RANGE)?;
    let (ks, vs) = (t.spec().key_size as usize, t.spec().value_size as usize);
    let keys = guest_span(kp, (n * ks) as i32, len).ok_or(err::BAD_MEMORY)?;
    let values = guest_span(vp, (n * vs) as i32, len).ok_or(err::BAD_MEMORY)?;
    let found = match fp {
        Some(fp) => guest_span(fp, n as i32, len).ok_or(err::BAD_MEMORY)?,
        None => 0..0,
    };
    Ok([keys, values, found])
}

fn lookup_batch(mut c: C<'_>, id: i32, kp: i32, n: i32, vp: i32, fp: i32) -> i32 {
    let t = match table(c.data(), id) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let Some(mem) = c.data().memory else { return err::BAD_MEMORY };
    let data = mem.data_mut(&mut c);
    let [keys, values, found] = match batch_ranges(&t, n, kp, vp, Some(fp), data.len()) {
        Ok(r) => r,
        Err(e) => return e,
    };
    let (ks, vs) = (t.spec().key_size as usize, t.spec().value_size as usize);
    let mut hits = 0;
    let mut key = [0u8; map::MAX_KEY as usize];
    for i in 0..found.len() {
        // Copied first: the plugin's ranges may overlap each other. A key of up to 8 bytes as one
        // word: a copy of a length known only at run time is a call of memcpy (20 per key).
        let src = &data[keys.start + i * ks..][..ks];
        if ks <= 8 {
            key[..8].copy_from_slice(&word_of(src).to_le_bytes());
        } else {
            key[..ks].copy_from_slice(src);
        }
        let hit = t.lookup(&key[..ks], &mut data[values.start + i * vs..][..vs]);
        data[found.start + i] = u8::from(hit);
        hits += usize::from(hit);
    }
    hits as i32
}

fn update_batch(c: C<'_>, id: i32, kp: i32, vp: i32, n: i32) -> i32 {
    let t = match table(c.data(), id) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let Some(mem) = c.data().memory else { return err::BAD_MEMORY };
    let data = mem.data(&c);
    let [keys, values, _] = match batch_ranges(&t, n, kp, vp, None, data.len()) {
        Ok(r) => r,
        Err(e) => return e,
    };
    let (ks, vs) = (t.spec().key_size as usize, t.spec().value_size as usize);
    let n = keys.len() / ks;
    for i in 0..n {
        if t.update(&data[keys.start + i * ks..][..ks], &data[values.start + i * vs..][..vs]).is_err() {
            return i as i32;
        }
    }
    n as i32
}

/// `map_lookup_batch` of a native build: `n` keys end to end in `keys`, values and found flags to
/// `values` and `found` (separate slices, so nothing to copy first).
pub(crate) fn lookup_batch_slices(t: &Table, keys: &[u8], n: i32, values: &mut [u8], found: &mut [u8]) -> i32 {
    let (ks, vs) = (t.spec().key_size as usize, t.spec().value_size as usize);
    let Some(n) = usize::try_from(n).ok().filter(|&n| n <= MAX_BATCH) else { return err::BAD_RANGE };
    if keys.len() != n * ks || values.len() != n * vs || found.len() != n {
        return err::BAD_MEMORY;
    }
    let mut hits = 0;
    for ((k, v), f) in keys.chunks_exact(ks).zip(values.chunks_exact_mut(vs)).zip(found.iter_mut()) {
        let hit = t.lookup(k, v);
        *f = u8::from(hit);
        hits += i32::from(hit);
    }
    hits
}

/// `map_update_batch` of a native build.
pub(crate) fn update_batch_slices(t: &Table, keys: &[u8], values: &[u8], n: i32) -> i32 {
    let (ks, vs) = (t.spec().key_size as usize, t.spec().value_size as usize);
    let Some(n) = usize::try_from(n).ok().filter(|&n| n <= MAX_BATCH) else { return err::BAD_RANGE };
    if keys.len() != n * ks || values.len() != n * vs {
        return err::BAD_MEMORY;
    }
    for (i, (k, v)) in keys.chunks_exact(ks).zip(values.chunks_exact(vs)).enumerate() {
        if t.update(k, v).is_err() {
            return i as i32;
        }
    }
    n as i32
}
