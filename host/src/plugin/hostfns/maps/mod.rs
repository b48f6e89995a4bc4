//! Maps (1.1): `map_declare` in init, then lookups, updates, deletes and atomic adds, one at a time or
//! in batches of up to [`MAX_BATCH`] entries (one host call for a whole burst's keys).
//!
//! The tables are `crate::plugin::maps`: shared by the port's instances or the instance's own, kept
//! across a reload that declares them identically. Keys are copied out of the plugin's memory before
//! the table is touched, so no range the plugin passes can overlap what the host writes.

mod batch;

use super::{guest_bytes, guest_span, C};
use crate::plugin::maps::{MapError, MapKind, MapSpec, Table, Walk};
use crate::plugin::state::HostState;
pub(crate) use batch::{lookup_batch_slices, update_batch_slices};
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
            declare_import(&mut c, np, nl, Shape { kind, ks, vs, cap, ttl_ms: 0 })
        },
    )?;
    linker.func_wrap(
        m,
        import::MAP_DECLARE_TTL,
        |mut c: C<'_>, np: i32, nl: i32, kind: i32, ks: i32, vs: i32, cap: i32, ttl_ms: i64| {
            declare_import(&mut c, np, nl, Shape { kind, ks, vs, cap, ttl_ms })
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
    linker.func_wrap(m, import::MAP_LOOKUP_BATCH, batch::lookup_batch)?;
    linker.func_wrap(m, import::MAP_UPDATE_BATCH, batch::update_batch)?;
    linker.func_wrap(m, import::MAP_NEXT_KEY, next_key_import)?;
    Ok(())
}

/// `map_declare` and `map_declare_ttl` from a module: the name read from its memory, then [`declare`].
fn declare_import(c: &mut C<'_>, np: i32, nl: i32, shape: Shape) -> i32 {
    if !c.data().in_init {
        return err::NOT_INIT;
    }
    match guest_bytes(c, np, nl, map::MAX_NAME as usize) {
        Ok((name, total)) => declare(c.data_mut(), &name, total, shape),
        Err(e) => e,
    }
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

/// `map_next_key` on a cursor and a key buffer: 1 (a key copied, the cursor moved past it), 0 (no
/// entry in the window read, the cursor moved past it) or `NOT_FOUND` (the walk is over).
pub(crate) fn next_key(t: &Table, cursor: &mut u64, key: &mut [u8]) -> i32 {
    match t.next_key(*cursor, key) {
        Walk::Key(next) => {
            *cursor = next;
            1
        }
        Walk::Window(next) => {
            *cursor = next;
            0
        }
        Walk::End => err::NOT_FOUND,
    }
}

/// `map_next_key(id, cursor_ptr, key_ptr)`: both ranges checked before the table is read.
fn next_key_import(mut c: C<'_>, id: i32, cp: i32, kp: i32) -> i32 {
    let (t, data, limit) = match table_and_memory(&mut c, id) {
        Ok(x) => x,
        Err(e) => return e,
    };
    let ks = t.spec().key_size as usize;
    let (Some(cr), Some(kr)) = (guest_span(cp, 8, &limit), guest_span(kp, ks as i32, &limit)) else {
        return err::BAD_MEMORY;
    };
    let mut cursor = u64::from_le_bytes(data[cr.clone()].try_into().expect("eight bytes"));
    let mut key = [0u8; map::MAX_KEY as usize];
    let rc = next_key(&t, &mut cursor, &mut key[..ks]);
    data[cr].copy_from_slice(&cursor.to_le_bytes());
    if rc == 1 {
        data[kr].copy_from_slice(&key[..ks]);
    }
    rc
}

/// The ABI code of a refused write.
fn code(e: MapError) -> i32 {
    match e {
        MapError::Full => err::FULL,
        MapError::BadIndex => err::NOT_FOUND,
        MapError::BadPrefix => err::BAD_RANGE,
    }
}

/// The arguments of `map_declare` / `map_declare_ttl` after the name, as the plugin gave them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape {
    pub kind: i32,
    pub ks: i32,
    pub vs: i32,
    pub cap: i32,
    pub ttl_ms: i64,
}

/// `map_declare(name, kind, key_size, value_size, capacity)` and `map_declare_ttl(..., ttl_ms)`
/// (`name` holds at most [`map::MAX_NAME`] of the `total` bytes given): checked, counted against
/// `limits.map_kib` before anything is allocated.
pub(crate) fn declare(st: &mut HostState, name: &[u8], total: usize, shape: Shape) -> i32 {
    if !st.in_init {
        return err::NOT_INIT;
    }
    let kind = match u32::try_from(shape.kind) {
        Ok(map::HASH) => MapKind::Hash,
        Ok(map::ARRAY) => MapKind::Array,
        Ok(map::PERCPU_HASH) => MapKind::PerInstanceHash,
        Ok(map::PERCPU_ARRAY) => MapKind::PerInstanceArray,
        Ok(map::LRU_HASH) => MapKind::LruHash,
        Ok(map::LPM_TRIE) => MapKind::LpmTrie,
        _ => return err::BAD_RANGE,
    };
    let (Ok(key_size), Ok(value_size), Ok(capacity), Ok(ttl_ms)) =
        (u32::try_from(shape.ks), u32::try_from(shape.vs), u32::try_from(shape.cap), u64::try_from(shape.ttl_ms))
    else {
        return err::BAD_RANGE;
    };
    let Some(name) = std::str::from_utf8(name).ok().filter(|n| total == n.len()) else {
        return err::BAD_RANGE;
    };
    let spec = MapSpec { name: name.to_string(), kind, key_size, value_size, capacity, ttl_ms };
    if let Err(why) = spec.check() {
        tracing::error!(plugin = %st.label, "map_declare refused: {why}");
        return err::BAD_RANGE;
    }
    let layout = st.layouts.get(&spec.name).cloned();
    if let Some(Err(why)) = layout.as_ref().map(|l| l.check(&spec.name, key_size, value_size)) {
        tracing::error!(plugin = %st.label, "map_declare refused: {why}");
        return err::BAD_RANGE;
    }
    if let Some(i) = st.maps.iter().position(|t| t.spec().name == spec.name) {
        return if *st.maps[i].spec() == spec { i as i32 } else { err::BAD_RANGE };
    }
    let env = st.env.clone();
    let declared = if env.shares.contains(&spec.name) {
        let shared = env.shared.declare(&spec, &env.port_name, &mut st.map_budget);
        shared.inspect(|t| env.maps.link(&spec, t, &env.shared))
    } else {
        let initial = st.initial.get(&spec.name).map(|e| (&**e, layout.as_deref()));
        env.maps.declare_filled(&spec, u32::from(st.env.queue), &mut st.map_budget, initial)
    };
    match declared {
        Ok(table) => {
            env.maps.set_layout(&spec.name, layout);
            st.maps.push(table);
            st.maps.len() as i32 - 1
        }
        Err(why) => {
            tracing::error!(plugin = %st.label, "map_declare refused: {why}");
            if st.initial.contains_key(&spec.name) {
                st.initial_refused.get_or_insert(why);
            }
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
    let r = guest_span(kp, ks as i32, &c.data().limit(data.len())).ok_or(err::BAD_MEMORY)?;
    let mut key = [0u8; map::MAX_KEY as usize];
    key[..ks].copy_from_slice(&data[r]);
    Ok((t, key))
}

/// Map `id` of the instance, its memory and the bounds of ranges in it.
pub(super) fn table_and_memory<'a>(c: &'a mut C<'_>, id: i32) -> Result<(Arc<Table>, &'a mut [u8], super::Limit), i32> {
    let t = table(c.data(), id)?;
    let mem = c.data().memory.ok_or(err::BAD_MEMORY)?;
    let limit = c.data().limit(mem.data_size(&*c));
    Ok((t, mem.data_mut(c), limit))
}

/// A single-entry operation with the key copied and the value range checked.
fn one(c: &mut C<'_>, id: i32, kp: i32, vp: i32, f: impl FnOnce(&Table, &[u8], &mut [u8]) -> i32) -> i32 {
    let (t, key) = match table_and_key(c, id, kp) {
        Ok(x) => x,
        Err(e) => return e,
    };
    let (ks, vs) = (t.spec().key_size as usize, t.spec().value_size as usize);
    let Some(mem) = c.data().memory else { return err::BAD_MEMORY };
    let limit = c.data().limit(mem.data_size(&*c));
    let data = mem.data_mut(&mut *c);
    let Some(r) = guest_span(vp, vs as i32, &limit) else { return err::BAD_MEMORY };
    f(&t, &key[..ks], &mut data[r])
}
