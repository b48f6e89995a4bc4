//! The atomics and the lock of the map tables: the standard library's, or loom's when the `loom`
//! feature model-checks the protocol (`slot`), so that the tables' code is the code checked.

#[cfg(feature = "loom")]
pub(super) use loom::sync::{
    atomic::{fence, AtomicU32, AtomicU64},
    Mutex,
};
#[cfg(not(feature = "loom"))]
pub(super) use std::sync::{
    atomic::{fence, AtomicU32, AtomicU64},
    Mutex,
};

/// Waits a little for another thread's write to end; `round` counts the waits so far.
#[inline]
pub(super) fn back_off(round: u32) {
    #[cfg(feature = "loom")]
    {
        let _ = round;
        loom::thread::yield_now();
    }
    #[cfg(not(feature = "loom"))]
    if round.is_multiple_of(1024) {
        std::thread::yield_now(); // the writer was preempted between two stores
    } else {
        std::hint::spin_loop();
    }
}
