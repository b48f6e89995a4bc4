//! The engine decision `wasmdp_on_burst` returns (ABI 1.1 [`wasmdp_abi::verdict`]): what
//! [`Burst::pass_with`](crate::Burst::pass_with) records when there is no burst area, so that the
//! host runs the engine after the call instead of being called back for it. Per instance (one
//! thread on wasm32) or per thread (native tests, run in parallel).

/// No engine recorded.
const NONE: u32 = u32::MAX;

#[cfg(target_arch = "wasm32")]
static PENDING: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(NONE);

#[cfg(not(target_arch = "wasm32"))]
std::thread_local! {
    static PENDING: core::cell::Cell<u32> = const { core::cell::Cell::new(NONE) };
}

/// Records engine `id` for the end of the current call (replacing an earlier one).
pub(crate) fn set(id: u32) {
    #[cfg(target_arch = "wasm32")]
    PENDING.store(id, core::sync::atomic::Ordering::Relaxed);
    #[cfg(not(target_arch = "wasm32"))]
    PENDING.with(|p| p.set(id));
}

/// Takes the engine recorded, if any.
pub(crate) fn take() -> Option<u32> {
    #[cfg(target_arch = "wasm32")]
    let id = PENDING.swap(NONE, core::sync::atomic::Ordering::Relaxed);
    #[cfg(not(target_arch = "wasm32"))]
    let id = PENDING.with(|p| p.replace(NONE));
    (id != NONE).then_some(id)
}
