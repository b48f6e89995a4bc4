//! Maps (1.1): `map_declare` in init, then lookups, updates, deletes and atomic adds, one at a time or
//! in batches of up to [`MAX_BATCH`] entries (one host call for a whole burst's keys: `batch`).
//!
//! The tables are `crate::plugin::maps`: shared by the port's instances or the instance's own, kept
//! across a reload that declares them identically. The glue (`hostfns::maps`) copies keys out of the
//! plugin's memory before the table is touched, so no range the plugin passes can overlap what the
//! host writes.

mod batch;

use crate::plugin::maps::{MapError, MapKind, MapSpec, Table, Walk};
use crate::plugin::state::HostState;
pub(crate) use batch::{lookup_batch_in, lookup_batch_slices, update_batch_in, update_batch_slices};
use std::sync::Arc;
use wasmdp_abi::{err, map};

/// Most entries in one batch call (bounds its time).
pub const MAX_BATCH: usize = 4096;

/// Map `id` of the instance.
pub(crate) fn table(st: &HostState, id: i32) -> Result<Arc<Table>, i32> {
    usize::try_from(id).ok().and_then(|i| st.maps.get(i).cloned()).ok_or(err::NOT_FOUND)
}

pub(crate) fn lookup(t: &Table, key: &[u8], value: &mut [u8]) -> i32 {
    t.lookup_coded(key, value) as i32
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
