//! The entry points: the [`Policy`] trait, [`Refusal`], and what [`export_policy!`](crate::export_policy)
//! expands to.

use core::fmt;

use crate::{AreaSpec, Burst, Error, Params, StackStr};

/// A per-port policy. [`export_policy!`](crate::export_policy) turns a type implementing it into a
/// plugin module: `init` runs in `wasmdp_init`, `on_burst` in `wasmdp_on_burst`, `tick` in
/// `wasmdp_tick`.
pub trait Policy: Sized + 'static {
    /// The burst area the host fills before each `on_burst` (ABI 1.1): none (the default; packets
    /// only through host calls, as in 1.0), the header alone, or windows of the packets' first bytes.
    /// [`export_policy!`](crate::export_policy) reserves the memory and registers it before `init`.
    const AREA: AreaSpec = AreaSpec::None;

    /// Reads the parameters and builds the policy for `port` (its index in the config's `ports:`).
    /// Register counters here. An `Err` refuses the configuration: its reason is logged at level error
    /// and the host does not start the port with this plugin.
    fn init(port: u32, params: &Params) -> Result<Self, Refusal>;

    /// Decides for one burst. `Err` is a plugin failure: the host applies the port's failure policy
    /// to the burst.
    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error>;

    /// Called periodically (about every `tick_ms`) with the host's monotonic clock.
    fn tick(&mut self, _now_ns: u64) {}
}

/// Capacity of a refusal's reason in bytes.
pub const REASON_CAP: usize = 120;

/// Why [`Policy::init`] refuses the configuration: a short reason (at most [`REASON_CAP`] bytes, kept
/// inline: no allocator) that the host logs. Make one with [`Refusal::new`], the
/// [`refuse!`](crate::refuse) macro (formatted), or `?` on an [`Error`] or a typed
/// [`Params`] getter.
#[derive(Clone, Copy)]
pub struct Refusal {
    reason: StackStr<REASON_CAP>,
}

impl Refusal {
    /// A refusal with this reason.
    pub fn new(reason: &str) -> Self {
        let mut r = StackStr::new();
        r.push_str(reason);
        Refusal { reason: r }
    }

    /// A refusal with a formatted reason (what [`refuse!`](crate::refuse) calls).
    pub fn from_args(args: fmt::Arguments<'_>) -> Self {
        let mut r = StackStr::new();
        // Writing to a StackStr never fails; a failing Display impl just ends the reason early.
        let _ = fmt::write(&mut r, args);
        Refusal { reason: r }
    }

    /// "param `key`: `value` is not `what`" (no formatting machinery).
    pub fn param(key: &str, value: &str, what: &str) -> Self {
        let mut r = StackStr::new();
        r.push_str("param `").push_str(key).push_str("`: `").push_str(value).push_str("` is not ").push_str(what);
        Refusal { reason: r }
    }

    /// "param `key` missing".
    pub fn missing(key: &str) -> Self {
        let mut r = StackStr::new();
        r.push_str("param `").push_str(key).push_str("` missing");
        Refusal { reason: r }
    }

    /// The reason.
    pub fn reason(&self) -> &str {
        self.reason.as_str()
    }
}

impl From<Error> for Refusal {
    fn from(e: Error) -> Self {
        let mut r = StackStr::new();
        r.push_str("host call failed: ").push_str(e.as_str());
        if let Error::Other(code) = e {
            r.push_str(" ").push_i64(code.into());
        }
        Refusal { reason: r }
    }
}

impl From<&str> for Refusal {
    fn from(reason: &str) -> Self {
        Refusal::new(reason)
    }
}

impl fmt::Debug for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Refusal").field(&self.reason()).finish()
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason())
    }
}

/// Makes a [`Refusal`] with a formatted reason: `return Err(refuse!("bad vlan {}", v))`.
#[macro_export]
macro_rules! refuse {
    ($($arg:tt)+) => { $crate::Refusal::from_args(::core::format_args!($($arg)+)) };
}

/// Return codes of the generated exports besides 0 (success), and the error codes `wasmdp_on_burst`
/// passes on from [`Policy::on_burst`].
pub mod status {
    /// `wasmdp_init`: the policy refused the configuration ([`Policy::init`](crate::Policy::init) returned `Err`).
    pub const REFUSED: i32 = 1;
    /// `wasmdp_init` / `wasmdp_on_burst`: an earlier call into this instance trapped in the middle (or a
    /// call re-entered): the instance is not used any more.
    pub const POISONED: i32 = -1000;
    /// `wasmdp_on_burst`: no policy (init was not called, or refused).
    pub const NO_POLICY: i32 = -1001;
    /// `wasmdp_on_burst`: `on_burst` returned `Err(`[`Error::Other`](crate::Error::Other)`(0))` (0 would mean success).
    pub const FAILED: i32 = -1;
}

/// What [`export_policy!`](crate::export_policy) expands to. Not a stable API.
#[doc(hidden)]
pub mod __private {
    use core::cell::UnsafeCell;
    use core::sync::atomic::{AtomicBool, Ordering};

    use super::status;
    use crate::{log, Burst, Params, Policy};

    /// The memory of a burst area: a static of the plugin, aligned for the descriptors.
    #[repr(C, align(64))]
    pub struct AreaBuf<const N: usize>(UnsafeCell<[u8; N]>);

    // SAFETY: as for `Slot`: one thread on wasm32; on native targets the buffer is never used (the
    // mock host gives each test thread its own, see `Slot::init`).
    unsafe impl<const N: usize> Sync for AreaBuf<N> {}

    impl<const N: usize> AreaBuf<N> {
        /// Zeroed.
        #[allow(clippy::new_without_default)]
        pub const fn new() -> Self {
            AreaBuf(UnsafeCell::new([0; N]))
        }

        /// Its address and size.
        pub fn raw(&self) -> (*mut u8, usize) {
            (self.0.get().cast(), N)
        }
    }

    pub use wasmdp_abi::ABI_VERSION;

    /// The policy of this module instance: a static with interior mutability, and a flag that makes
    /// every access exclusive. A trap in the middle of a call leaves the flag set (nothing unwinds), so
    /// a trapped instance refuses every later call instead of touching a half-updated policy.
    pub struct Slot<P> {
        busy: AtomicBool,
        policy: UnsafeCell<Option<P>>,
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "atomics"))]
    compile_error!("wasmdp plugins are single-threaded: build without the `atomics` target feature");

    // SAFETY: wasm32 plugins built by this SDK have a single thread (no `atomics`, checked above): the
    // host calls one export of an instance at a time, so there is no concurrent access at all. Every
    // access goes through `Slot::enter`, which also refuses re-entrance.
    #[cfg(target_arch = "wasm32")]
    unsafe impl<P> Sync for Slot<P> {}

    // SAFETY: on native targets (tests) exports may be called from several threads: `Slot::enter`
    // grants access to one caller at a time (acquire/release on `busy`), and the policy moving between
    // threads that way needs `P: Send`.
    #[cfg(not(target_arch = "wasm32"))]
    unsafe impl<P: Send> Sync for Slot<P> {}

    /// Clears `busy` when a call returns normally.
    struct Entered<'a>(&'a AtomicBool);

    impl Drop for Entered<'_> {
        fn drop(&mut self) {
            self.0.store(false, Ordering::Release);
        }
    }

    impl<P: Policy> Slot<P> {
        /// An empty slot.
        #[allow(clippy::new_without_default)]
        pub const fn new() -> Self {
            Slot { busy: AtomicBool::new(false), policy: UnsafeCell::new(None) }
        }

        /// Runs `f` with exclusive access to the policy, or returns `None` when the slot is busy.
        pub(crate) fn enter<R>(&self, f: impl FnOnce(&mut Option<P>) -> R) -> Option<R> {
            if self.busy.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
                return None;
            }
            let _entered = Entered(&self.busy);
            // SAFETY: `busy` was false and is now ours until `_entered` drops: no other reference to the
            // policy exists (all go through `enter`, and `f` cannot reach this slot again without
            // finding it busy).
            let policy = unsafe { &mut *self.policy.get() };
            Some(f(policy))
        }

        /// `wasmdp_init(port, instance)`.
        pub fn init(&self, port: i32, _instance: i32, area: (*mut u8, usize)) -> i32 {
            let r = self.enter(|slot| {
                *slot = None;
                if let Err(e) = Self::register_area(area) {
                    log::error("the burst area was refused");
                    return e.code();
                }
                match P::init(port as u32, &Params::host()) {
                    Ok(p) => {
                        *slot = Some(p);
                        0
                    }
                    Err(refusal) => {
                        log::error(refusal.reason());
                        status::REFUSED
                    }
                }
            });
            r.unwrap_or(status::POISONED)
        }

        /// `wasmdp_on_burst(port, burst_len)`.
        /// Registers `P::AREA` in `area` (the export's static) on wasm32; on native targets in the
        /// native instance's buffer, or (tests, passing null) a buffer of the thread's own.
        fn register_area(area: (*mut u8, usize)) -> Result<(), crate::Error> {
            #[cfg(not(target_arch = "wasm32"))]
            let area = if area.0.is_null() {
                let buf = std::vec![0u8; P::AREA.bytes()].leak();
                (buf.as_mut_ptr(), buf.len())
            } else {
                area
            };
            // SAFETY: `area` is the export's static, used for nothing else and alive for the program
            // (wasm32), a native instance's own buffer, alive as long as it (`crate::native`), or a
            // leaked buffer nothing else references (native tests).
            unsafe { crate::area::register(area.0, area.1, P::AREA) }
        }

        pub fn on_burst(&self, _port: i32, burst_len: i32) -> i32 {
            let r = self.enter(|slot| match slot {
                None => status::NO_POLICY,
                Some(p) => match p.on_burst(&mut Burst::__from_host_as(burst_len.max(0) as u32, P::AREA)) {
                    Ok(()) => crate::verdict::take().map_or(0, wasmdp_abi::verdict::run_engine),
                    Err(e) => match (crate::verdict::take(), e.code()).1 {
                        0 => status::FAILED,
                        code => code,
                    },
                },
            });
            r.unwrap_or(status::POISONED)
        }

        /// `wasmdp_tick(now_ns)`.
        pub fn tick(&self, now_ns: i64) {
            self.enter(|slot| {
                if let Some(p) = slot {
                    p.tick(now_ns.max(0) as u64);
                }
            });
        }
    }
}

/// Exports a [`Policy`] as the plugin's entry points: `wasmdp_abi_version`, `wasmdp_init`,
/// `wasmdp_on_burst` and `wasmdp_tick` (ABI v1, see `docs/ABI.md`). Use it once, at the crate root of
/// a `cdylib`:
///
/// ```
/// # use wasmdp_sdk::{Burst, Error, Params, Policy, Refusal};
/// # struct MyPolicy;
/// # impl Policy for MyPolicy {
/// #     fn init(_: u32, _: &Params) -> Result<Self, Refusal> { Ok(MyPolicy) }
/// #     fn on_burst(&mut self, _: &mut Burst) -> Result<(), Error> { Ok(()) }
/// # }
/// wasmdp_sdk::export_policy!(MyPolicy);
/// ```
///
/// * A static for the burst area [`Policy::AREA`] asks for (none by default).
/// * `wasmdp_abi_version()` returns [`wasmdp_abi::ABI_VERSION`].
/// * `wasmdp_init(port, instance)` registers the burst area, calls [`Policy::init`] and keeps the policy in a static; a
///   [`Refusal`] is logged at level error and returns [`status::REFUSED`].
/// * `wasmdp_on_burst(port, n)` calls [`Policy::on_burst`] with a burst of `n` packets: 0 for `Ok`
///   (or the engine verdict [`Burst::pass_with`](crate::Burst::pass_with) recorded), the error's
///   (negative) code for `Err`, [`status::NO_POLICY`] without a policy.
/// * `wasmdp_tick(now_ns)` calls [`Policy::tick`].
///
/// After a trap inside any of them, the instance answers [`status::POISONED`] (see
/// [`status`]). On targets other than `wasm32` the macro expands to nothing: a native build runs
/// the policy through `wasmdp_sdk::native::Instance` instead.
#[macro_export]
macro_rules! export_policy {
    ($policy:ty) => {
        // Exports exist in the WebAssembly build only: a native build (`wasmdp_sdk::native`) is
        // linked into a host beside other policies, whose symbols would collide.
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            static WASMDP_POLICY: $crate::__private::Slot<$policy> = $crate::__private::Slot::new();
            static WASMDP_AREA: $crate::__private::AreaBuf<{ <$policy as $crate::Policy>::AREA.bytes() }> =
                $crate::__private::AreaBuf::new();

            #[unsafe(no_mangle)]
            pub extern "C" fn wasmdp_abi_version() -> i32 {
                $crate::__private::ABI_VERSION as i32
            }

            #[unsafe(no_mangle)]
            pub extern "C" fn wasmdp_init(port: i32, instance: i32) -> i32 {
                WASMDP_POLICY.init(port, instance, WASMDP_AREA.raw())
            }

            #[unsafe(no_mangle)]
            pub extern "C" fn wasmdp_on_burst(port: i32, burst_len: i32) -> i32 {
                WASMDP_POLICY.on_burst(port, burst_len)
            }

            #[unsafe(no_mangle)]
            pub extern "C" fn wasmdp_tick(now_ns: i64) {
                WASMDP_POLICY.tick(now_ns)
            }
        };
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{mock, Counter, Engine};
    use std::string::ToString;

    struct Test {
        engine: Engine,
        bursts: Counter,
        ticks: u64,
    }

    impl Policy for Test {
        fn init(_port: u32, params: &Params) -> Result<Self, Refusal> {
            let engine = params.get_engine("engine")?.ok_or_else(|| Refusal::missing("engine"))?;
            Ok(Test { engine, bursts: Counter::register("bursts")?, ticks: 0 })
        }

        fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
            self.bursts.incr();
            if burst.len() == 2 {
                return Err(Error::Other(0));
            }
            burst.run_engine(self.engine, ..)
        }

        fn tick(&mut self, now_ns: u64) {
            self.ticks = now_ns;
        }
    }

    #[test]
    fn slot_lifecycle() {
        mock::reset();
        let slot = __private::Slot::<Test>::new();
        assert_eq!(slot.on_burst(0, 1), status::NO_POLICY);
        assert_eq!(slot.init(0, 0, (core::ptr::null_mut(), 0)), status::REFUSED);
        assert_eq!(mock::logs(), [(wasmdp_abi::level::ERROR, "param `engine` missing".to_string())]);
        mock::set_param("engine", "nope");
        assert_eq!(slot.init(0, 0, (core::ptr::null_mut(), 0)), status::REFUSED);
        assert_eq!(mock::logs()[1].1, std::format!("param `engine`: `nope` is not {}", Engine::NAMES));
        mock::set_param("engine", "drop");
        assert_eq!(slot.init(3, 0, (core::ptr::null_mut(), 0)), 0);
        mock::begin_burst(&[&[0; 60]]);
        assert_eq!(slot.on_burst(3, 1), 0);
        assert!(mock::end_burst()[0].dropped);
        mock::begin_burst(&[&[0; 60], &[0; 60]]);
        assert_eq!(slot.on_burst(3, 2), status::FAILED);
        // The burst length comes from the host's argument: one past the real burst is refused.
        assert_eq!(slot.on_burst(3, 3), Error::BadIndex.code());
        mock::end_burst();
        slot.tick(77);
        assert_eq!(mock::counter("bursts"), Some(3));
        assert_eq!(slot.enter(|p| p.as_ref().map(|p| p.ticks)), Some(Some(77)));
        // Re-entrance (or a call after a trap, which leaves the slot busy) is refused.
        assert_eq!(slot.enter(|_| slot.on_burst(3, 0)), Some(status::POISONED));
        assert_eq!(slot.enter(|_| slot.init(3, 0, (core::ptr::null_mut(), 0))), Some(status::POISONED));
    }

    #[test]
    fn refusals() {
        assert_eq!(Refusal::from(Error::NotFound).reason(), "host call failed: not found");
        assert_eq!(Refusal::from(Error::Other(-77)).reason(), "host call failed: unknown error -77");
        assert_eq!(crate::refuse!("vlan {} > {}", 5000, 4095).reason(), "vlan 5000 > 4095");
        assert_eq!(Refusal::new(&"x".repeat(500)).reason().len(), REASON_CAP);
        assert_eq!(std::format!("{:?}", Refusal::from("r")), "Refusal(\"r\")");
    }
}
