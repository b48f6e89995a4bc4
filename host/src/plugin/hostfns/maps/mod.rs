//! The map imports linked to their semantics in `ops::maps`: keys, values and cursors read from
//! and written to the plugin's memory, every range checked.

use super::{guest_bytes, guest_span, C};
use crate::plugin::maps::Table;
use crate::plugin::ops::maps::{add, declare, delete, lookup, next_key, update, Shape};
use crate::plugin::state::HostState;
use std::ops::Range;
use wasmdp_abi::{err, import, map};
use wasmtime::Linker;

mod batch;

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
    linker.func_wrap(m, import::MAP_DELETE, |mut c: C<'_>, id: i32, kp: i32| keyed(&mut c, id, kp, delete))?;
    linker.func_wrap(m, import::MAP_ADD, |mut c: C<'_>, id: i32, kp: i32, word: i32, delta: i64| {
        keyed(&mut c, id, kp, |t, key| add(t, key, word, delta))
    })?;
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
    let rc = next_key(t, &mut cursor, &mut key[..ks]);
    data[cr].copy_from_slice(&cursor.to_le_bytes());
    if rc == 1 {
        data[kr].copy_from_slice(&key[..ks]);
    }
    rc
}

/// Map `id` of the instance, its memory and the bounds of ranges in it. The table borrowed beside
/// the memory (one lookup of the memory, no reference count taken and dropped a call).
pub(super) fn table_and_memory<'a>(c: &'a mut C<'_>, id: i32) -> Result<(&'a Table, &'a mut [u8], super::Limit), i32> {
    let i = usize::try_from(id).ok().filter(|&i| i < c.data().maps.len()).ok_or(err::NOT_FOUND)?;
    let mem = c.data().memory.ok_or(err::BAD_MEMORY)?;
    let (data, st) = mem.data_and_store_mut(c);
    let limit = st.limit(data.len());
    Ok((&st.maps[i], data, limit))
}

/// A single-entry operation (`map_lookup`, `map_update`) on the key and value ranges checked: on
/// the plugin's memory in place when the ranges do not overlap (the memory is the calling thread's
/// alone, and no range reaches into the packet region), on a copy of the key when they do (a
/// lookup's value may then overwrite its own key). The table and the memory borrowed together
/// ([`table_and_memory`]).
fn one(c: &mut C<'_>, id: i32, kp: i32, vp: i32, f: impl FnOnce(&Table, &[u8], &mut [u8]) -> i32) -> i32 {
    let (t, data, limit) = match table_and_memory(c, id) {
        Ok(x) => x,
        Err(e) => return e,
    };
    let (ks, vs) = (t.spec().key_size as usize, t.spec().value_size as usize);
    let (Some(kr), Some(vr)) = (guest_span(kp, ks as i32, &limit), guest_span(vp, vs as i32, &limit)) else {
        return err::BAD_MEMORY;
    };
    match apart(data, kr.clone(), vr.clone()) {
        Some((key, value)) => f(t, key, value),
        None => {
            let mut key = [0u8; map::MAX_KEY as usize];
            key[..ks].copy_from_slice(&data[kr]);
            f(t, &key[..ks], &mut data[vr])
        }
    }
}

/// A key-only operation (`map_delete`, `map_add`): the key's range checked and read in place (the
/// plugin's memory is not written).
fn keyed(c: &mut C<'_>, id: i32, kp: i32, f: impl FnOnce(&Table, &[u8]) -> i32) -> i32 {
    let (t, data, limit) = match table_and_memory(c, id) {
        Ok(x) => x,
        Err(e) => return e,
    };
    match guest_span(kp, t.spec().key_size as i32, &limit) {
        Some(kr) => f(t, &data[kr]),
        None => err::BAD_MEMORY,
    }
}

/// The ranges `key` and `value` of `data` (both inside it) as a shared and an exclusive borrow, if
/// they do not overlap.
#[inline(always)]
fn apart(data: &mut [u8], key: Range<usize>, value: Range<usize>) -> Option<(&[u8], &mut [u8])> {
    if key.end <= value.start {
        let (front, back) = data.split_at_mut(value.start);
        Some((&front[key], &mut back[..value.len()]))
    } else if value.end <= key.start {
        let (front, back) = data.split_at_mut(key.start);
        Some((&back[..key.len()], &mut front[value]))
    } else {
        None
    }
}
