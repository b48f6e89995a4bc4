//! Native builds of a policy, as Envoy's NullVM runs proxy-wasm filters: on every target but
//! `wasm32`, the [`sys`](crate::sys) wrappers call the [`Host`] installed on this thread for the
//! duration of a call (see [`Instance`]), or the `mock` fake host where a test installed it
//! (`mock::reset`). With neither, every import fails with `NO_BURST` (no burst: the SDK's
//! [`Error::NoBurst`](crate::Error::NoBurst)), so a native build called outside an instance fails
//! loudly rather than reading and writing a fake host's state. The same policy
//! source then runs inside the host process, unsandboxed, with every import answered by the real
//! host: `wasmdp bench` measures a plugin against this build of itself (the wasm tax).
//!
//! A native build is trusted code: the host does not bound its time or memory, and the slices it
//! passes are its own. Only the host's own example policies are built this way.

use core::cell::Cell;
use core::ptr::NonNull;
use std::vec::Vec;

use crate::__private::Slot;
use crate::{area, Policy};

/// Declares the host imports once: the [`Host`] trait (one method per import, the arguments of the
/// [`sys`](crate::sys) wrappers' native calls) and the dispatching function of each.
macro_rules! host_imports {
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
                    // call it wraps; the host's methods do not re-enter the policy, so this is the
                    // only use of the borrow while it runs.
                    Some(mut h) => unsafe { h.as_mut().$name($($arg),*) },
                    None => NoHost::no_host(),
                }
            }
        )*

        /// The `mock` fake host as a [`Host`]: what `mock::reset` installs on its thread.
        struct MockImports;

        impl Host for MockImports {
            $( fn $name(&mut self, $($arg: $ty),*) -> $ret { crate::mock::$name($($arg),*) } )*
        }
    };
}

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

/// Makes the `mock` fake host answer this thread's imports from now on, when no instance's host
/// does (`mock::reset` calls it: a test's first step).
pub(crate) fn install_mock() {
    // A zero-sized host: leaking it allocates nothing.
    let mock: &'static mut MockImports = std::boxed::Box::leak(std::boxed::Box::new(MockImports));
    let ptr: NonNull<dyn Host> = NonNull::from(mock as &mut dyn Host);
    CURRENT.with(|c| {
        if c.get().is_none() {
            c.set(Some(ptr));
        }
    });
}

host_imports! {
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
    /// `burst_area`: `len` bytes at address `ptr`, owned by the [`Instance`] for its life.
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
}

std::thread_local! {
    static CURRENT: Cell<Option<NonNull<dyn Host>>> = const { Cell::new(None) };
}

/// Runs `f` with `host` answering this thread's imports, then restores what answered before (calls
/// nest: an instance's init may run while another's burst is not in progress, never inside it).
fn with_host<R>(host: &mut dyn Host, f: impl FnOnce() -> R) -> R {
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

/// A native instance of policy `P`: what a module instance is to a WebAssembly build (the policy,
/// its burst area, the SDK's per-instance state), called with the host that serves it.
pub struct Instance<P: Policy> {
    slot: Slot<P>,
    /// The burst area's bytes, from the first 64-byte aligned address of this buffer (so that the
    /// area is aligned as the export's static is).
    area: Vec<u8>,
    registered: Option<area::Registered>,
}

impl<P: Policy> Instance<P> {
    /// The area: `P::AREA.bytes()` bytes, 64-byte aligned.
    fn area_mut(&mut self) -> &mut [u8] {
        let at = self.area.as_ptr().align_offset(64).min(63);
        &mut self.area[at..at + P::AREA.bytes()]
    }
}

impl<P: Policy> core::fmt::Debug for Instance<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Instance").field("area_bytes", &P::AREA.bytes()).finish_non_exhaustive()
    }
}

impl<P: Policy> Default for Instance<P> {
    fn default() -> Self {
        Instance { slot: Slot::new(), area: std::vec![0; P::AREA.bytes() + 63], registered: None }
    }
}

/// A native instance of any policy, as the host holds it.
pub trait NativePolicy: Send {
    /// `wasmdp_init(port, instance)`.
    fn init(&mut self, host: &mut dyn Host, port: u32, instance: u32) -> i32;
    /// `wasmdp_on_burst(port, burst_len)`.
    fn on_burst(&mut self, host: &mut dyn Host, port: u32, burst_len: u32) -> i32;
    /// `wasmdp_tick(now_ns)`.
    fn tick(&mut self, host: &mut dyn Host, now_ns: u64);
    /// The bytes its burst area was registered in (`burst_area` with their address): what the host
    /// fills before `on_burst` and reads after it, through this borrow rather than the address.
    fn area(&mut self) -> &mut [u8];
}

impl<P: Policy + Send> NativePolicy for Instance<P> {
    fn init(&mut self, host: &mut dyn Host, port: u32, instance: u32) -> i32 {
        let area = self.area_mut();
        let raw = (area.as_mut_ptr(), area.len());
        let slot = &self.slot;
        let (rc, registered) = with_host(host, || {
            let rc = slot.init(port as i32, instance as i32, raw);
            (rc, area::registry::get())
        });
        self.registered = registered;
        area::registry::set(None);
        rc
    }

    fn on_burst(&mut self, host: &mut dyn Host, port: u32, burst_len: u32) -> i32 {
        area::registry::set(self.registered);
        let slot = &self.slot;
        let rc = with_host(host, || slot.on_burst(port as i32, burst_len as i32));
        area::registry::set(None);
        rc
    }

    fn tick(&mut self, host: &mut dyn Host, now_ns: u64) {
        let slot = &self.slot;
        with_host(host, || slot.tick(now_ns as i64));
    }

    fn area(&mut self) -> &mut [u8] {
        self.area_mut()
    }
}

#[cfg(test)]
mod tests {
    use crate::{mock, sys, Error};

    #[test]
    fn with_no_host_installed_every_import_fails_rather_than_answering_from_a_fake() {
        // A thread of its own: nothing installed (no instance, no `mock::reset`).
        std::thread::spawn(|| {
            assert_eq!(sys::burst_len(), Err(Error::NoBurst));
            assert_eq!(sys::counter_register("c"), Err(Error::NoBurst));
            let mut out = [0u8; 8];
            assert_eq!(sys::param_get("k", &mut out), Err(Error::NoBurst));
            // The fake host's state is not touched: a test that installs it afterwards starts clean.
            mock::reset();
            mock::set_param("k", "v");
            assert_eq!(sys::param_get("k", &mut out), Ok(1));
        })
        .join()
        .unwrap();
    }
}
