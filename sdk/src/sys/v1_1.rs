//! The imports ABI 1.1 added: the burst area, length changes, the context, maps, gauges and events. Same
//! shape as the 1.0 wrappers: slices instead of pointer/length pairs, checked numbers, codes turned
//! into [`Error`]s; the native host or the mock on native targets (through `crate::backend`).

use super::len_arg;
#[cfg(target_arch = "wasm32")]
use super::ptr;
#[cfg(target_arch = "wasm32")]
use super::raw;
use crate::Error;

#[cfg(not(target_arch = "wasm32"))]
use crate::backend as host;

/// `burst_area(ptr, max_pkts, window)`: registers `len` bytes at `area` (init only) as the burst area
/// for `max_pkts` packets of `window` bytes each; `len` must be
/// [`wasmdp_abi::area::size`]`(max_pkts, window)` ([`wasmdp_abi::area::heads_size`] with
/// [`wasmdp_abi::area::HEADS`]).
///
/// # Safety
/// `area..area + len` must stay valid and unused by anything but the burst area for the life of the
/// instance: the host writes it before every burst and reads it after, and the SDK makes references
/// to it only during `on_burst` (see `crate::area`).
pub unsafe fn burst_area(area: *mut u8, len: usize, max_pkts: u32, window: u32) -> Result<(), Error> {
    let shape = wasmdp_abi::area::parse_window(window).ok_or(Error::BadRange)?;
    if len != shape.size(max_pkts as usize) {
        return Err(Error::BadRange);
    }
    let (n, w) = (len_arg(max_pkts as usize)?, len_arg(window as usize)?);
    #[cfg(target_arch = "wasm32")]
    // SAFETY: the caller guarantees the region is the area's own for the instance's life.
    let rc = unsafe { raw::burst_area(ptr(area), n, w) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::burst_area(core::ptr::slice_from_raw_parts_mut(area, len), n, w);
    Error::check(rc).map(drop)
}

/// `pkt_adjust(idx, head, tail)`: changes packet `idx`'s length now (see the ABI); returns the new
/// length, [`Error::NoRoom`] when it does not fit (nothing changed).
pub fn pkt_adjust(idx: u32, head: i32, tail: i32) -> Result<u32, Error> {
    let idx = i32::try_from(idx).map_err(|_| Error::BadIndex)?;
    #[cfg(target_arch = "wasm32")]
    // SAFETY: scalar arguments, checked by the host.
    let rc = unsafe { raw::pkt_adjust(idx, head, tail) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::pkt_adjust(idx, head, tail);
    Error::check(rc)
}

/// `pkt_room(idx)`: `(headroom, tailroom)` of packet `idx`.
pub fn pkt_room(idx: u32) -> Result<(u32, u32), Error> {
    let idx = i32::try_from(idx).map_err(|_| Error::BadIndex)?;
    #[cfg(target_arch = "wasm32")]
    // SAFETY: scalar argument, checked by the host.
    let rc = unsafe { raw::pkt_room(idx) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::pkt_room(idx);
    if rc < 0 {
        return Err(i32::try_from(rc).ok().and_then(Error::from_code).unwrap_or(Error::Other(i32::MIN)));
    }
    Ok(((rc >> 32) as u32, rc as u32))
}

/// `context(ptr, cap)`: copies the context into `out`; returns its size ([`Error::TooSmall`] when
/// `out` is smaller; nothing written).
pub fn context(out: &mut [u8]) -> Result<usize, Error> {
    let cap = len_arg(out.len())?;
    #[cfg(target_arch = "wasm32")]
    // SAFETY: `out` is an exclusive borrow of `cap` bytes of our memory.
    let rc = unsafe { raw::context(ptr(out.as_mut_ptr()), cap) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::context(out, cap);
    Error::check(rc).map(|n| n as usize)
}

/// `map_declare(name, kind, key_size, value_size, capacity)` (init only): the map's id.
pub fn map_declare(name: &str, kind: u32, key_size: u32, value_size: u32, capacity: u32) -> Result<u32, Error> {
    let nl = len_arg(name.len())?;
    let num = |v: u32| i32::try_from(v).map_err(|_| Error::BadRange);
    let (k, ks, vs, cap) = (num(kind)?, num(key_size)?, num(value_size)?, num(capacity)?);
    #[cfg(target_arch = "wasm32")]
    // SAFETY: `name` is `nl` readable bytes of our memory; the host only reads them.
    let rc = unsafe { raw::map_declare(ptr(name.as_ptr()), nl, k, ks, vs, cap) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::map_declare(name, nl, k, ks, vs, cap);
    Error::check(rc)
}

/// `map_declare_ttl(name, kind, key_size, value_size, capacity, ttl_ms)` (init only): a hash map
/// whose entries expire `ttl_ms` milliseconds after their last use; the map's id.
pub fn map_declare_ttl(
    name: &str,
    kind: u32,
    key_size: u32,
    value_size: u32,
    capacity: u32,
    ttl_ms: u64,
) -> Result<u32, Error> {
    let nl = len_arg(name.len())?;
    let num = |v: u32| i32::try_from(v).map_err(|_| Error::BadRange);
    let (k, ks, vs, cap) = (num(kind)?, num(key_size)?, num(value_size)?, num(capacity)?);
    let ttl = i64::try_from(ttl_ms).map_err(|_| Error::BadRange)?;
    #[cfg(target_arch = "wasm32")]
    // SAFETY: `name` is `nl` readable bytes of our memory; the host only reads them.
    let rc = unsafe { raw::map_declare_ttl(ptr(name.as_ptr()), nl, k, ks, vs, cap, ttl) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::map_declare_ttl(name, nl, k, ks, vs, cap, ttl);
    Error::check(rc)
}

/// `map_lookup(id, key, value)`: copies the value into `value`; `Ok(false)` when the key is absent.
///
/// # Safety
/// The ABI passes no lengths: the host reads the map's `key_size` bytes at `key` and writes its
/// `value_size` bytes at `value`. `key` must be at least `key_size` bytes and `value` at least
/// `value_size` bytes of map `id` (as [`crate::Map`] guarantees by its type), or the host writes
/// past `value` into whatever follows it.
pub unsafe fn map_lookup(id: u32, key: &[u8], value: &mut [u8]) -> Result<bool, Error> {
    #[cfg(target_arch = "wasm32")]
    // SAFETY: `key` is readable and `value` an exclusive borrow of our memory, at least the map's
    // sizes (the caller's contract); the host checks the ranges against the memory.
    let rc = unsafe { raw::map_lookup(id as i32, ptr(key.as_ptr()), ptr(value.as_mut_ptr())) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::map_lookup(id as i32, key, value);
    found(rc)
}

/// `map_update(id, key, value)`: inserts or replaces ([`Error::Full`] when the map is full).
///
/// # Safety
/// The host reads the map's `key_size` bytes at `key` and `value_size` bytes at `value`: both must
/// be at least that long (else the host reads what follows them).
pub unsafe fn map_update(id: u32, key: &[u8], value: &[u8]) -> Result<(), Error> {
    #[cfg(target_arch = "wasm32")]
    // SAFETY: both are readable bytes of our memory of at least the map's sizes (the caller's
    // contract); the host only reads them.
    let rc = unsafe { raw::map_update(id as i32, ptr(key.as_ptr()), ptr(value.as_ptr())) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::map_update(id as i32, key, value);
    Error::check(rc).map(drop)
}

/// `map_delete(id, key)`: `Ok(false)` when the key was absent.
///
/// # Safety
/// The host reads the map's `key_size` bytes at `key`: it must be at least that long.
pub unsafe fn map_delete(id: u32, key: &[u8]) -> Result<bool, Error> {
    #[cfg(target_arch = "wasm32")]
    // SAFETY: `key` is at least the map's key size (the caller's contract), readable; the host only
    // reads it.
    let rc = unsafe { raw::map_delete(id as i32, ptr(key.as_ptr())) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::map_delete(id as i32, key);
    found(rc)
}

/// `map_add(id, key, word, delta)`: atomically adds `delta` to the `u64` at `word` of the value.
///
/// # Safety
/// The host reads the map's `key_size` bytes at `key`: it must be at least that long.
pub unsafe fn map_add(id: u32, key: &[u8], word: u32, delta: i64) -> Result<(), Error> {
    let w = i32::try_from(word).map_err(|_| Error::BadRange)?;
    #[cfg(target_arch = "wasm32")]
    // SAFETY: `key` is at least the map's key size (the caller's contract), readable; the host only
    // reads it.
    let rc = unsafe { raw::map_add(id as i32, ptr(key.as_ptr()), w, delta) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::map_add(id as i32, key, w, delta);
    Error::check(rc).map(drop)
}

/// `map_lookup_batch(id, keys, n, values, found)`: `n = found.len()` keys end to end in `keys`,
/// values written to `values` (where found), 1/0 per key in `found`; returns how many were found.
///
/// # Safety
/// The host reads `n x key_size` bytes at `keys` and writes `n x value_size` bytes at `values`:
/// they must be at least that long.
pub unsafe fn map_lookup_batch(id: u32, keys: &[u8], values: &mut [u8], found: &mut [u8]) -> Result<u32, Error> {
    let n = len_arg(found.len())?;
    #[cfg(target_arch = "wasm32")]
    // SAFETY: `keys` is readable, `values` and `found` exclusive borrows of our memory, sized for `n`
    // entries (the caller's contract); the host checks every range against the memory.
    let rc = unsafe {
        raw::map_lookup_batch(id as i32, ptr(keys.as_ptr()), n, ptr(values.as_mut_ptr()), ptr(found.as_mut_ptr()))
    };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::map_lookup_batch(id as i32, keys, n, values, found);
    Error::check(rc)
}

/// `map_update_batch(id, keys, values, n)`: returns how many entries were written (fewer than `n`
/// when the map filled up).
///
/// # Safety
/// The host reads `n x key_size` bytes at `keys` and `n x value_size` bytes at `values`: they must
/// be at least that long.
pub unsafe fn map_update_batch(id: u32, keys: &[u8], values: &[u8], n: u32) -> Result<u32, Error> {
    let n = i32::try_from(n).map_err(|_| Error::BadRange)?;
    #[cfg(target_arch = "wasm32")]
    // SAFETY: both are readable bytes of our memory sized for `n` entries (the caller's contract);
    // the host only reads them.
    let rc = unsafe { raw::map_update_batch(id as i32, ptr(keys.as_ptr()), ptr(values.as_ptr()), n) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::map_update_batch(id as i32, keys, values, n);
    Error::check(rc)
}

/// Where a `map_next_key` call left the walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Walk {
    /// A key was written; call again for the next.
    Key,
    /// No entry in the window the call read; call again.
    Window,
    /// Every entry was walked.
    End,
}

/// `map_next_key(id, cursor, key)`: the next key of a walk over map `id` from `cursor` (0 to
/// start), which the host moves on.
///
/// # Safety
/// The host writes the map's `key_size` bytes at `key`: it must be at least that long.
pub unsafe fn map_next_key(id: u32, cursor: &mut u64, key: &mut [u8]) -> Result<Walk, Error> {
    #[cfg(target_arch = "wasm32")]
    // SAFETY: `cursor` is 8 writable bytes and `key` writable bytes of at least the map's key size
    // (the caller's contract), both exclusive borrows of our memory.
    let rc = unsafe { raw::map_next_key(id as i32, ptr((cursor as *mut u64).cast()), ptr(key.as_mut_ptr())) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::map_next_key(id as i32, cursor, key);
    match rc {
        wasmdp_abi::err::NOT_FOUND => Ok(Walk::End),
        rc => Error::check(rc).map(|n| if n == 1 { Walk::Key } else { Walk::Window }),
    }
}

/// `gauge_register(name)` (init only): the gauge's id.
pub fn gauge_register(name: &str) -> Result<u32, Error> {
    let nl = len_arg(name.len())?;
    #[cfg(target_arch = "wasm32")]
    // SAFETY: `name` is readable bytes of our memory; the host only reads them.
    let rc = unsafe { raw::gauge_register(ptr(name.as_ptr()), nl) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::gauge_register(name, nl);
    Error::check(rc)
}

/// `gauge_set(id, value)`.
pub fn gauge_set(id: u32, value: i64) -> Result<(), Error> {
    #[cfg(target_arch = "wasm32")]
    // SAFETY: scalar arguments.
    let rc = unsafe { raw::gauge_set(id as i32, value) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::gauge_set(id as i32, value);
    Error::check(rc).map(drop)
}

/// `event_register(name, layout, size)` (init only): the kind's id.
pub fn event_register(name: &str, layout: &str, size: usize) -> Result<u32, Error> {
    let (nl, ll, sz) = (len_arg(name.len())?, len_arg(layout.len())?, len_arg(size)?);
    #[cfg(target_arch = "wasm32")]
    // SAFETY: `name` and `layout` are readable bytes of our memory; the host only reads them.
    let rc = unsafe { raw::event_register(ptr(name.as_ptr()), nl, ptr(layout.as_ptr()), ll, sz) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::event_register(name, nl, layout, ll, sz);
    Error::check(rc)
}

/// `event_emit(id, data)`: `Ok(true)` when the event is in the ring, `Ok(false)` when the ring was
/// full (the host counted it lost).
pub fn event_emit(id: u32, data: &[u8]) -> Result<bool, Error> {
    let len = len_arg(data.len())?;
    #[cfg(target_arch = "wasm32")]
    // SAFETY: `data` is readable bytes of our memory; the host only reads them.
    let rc = unsafe { raw::event_emit(id as i32, ptr(data.as_ptr()), len) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::event_emit(id as i32, data, len);
    match rc {
        wasmdp_abi::err::FULL => Ok(false),
        rc => Error::check(rc).map(|_| true),
    }
}

/// `NOT_FOUND` as `Ok(false)`, success as `Ok(true)`.
fn found(rc: i32) -> Result<bool, Error> {
    match rc {
        wasmdp_abi::err::NOT_FOUND => Ok(false),
        rc => Error::check(rc).map(|_| true),
    }
}
