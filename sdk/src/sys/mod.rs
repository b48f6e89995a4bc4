//! Every host import of the ABI (module [`wasmdp_abi::IMPORT_MODULE`], `"wasmdp"`), each declared next to
//! its safe wrapper.
//!
//! The wrappers take slices instead of pointer/length pairs, check that every number fits the `i32`
//! the ABI passes, and turn negative return codes into [`Error`]s. They are the whole boundary: the
//! rest of the SDK ([`Burst`](crate::Burst), [`Packet`](crate::Packet), ...) is built on them, and a
//! plugin may call them directly.
//!
//! On `wasm32` they call the imports. On any other target they call the host a native build runs
//! under ([`crate::native`], through `crate::backend`), or else `crate::mock`, a per-thread fake
//! host (feature `mock`), so that the same policy code runs in `cargo test` (both native targets
//! only).
//!
//! Guest pointers are passed as the `i32` bit pattern of the (32-bit) address: the host reads them as
//! unsigned.

use crate::Error;

#[cfg(not(target_arch = "wasm32"))]
use crate::backend as host;

mod decide;
#[cfg(target_arch = "wasm32")]
mod raw;
mod v1_1;
pub use decide::*;
pub use v1_1::*;

/// `v` as the `i32` of the ABI, or `e` when it does not fit.
#[inline(always)]
fn arg(v: u32, e: Error) -> Result<i32, Error> {
    i32::try_from(v).map_err(|_| e)
}

/// The guest address of a buffer, as the ABI passes it.
#[cfg(target_arch = "wasm32")]
#[inline(always)]
fn ptr(p: *const u8) -> i32 {
    p as usize as u32 as i32
}

/// A buffer length as the ABI passes it.
#[inline(always)]
fn len_arg(len: usize) -> Result<i32, Error> {
    i32::try_from(len).map_err(|_| Error::BadMemory)
}

// ---------------------------------------------------------------------------------------------------
// burst_len

/// `burst_len() -> i32`: packets in the current burst ([`Error::NoBurst`] outside `wasmdp_on_burst`).
#[inline]
pub fn burst_len() -> Result<u32, Error> {
    #[cfg(target_arch = "wasm32")]
    // SAFETY: no arguments; the host only reads its own burst state.
    let rc = unsafe { raw::burst_len() };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::burst_len();
    Error::check(rc)
}

// ---------------------------------------------------------------------------------------------------
// pkt_len

/// `pkt_len(idx) -> i32`: length of packet `idx` in bytes.
#[inline]
pub fn pkt_len(idx: u32) -> Result<u32, Error> {
    let idx = arg(idx, Error::BadIndex)?;
    #[cfg(target_arch = "wasm32")]
    // SAFETY: scalar argument, checked by the host.
    let rc = unsafe { raw::pkt_len(idx) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::pkt_len(idx);
    Error::check(rc)
}

// ---------------------------------------------------------------------------------------------------
// pkt_read

/// `pkt_read(idx, off, ptr, len) -> i32`: copies packet bytes `off..off + buf.len()` into `buf`;
/// returns the number of bytes copied (`buf.len()`). A range past the packet's end is
/// [`Error::BadRange`] and copies nothing: read `min(len - off, buf.len())` bytes for "up to".
#[inline]
pub fn pkt_read(idx: u32, off: u32, buf: &mut [u8]) -> Result<usize, Error> {
    let idx = arg(idx, Error::BadIndex)?;
    let off = arg(off, Error::BadRange)?;
    let len = len_arg(buf.len())?;
    #[cfg(target_arch = "wasm32")]
    // SAFETY: `buf` is an exclusive borrow of `len` bytes of our own linear memory, so the host writing
    // up to `len` bytes at its address cannot alias anything else; the host checks the packet range.
    let rc = unsafe { raw::pkt_read(idx, off, ptr(buf.as_mut_ptr()), len) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::pkt_read(idx, off, buf, len);
    Error::check(rc).map(|n| n as usize)
}

// ---------------------------------------------------------------------------------------------------
// pkt_write

/// `pkt_write(idx, off, ptr, len) -> i32`: copies `data` into the packet at `off`; returns the number
/// of bytes copied. The range must lie inside the packet ([`Error::BadRange`]): writes do not grow it.
#[inline]
pub fn pkt_write(idx: u32, off: u32, data: &[u8]) -> Result<usize, Error> {
    let idx = arg(idx, Error::BadIndex)?;
    let off = arg(off, Error::BadRange)?;
    let len = len_arg(data.len())?;
    #[cfg(target_arch = "wasm32")]
    // SAFETY: `data` is a shared borrow of `len` bytes of our linear memory; the host only reads them.
    let rc = unsafe { raw::pkt_write(idx, off, ptr(data.as_ptr()), len) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::pkt_write(idx, off, data, len);
    Error::check(rc).map(|n| n as usize)
}

// ---------------------------------------------------------------------------------------------------
// pkt_copy

/// `pkt_copy(dst_idx, dst_off, src_idx, src_off, len) -> i32`: copies `len` bytes between two packets of
/// the burst (or within one; overlapping ranges behave like `memmove`); returns `len`.
#[inline]
pub fn pkt_copy(dst_idx: u32, dst_off: u32, src_idx: u32, src_off: u32, len: u32) -> Result<u32, Error> {
    let dst_idx = arg(dst_idx, Error::BadIndex)?;
    let dst_off = arg(dst_off, Error::BadRange)?;
    let src_idx = arg(src_idx, Error::BadIndex)?;
    let src_off = arg(src_off, Error::BadRange)?;
    let len = arg(len, Error::BadRange)?;
    #[cfg(target_arch = "wasm32")]
    // SAFETY: scalar arguments only (no guest memory involved), checked by the host.
    let rc = unsafe { raw::pkt_copy(dst_idx, dst_off, src_idx, src_off, len) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::pkt_copy(dst_idx, dst_off, src_idx, src_off, len);
    Error::check(rc)
}

// ---------------------------------------------------------------------------------------------------
// counter_register

/// `counter_register(name_ptr, name_len) -> i32`: registers a plugin counter (in `wasmdp_init` only; at
/// most [`wasmdp_abi::MAX_COUNTERS`]); returns its id.
#[inline]
pub fn counter_register(name: &str) -> Result<u32, Error> {
    let len = len_arg(name.len())?;
    #[cfg(target_arch = "wasm32")]
    // SAFETY: `name` is a shared borrow of `len` bytes of our linear memory; the host only reads them.
    let rc = unsafe { raw::counter_register(ptr(name.as_ptr()), len) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::counter_register(name, len);
    Error::check(rc)
}

// ---------------------------------------------------------------------------------------------------
// counter_add

/// `counter_add(id, value) -> i32`: adds `value` to counter `id`.
#[inline]
pub fn counter_add(id: u32, value: i64) -> Result<(), Error> {
    let id = arg(id, Error::NotFound)?;
    #[cfg(target_arch = "wasm32")]
    // SAFETY: scalar arguments, checked by the host.
    let rc = unsafe { raw::counter_add(id, value) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::counter_add(id, value);
    Error::check(rc).map(drop)
}

// ---------------------------------------------------------------------------------------------------
// param_get

/// `param_get(key_ptr, key_len, out_ptr, out_cap) -> i32`: copies the text of the `params:` value of
/// `key` into `out`; returns its length in bytes, [`Error::NotFound`] or [`Error::TooSmall`] (nothing
/// copied then).
#[inline]
pub fn param_get(key: &str, out: &mut [u8]) -> Result<usize, Error> {
    let key_len = len_arg(key.len())?;
    let out_cap = len_arg(out.len())?;
    #[cfg(target_arch = "wasm32")]
    // SAFETY: `key` is a shared borrow the host only reads; `out` an exclusive borrow of `out_cap` bytes
    // of our linear memory, which the host writes at most; the two cannot overlap.
    let rc = unsafe { raw::param_get(ptr(key.as_ptr()), key_len, ptr(out.as_mut_ptr()), out_cap) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::param_get(key, key_len, out, out_cap);
    Error::check(rc).map(|n| n as usize)
}

// ---------------------------------------------------------------------------------------------------
// now_ns

/// `now_ns() -> i64`: the host's monotonic clock in nanoseconds.
#[inline]
pub fn now_ns() -> u64 {
    #[cfg(target_arch = "wasm32")]
    // SAFETY: no arguments.
    let ns = unsafe { raw::now_ns() };
    #[cfg(not(target_arch = "wasm32"))]
    let ns = host::now_ns();
    ns.max(0) as u64
}

// ---------------------------------------------------------------------------------------------------
// random

/// `random() -> i64`: a uniformly random `u64` from the instance's own generator, seeded from the
/// operating system when the instance was made (not for cryptography): for sampling and for picking
/// backends.
#[inline]
pub fn random() -> u64 {
    #[cfg(target_arch = "wasm32")]
    // SAFETY: no arguments.
    let r = unsafe { raw::random() };
    #[cfg(not(target_arch = "wasm32"))]
    let r = host::random();
    r as u64
}

// ---------------------------------------------------------------------------------------------------
// log

/// `log(level, ptr, len)`: logs `msg` at `level` ([`wasmdp_abi::level`]) through the host, tagged
/// with the plugin and port. A message longer than `i32::MAX` bytes is not sent.
#[inline]
pub fn log(level: u32, msg: &str) {
    let (Ok(level), Ok(len)) = (i32::try_from(level), len_arg(msg.len())) else {
        return;
    };
    #[cfg(target_arch = "wasm32")]
    // SAFETY: `msg` is a shared borrow of `len` bytes of our linear memory; the host only reads them.
    unsafe {
        raw::log(level, ptr(msg.as_ptr()), len)
    };
    #[cfg(not(target_arch = "wasm32"))]
    host::log(level, msg, len);
}
