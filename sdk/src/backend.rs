//! The host a native build's imports go to: the [`Host`] trait (one method per import, made from
//! the ABI's table), the host installed on this thread, and the dispatching function of each import
//! that [`sys`](crate::sys) calls on every target but `wasm32`.
//!
//! A leaf: it knows no policy, area or fake host. [`native`](crate::native) installs an instance's
//! host for the duration of a call ([`with_host`]); the test mock (feature `mock`) installs itself
//! as the fallback ([`install_fallback`]). With neither, every import answers `NO_BURST` (the
//! SDK's [`Error::NoBurst`](crate::Error::NoBurst)), so a native build called outside an instance
//! fails loudly rather than reading and writing a fake host's state.

use core::cell::Cell;
use core::ptr::NonNull;

/// The [`Host`] trait and one dispatching function per import.
macro_rules! declare_host {
    ($( $(#[doc = $doc:literal])* [$since:literal $when:ident] $konst:ident $name:ident
        ($($arg:ident: $wty:ident $(=> $nty:ty)?),*) -> $ret:tt; )*) => {
        /// The host's side of every import, for a native build: one method per entry of the ABI's
        /// table ([`wasmdp_abi::for_each_import!`]). Numbers and codes are the ABI's
        /// (`docs/ABI.md`); slices stand for the pointers into the plugin's memory.
        pub trait Host {
            // (The ABI's imports set the arity: `map_declare_ttl` takes seven.)
            $(
                #[doc = concat!("`", stringify!($name), "`:")]
                $(#[doc = $doc])*
                #[allow(clippy::too_many_arguments)]
                fn $name(&mut self, $($arg: wasmdp_abi::native_ty!($wty $(, $nty)?)),*) -> $ret;
            )*
        }

        $(
            #[inline]
            #[allow(clippy::too_many_arguments)]
            pub(crate) fn $name($($arg: wasmdp_abi::native_ty!($wty $(, $nty)?)),*) -> $ret {
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

wasmdp_abi::for_each_import!(declare_host);

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
