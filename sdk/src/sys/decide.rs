//! The decision imports of ABI 1.0 (engines on runs of the burst, the native MAC swap, offloads,
//! drops, sends, sticky decisions), each declared next to its safe wrapper.

#[cfg(target_arch = "wasm32")]
use super::raw;
use super::{arg, burst_len};
#[cfg(not(target_arch = "wasm32"))]
use crate::backend as host;
use crate::Error;

// ---------------------------------------------------------------------------------------------------
// run_engine

/// `run_engine(engine, start, count) -> i32`: runs native engine `engine` ([`wasmdp_abi::engine`]) on
/// packets `start..start + count` of the burst.
#[inline]
pub fn run_engine(engine: u32, start: u32, count: u32) -> Result<u32, Error> {
    let engine = arg(engine, Error::BadEngine)?;
    let start = arg(start, Error::BadIndex)?;
    let count = arg(count, Error::BadIndex)?;
    #[cfg(target_arch = "wasm32")]
    // SAFETY: scalar arguments, checked by the host.
    let rc = unsafe { raw::run_engine(engine, start, count) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::run_engine(engine, start, count);
    Error::check(rc)
}

// ---------------------------------------------------------------------------------------------------
// macswap

/// `macswap(start, count) -> i32`: the native SIMD MAC swap on packets `start..start + count` (the bytes
/// only: no offload marking).
#[inline]
pub fn macswap(start: u32, count: u32) -> Result<u32, Error> {
    let start = arg(start, Error::BadIndex)?;
    let count = arg(count, Error::BadIndex)?;
    #[cfg(target_arch = "wasm32")]
    // SAFETY: scalar arguments, checked by the host.
    let rc = unsafe { raw::macswap(start, count) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::macswap(start, count);
    Error::check(rc)
}

// ---------------------------------------------------------------------------------------------------
// set_offloads

/// `set_offloads(idx, flags, vlan_tci, vlan_tci_outer) -> i32`: requests TX offloads
/// ([`wasmdp_abi::flags`]) for packet `idx`, or for every packet of the burst with `idx =`
/// [`wasmdp_abi::ALL_PACKETS`] (-1).
#[inline]
pub fn set_offloads(idx: i32, flags: u64, vlan_tci: u16, vlan_tci_outer: u16) -> Result<(), Error> {
    // An engine left for the end of the call by `Burst::pass_with` runs first: an engine marks
    // packets with the TX port's offloads, which must not replace the ones asked for here.
    if let Some(engine) = crate::verdict::take() {
        run_engine(engine, 0, burst_len()?)?;
    }
    let (flags, tci, outer) = (flags as i64, i32::from(vlan_tci), i32::from(vlan_tci_outer));
    #[cfg(target_arch = "wasm32")]
    // SAFETY: scalar arguments, checked by the host.
    let rc = unsafe { raw::set_offloads(idx, flags, tci, outer) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::set_offloads(idx, flags, tci, outer);
    Error::check(rc).map(drop)
}

// ---------------------------------------------------------------------------------------------------
// drop_pkt

/// `drop_pkt(idx) -> i32`: drops packet `idx` (counted as a `policy` drop) once `wasmdp_on_burst`
/// returns. Later calls on it return [`Error::Gone`].
#[inline]
pub fn drop_pkt(idx: u32) -> Result<(), Error> {
    let idx = arg(idx, Error::BadIndex)?;
    #[cfg(target_arch = "wasm32")]
    // SAFETY: scalar argument, checked by the host.
    let rc = unsafe { raw::drop_pkt(idx) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::drop_pkt(idx);
    Error::check(rc).map(drop)
}

// ---------------------------------------------------------------------------------------------------
// send_to

/// `send_to(idx, port) -> i32`: transmits packet `idx` on port `port` (an index in the config's
/// `ports:` list) instead of the stream's TX port.
#[inline]
pub fn send_to(idx: u32, port: u32) -> Result<(), Error> {
    let idx = arg(idx, Error::BadIndex)?;
    let port = arg(port, Error::BadPort)?;
    #[cfg(target_arch = "wasm32")]
    // SAFETY: scalar arguments, checked by the host.
    let rc = unsafe { raw::send_to(idx, port) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::send_to(idx, port);
    Error::check(rc).map(drop)
}

// ---------------------------------------------------------------------------------------------------
// set_sticky

/// `set_sticky(engine, flags, vlan_tci, vlan_tci_outer, bursts) -> i32`: for the next `bursts` bursts
/// (-1: until [`clear_sticky`]) the host does not call `wasmdp_on_burst` and runs `engine` with these
/// offloads natively instead.
#[inline]
pub fn set_sticky(engine: u32, flags: u64, vlan_tci: u16, vlan_tci_outer: u16, bursts: i32) -> Result<(), Error> {
    let engine = arg(engine, Error::BadEngine)?;
    let (flags, tci, outer) = (flags as i64, i32::from(vlan_tci), i32::from(vlan_tci_outer));
    #[cfg(target_arch = "wasm32")]
    // SAFETY: scalar arguments, checked by the host.
    let rc = unsafe { raw::set_sticky(engine, flags, tci, outer, bursts) };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::set_sticky(engine, flags, tci, outer, bursts);
    Error::check(rc).map(drop)
}

// ---------------------------------------------------------------------------------------------------
// clear_sticky

/// `clear_sticky() -> i32`: ends a sticky decision; `wasmdp_on_burst` is called again from the next
/// burst on.
#[inline]
pub fn clear_sticky() -> Result<(), Error> {
    #[cfg(target_arch = "wasm32")]
    // SAFETY: no arguments.
    let rc = unsafe { raw::clear_sticky() };
    #[cfg(not(target_arch = "wasm32"))]
    let rc = host::clear_sticky();
    Error::check(rc).map(drop)
}
