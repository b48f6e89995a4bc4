//! The registered area and the right to view it: the SDK's one `unsafe` core of the area. The
//! registration (where the area is, its shape) and whether a `Burst` holds it live in a slot per
//! module instance (wasm32: the module's one thread) or per thread (native targets), and [`Held`]
//! is the only way to a reference into the region.

use super::views::{Area, Header};
use super::{AreaSpec, DIRECT};
use crate::{sys, Error};
use wasmdp_abi::area::{hdr, HEADER};

/// A registered area: where it is and its shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Registered {
    ptr: usize,
    len: usize,
    spec: AreaSpec,
}

#[cfg(target_arch = "wasm32")]
mod slot {
    //! The registration and whether a `Burst` holds the area, for the module's one thread.
    use super::Registered;
    use core::cell::Cell;

    struct One<T>(Cell<T>);
    // SAFETY: wasm32 plugins built by this SDK are single-threaded (checked in `policy`).
    unsafe impl<T> Sync for One<T> {}

    static REGISTERED: One<Option<Registered>> = One(Cell::new(None));
    static HELD: One<bool> = One(Cell::new(false));

    pub(crate) fn set(r: Option<Registered>) {
        REGISTERED.0.set(r);
    }
    pub(crate) fn get() -> Option<Registered> {
        REGISTERED.0.get()
    }
    pub(crate) fn hold(on: bool) -> bool {
        HELD.0.replace(on)
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod slot {
    //! Per thread on native targets, like the mock host the tests run against.
    use super::Registered;
    use core::cell::Cell;

    std::thread_local! {
        static REGISTERED: Cell<Option<Registered>> = const { Cell::new(None) };
        static HELD: Cell<bool> = const { Cell::new(false) };
    }

    pub(crate) fn set(r: Option<Registered>) {
        REGISTERED.with(|c| c.set(r));
    }
    pub(crate) fn get() -> Option<Registered> {
        REGISTERED.with(Cell::get)
    }
    pub(crate) fn hold(on: bool) -> bool {
        HELD.with(|c| c.replace(on))
    }
}

/// Registers `len` bytes at `ptr` as the area `spec` describes (nothing for [`AreaSpec::None`]).
///
/// # Safety
/// As [`sys::burst_area`]: the region is the area's alone for the life of the instance.
pub(crate) unsafe fn register(ptr: *mut u8, len: usize, spec: AreaSpec) -> Result<(), Error> {
    set(None);
    if spec == AreaSpec::None {
        return Ok(());
    }
    if len < spec.bytes() {
        return Err(Error::TooSmall);
    }
    let (max_pkts, window) = spec.shape();
    // SAFETY: forwarded from our caller.
    unsafe { sys::burst_area(ptr, spec.bytes(), max_pkts, window | spec.flags()) }?;
    set(Some(Registered { ptr: ptr as usize, len: spec.bytes(), spec }));
    Ok(())
}

/// Whether a `Burst` holds the area now (the mock host must not touch it then).
#[cfg(all(not(target_arch = "wasm32"), any(test, feature = "mock")))]
pub(crate) fn in_use() -> bool {
    let held = hold(true);
    hold(held);
    held
}

/// The right to make views of the registered area, held by at most one `Burst` at a time.
#[derive(Debug)]
pub(crate) struct Held(Registered);

impl Held {
    /// The area, if one is registered and no other `Burst` holds it.
    pub(crate) fn take() -> Option<Held> {
        let r = get()?;
        if hold(true) {
            return None; // another Burst has it: stays with that one
        }
        Some(Held(r))
    }

    /// [`Held::take`] when the area registered is `spec`, with `spec` and its size as given (a
    /// constant of the caller's, where the registration's are values read at run time).
    #[inline(always)]
    pub(crate) fn take_as(spec: AreaSpec) -> Option<Held> {
        let held = Held::take()?;
        let known = Registered { ptr: held.0.ptr, len: spec.bytes(), spec };
        // The registration says the same (else the burst has no area: `held` lets go of it). A
        // new `Held` of `known`, not `held` with `known` stored into it: that form measured dearer
        // (`ratelimit` +1.5%, `firewall` +1.4%), the fields not all folded to constants.
        (held.0 == known).then(|| {
            core::mem::forget(held);
            Held(known)
        })
    }

    /// A view for as long as `self` is borrowed.
    pub(crate) fn view(&mut self) -> Option<Area<'_>> {
        // SAFETY: the region was registered as the area's alone for the instance's life
        // (`register`'s contract); `Held` is unique (the `hold` flag), and the view borrows it
        // mutably, so this is the only reference to the region while it lives. The host writes the
        // region only outside our calls.
        let buf = unsafe { core::slice::from_raw_parts_mut(self.0.ptr as *mut u8, self.0.len) };
        Area::new(buf, self.0.spec)
    }

    /// The header alone, without locating the descriptors (the burst-wide decisions).
    #[inline]
    pub(crate) fn header(&mut self) -> Header<'_> {
        // SAFETY: as in `view`; every registered area is at least `HEADER` bytes (`register`
        // refuses less: `AreaSpec::bytes` of anything but `None` is at least `HEADER`).
        Header(unsafe { &mut *(self.0.ptr as *mut [u8; HEADER]) })
    }

    /// Whether the area has windows with descriptors (not just the header, not heads).
    pub(crate) fn has_windows(&self) -> bool {
        matches!(self.0.spec, AreaSpec::Windows(_) | AreaSpec::HashedWindows(_))
    }

    /// The heads of the first `n` packets when the area is [`AreaSpec::Heads`]`(N)` (or direct
    /// heads, or either with drops).
    pub(crate) fn heads<const N: usize>(&mut self, n: usize) -> Option<crate::Heads<'_, N>> {
        let (base, drops) = self.0.spec.without_drops();
        let direct = base == AreaSpec::DirectHeads(N as u16);
        if N == 0 || !(direct || base == AreaSpec::Heads(N as u16)) {
            return None;
        }
        // SAFETY: as in `view`, for as long as `self` is borrowed.
        let buf = unsafe { core::slice::from_raw_parts_mut(self.0.ptr as *mut u8, self.0.len) };
        // The verdict bytes follow the heads (`AreaSpec::bytes`).
        let (buf, verdicts) = buf.split_at_mut(if drops { base.bytes().min(buf.len()) } else { buf.len() });
        let verdicts = drops.then_some(verdicts);
        let (header, rest) = buf.split_at_mut(HEADER);
        let changed = header.get_mut(hdr::CHANGED..)?.first_chunk_mut::<4>()?;
        if direct && DIRECT {
            let (entries, _) = rest.as_chunks::<{ wasmdp_abi::area::DIRECT_HEAD }>();
            return Some(crate::Heads::direct(n, entries, changed, verdicts));
        }
        let max = wasmdp_abi::MAX_BURST as usize;
        let (lens, wins) = rest.split_at_mut((max * wasmdp_abi::area::LEN_BYTES).min(rest.len()));
        let (lens, _) = lens.as_chunks::<4>();
        let (heads, _) = wins.as_chunks_mut::<N>();
        Some(crate::Heads::new(n, lens, heads, changed, verdicts))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        hold(false);
    }
}

pub(crate) use slot::{get, hold, set};
