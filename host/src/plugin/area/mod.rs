//! The host's side of the burst area (ABI 1.1, `wasmdp_abi::area`): before a call, the burst's
//! header, descriptors and windows (or, for heads, the windows alone: [`heads`]) are written into
//! the plugin's memory; after it, the plugin's
//! decisions are read back, checked in full, and only then carried out: length changes, the windows
//! it changed, verdicts, engines, offloads.
//!
//! Nothing read back is trusted: an engine id, a port, a verdict or a dirty length out of range fails
//! the call before anything was changed (the port's failure policy applies, as for an error return);
//! a length change that does not fit the buffer drops that packet, counted as `headroom`.
//!
//! Before the call: `fill` (windows), `heads` (windows alone), `direct` (descriptors of packets the
//! plugin reaches in place); after it: `apply`; the window copies both use: `copy`; the verdict
//! bytes of heads with drops, reset before and read after: `drops`; the registered area, a plain
//! record the state holds: `record`.

use crate::mbuf::flags;
use wasmdp_abi::area::rx;

mod apply;
mod copy;
mod direct;
mod drops;
mod fill;
mod heads;
pub(crate) mod record;

pub(crate) use apply::apply;
use copy::copy_small;
pub(crate) use direct::fill as fill_direct;
use fill::{descriptor, fill_header};
pub(crate) use fill::{fill, Stamp};
pub(crate) use record::Area;

/// Writes `v` at `at` in `b` (nothing past its end).
#[inline(always)]
fn put(b: &mut [u8], at: usize, v: &[u8]) {
    if let Some(d) = b.get_mut(at..at + v.len()) {
        d.copy_from_slice(v);
    }
}

/// `N` bytes of `b` at `at` (zeros past its end).
#[inline(always)]
fn get<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    b.get(at..).and_then(<[u8]>::first_chunk::<N>).copied().unwrap_or([0; N])
}

/// Whether a packet's RX flags include what the area reports (keeps the two bit sets in step).
const _: () = assert!(flags::RX_VLAN as u32 == rx::VLAN && flags::RX_TUNNEL as u32 == rx::TUNNEL);
