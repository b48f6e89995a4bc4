//! The host a native build's imports go to: the [`Host`] trait (one method per import), the host
//! installed on this thread, and the dispatching function of each import that
//! [`sys`](crate::sys) calls on every target but `wasm32`.
//!
//! A leaf: it knows no policy, area or fake host. [`native`](crate::native) installs an instance's
//! host for the duration of a call ([`with_host`]); the test mock (feature `mock`) installs itself
//! as the fallback ([`install_fallback`]). With neither, every import answers `NO_BURST` (the
//! SDK's [`Error::NoBurst`](crate::Error::NoBurst)), so a native build called outside an instance
//! fails loudly rather than reading and writing a fake host's state.

use core::cell::Cell;
use core::ptr::NonNull;

/// Calls `$callback! { fn NAME(ARG: TYPE, ...) -> RET; ... }` with every import, each with its doc
/// line: the one list the [`Host`] trait, its dispatching functions and the mock's `impl Host`
/// are generated from.
macro_rules! with_imports {
    ($callback:ident) => {
        $callback! {
            /// `burst_len`.
            fn burst_len() -> i32;
            /// `pkt_len`.
            fn pkt_len(idx: i32) -> i32;
            /// `pkt_read` into `buf` (`len` bytes).
            fn pkt_read(idx: i32, off: i32, buf: &mut [u8], len: i32) -> i32;
            /// `pkt_write` from `data` (`len` bytes).
            fn pkt_write(idx: i32, off: i32, data: &[u8], len: i32) -> i32;
            /// `pkt_copy`.
            fn pkt_copy(dst_idx: i32, dst_off: i32, src_idx: i32, src_off: i32, len: i32) -> i32;
            /// `run_engine`.
            fn run_engine(engine: i32, start: i32, count: i32) -> i32;
            /// `macswap`.
            fn macswap(start: i32, count: i32) -> i32;
            /// `set_offloads`.
            fn set_offloads(idx: i32, flags: i64, tci: i32, outer: i32) -> i32;
            /// `drop_pkt`.
            fn drop_pkt(idx: i32) -> i32;
            /// `send_to`.
            fn send_to(idx: i32, port: i32) -> i32;
            /// `set_sticky`.
            fn set_sticky(engine: i32, flags: i64, tci: i32, outer: i32, bursts: i32) -> i32;
            /// `clear_sticky`.
            fn clear_sticky() -> i32;
            /// `counter_register`.
            fn counter_register(name: &str, len: i32) -> i32;
            /// `counter_add`.
            fn counter_add(id: i32, value: i64) -> i32;
            /// `param_get` into `out`.
            fn param_get(key: &str, key_len: i32, out: &mut [u8], out_cap: i32) -> i32;
            /// `now_ns`.
            fn now_ns() -> i64;
            /// `log`.
            fn log(level: i32, msg: &str, len: i32) -> ();
            /// `burst_area`: `len` bytes at address `ptr`, owned by the [`Instance`](crate::native::Instance) for its life.
            fn burst_area(ptr: usize, len: usize, max_pkts: i32, window: i32) -> i32;
            /// `pkt_adjust`.
            fn pkt_adjust(idx: i32, head: i32, tail: i32) -> i32;
            /// `pkt_room`.
            fn pkt_room(idx: i32) -> i64;
            /// `context` into `out`.
            fn context(out: &mut [u8], cap: i32) -> i32;
            /// `map_declare`.
            fn map_declare(name: &str, name_len: i32, kind: i32, key_size: i32, value_size: i32, capacity: i32) -> i32;
            /// `map_declare_ttl`.
            fn map_declare_ttl(name: &str, name_len: i32, kind: i32, key_size: i32, value_size: i32, capacity: i32, ttl_ms: i64) -> i32;
            /// `map_lookup`.
            fn map_lookup(id: i32, key: &[u8], value: &mut [u8]) -> i32;
            /// `map_update`.
            fn map_update(id: i32, key: &[u8], value: &[u8]) -> i32;
            /// `map_delete`.
            fn map_delete(id: i32, key: &[u8]) -> i32;
            /// `map_add`.
            fn map_add(id: i32, key: &[u8], word: i32, delta: i64) -> i32;
            /// `map_lookup_batch` of `n` keys.
            fn map_lookup_batch(id: i32, keys: &[u8], n: i32, values: &mut [u8], found: &mut [u8]) -> i32;
            /// `map_update_batch` of `n` entries.
            fn map_update_batch(id: i32, keys: &[u8], values: &[u8], n: i32) -> i32;
            /// `map_next_key` with the cursor and the key buffer.
            fn map_next_key(id: i32, cursor: &mut u64, key: &mut [u8]) -> i32;
            /// `gauge_register`.
            fn gauge_register(name: &str, len: i32) -> i32;
            /// `gauge_set`.
            fn gauge_set(id: i32, value: i64) -> i32;
            /// `event_register`.
            fn event_register(name: &str, name_len: i32, layout: &str, layout_len: i32, size: i32) -> i32;
            /// `event_emit` of `data` (`len` bytes).
            fn event_emit(id: i32, data: &[u8], len: i32) -> i32;
        }
    };
}
#[cfg(any(test, feature = "mock"))]
pub(crate) use with_imports;

/// The [`Host`] trait and one dispatching function per import.
macro_rules! declare_host {
    ($( $(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty; )*) => {
        /// The host's side of every import, for a native build. Numbers and codes are the ABI's
        /// (`docs/ABI.md`); slices stand for the pointer/length pairs.
        pub trait Host {
            // (The ABI's imports set the arity: `map_declare_ttl` takes seven.)
            $( $(#[$doc])* #[allow(clippy::too_many_arguments)] fn $name(&mut self, $($arg: $ty),*) -> $ret; )*
        }

        $(
            #[inline]
            pub(crate) fn $name($($arg: $ty),*) -> $ret {
                match CURRENT.with(Cell::get) {
                    // SAFETY: installed by `with_host` from an exclusive borrow that outlives the
                    // call it wraps, or by `install_fallback` from a leaked one; the host's methods
                    // do not re-enter the policy, so this is the only use of the borrow while it runs.
                    Some(mut h) => unsafe { h.as_mut().$name($($arg),*) },
                    None => NoHost::no_host(),
                }
            }
        )*
    };
}

with_imports!(declare_host);

/// What an import answers when no host is installed on the thread: `NO_BURST`, or nothing.
trait NoHost {
    fn no_host() -> Self;
}

impl NoHost for i32 {
    fn no_host() -> i32 {
        wasmdp_abi::err::NO_BURST
    }
}

impl NoHost for i64 {
    fn no_host() -> i64 {
        i64::from(wasmdp_abi::err::NO_BURST)
    }
}

impl NoHost for () {
    fn no_host() {}
}

std::thread_local! {
    static CURRENT: Cell<Option<NonNull<dyn Host>>> = const { Cell::new(None) };
}

/// Makes `host` answer this thread's imports from now on, when no instance's host does (and
/// nothing else was installed before: the first fallback stays).
#[cfg(any(test, feature = "mock"))]
pub(crate) fn install_fallback(host: &'static mut dyn Host) {
    let ptr: NonNull<dyn Host> = NonNull::from(host);
    CURRENT.with(|c| {
        if c.get().is_none() {
            c.set(Some(ptr));
        }
    });
}

/// Runs `f` with `host` answering this thread's imports, then restores what answered before (calls
/// nest: an instance's init may run while another's burst is not in progress, never inside it).
pub(crate) fn with_host<R>(host: &mut dyn Host, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<NonNull<dyn Host>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    // Only the lifetime is erased: the pointer is cleared (by `Restore`) before `host`'s borrow ends.
    let ptr = NonNull::from(host);
    // SAFETY: `NonNull<dyn Host + '_>` and `NonNull<dyn Host + 'static>` have the same layout; the
    // erased lifetime is never relied on past this function (see above).
    let ptr: NonNull<dyn Host> = unsafe { core::mem::transmute(ptr) };
    let _restore = Restore(CURRENT.with(|c| c.replace(Some(ptr))));
    f()
}
