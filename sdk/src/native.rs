//! Native builds of a policy, as Envoy's NullVM runs proxy-wasm filters: on every target but
//! `wasm32`, the [`sys`](crate::sys) wrappers call the [`Host`] installed on this thread for the
//! duration of a call (see [`Instance`]; the dispatch is `backend`'s), or the `mock` fake host
//! where a test installed it (`mock::reset`, feature `mock`). With neither, every import fails
//! with `NO_BURST` (no burst: the SDK's [`Error::NoBurst`](crate::Error::NoBurst)), so a native
//! build called outside an instance fails loudly rather than reading and writing a fake host's
//! state. The same policy
//! source then runs inside the host process, unsandboxed, with every import answered by the real
//! host: `wasmdp bench` measures a plugin against this build of itself (the wasm tax).
//!
//! A native build is trusted code: the host does not bound its time or memory, and the slices it
//! passes are its own. Only the host's own example policies are built this way.

use std::vec::Vec;

use crate::__private::Slot;
use crate::backend::with_host;
pub use crate::backend::Host;
use crate::{area, Policy};

/// A native instance of policy `P`: what a module instance is to a WebAssembly build (the policy,
/// its burst area, the SDK's per-instance state), called with the host that serves it.
pub struct Instance<P: Policy> {
    slot: Slot<P>,
    /// The burst area's bytes, from the first 64-byte aligned address of this buffer (so that the
    /// area is aligned as the export's static is).
    area: Vec<u8>,
    registered: Option<area::registry::Registered>,
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
