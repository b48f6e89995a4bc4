//! Native packet kernels: MAC swap and memcpy, in scalar, SSE (SSSE3), AVX2 and AVX-512 variants.
//!
//! Every variant implements [`Kernel`]; the scalar one is the reference the others are tested
//! against byte for byte. The variant is chosen once at start ([`resolve`]) and code that uses a
//! kernel in a per-packet loop is instantiated per variant ([`PerSimd`], [`per_simd!`](crate::per_simd)), so that the
//! hot loop makes direct calls, never an indirect call per packet.

mod scalar;
#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(test)]
mod tests;

pub use scalar::Scalar;
#[cfg(not(target_arch = "x86_64"))]
pub use scalar::{Scalar as Sse, Scalar as Avx2, Scalar as Avx512};
#[cfg(target_arch = "x86_64")]
pub use x86::{Avx2, Avx512, Sse};

use std::fmt;

/// A kernel variant, as named in the configuration: a description, not a permission to run it
/// (that is [`Simd`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// Portable Rust, the reference.
    Scalar,
    /// SSE up to SSSE3 (`pshufb`), 16-byte vectors.
    Sse,
    /// AVX2, 32-byte vectors.
    Avx2,
    /// AVX-512 (F + BW), 64-byte vectors; AVX2 as well.
    Avx512,
}

impl Variant {
    /// All variants, slowest first.
    pub const ALL: [Variant; 4] = [Variant::Scalar, Variant::Sse, Variant::Avx2, Variant::Avx512];

    /// The config and display name.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Scalar => "scalar",
            Variant::Sse => "sse",
            Variant::Avx2 => "avx2",
            Variant::Avx512 => "avx512",
        }
    }

    /// Parses a config name (`auto` is handled by [`SimdChoice`]).
    pub fn from_name(s: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == s)
    }

    /// Whether this CPU can run the variant.
    pub fn is_supported(self) -> bool {
        match self {
            Variant::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Variant::Sse => std::is_x86_feature_detected!("ssse3"),
            #[cfg(target_arch = "x86_64")]
            Variant::Avx2 => std::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            // AVX2 too: code for this variant may use AVX2 (the tunnel engines' compares do).
            Variant::Avx512 => {
                std::is_x86_feature_detected!("avx512f")
                    && std::is_x86_feature_detected!("avx512bw")
                    && std::is_x86_feature_detected!("avx2")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A kernel variant this CPU supports. The field is private: a `Simd` exists only once the CPU was
/// asked, so safe code holding one may run the variant's instructions ([`PerSimd::get`],
/// [`copy_dyn`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Simd(Variant);

impl Simd {
    /// The portable reference, supported everywhere.
    pub const fn scalar() -> Simd {
        Simd(Variant::Scalar)
    }

    /// `v`, if this CPU supports it.
    pub fn new(v: Variant) -> Option<Simd> {
        v.is_supported().then_some(Simd(v))
    }

    /// The variants this CPU supports, slowest first.
    pub fn supported() -> Vec<Simd> {
        Variant::ALL.into_iter().filter_map(Simd::new).collect()
    }

    /// The widest variant this CPU supports.
    pub fn detect() -> Simd {
        Variant::ALL.into_iter().rev().find_map(Simd::new).unwrap_or(Simd::scalar())
    }

    /// Which variant it is.
    pub fn variant(self) -> Variant {
        self.0
    }

    /// The config and display name.
    pub fn name(self) -> &'static str {
        self.0.name()
    }
}

impl fmt::Display for Simd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The `simd:` setting: `auto` or one variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SimdChoice {
    /// The widest variant the CPU supports.
    #[default]
    Auto,
    /// This variant, or an error if the CPU lacks it.
    Fixed(Variant),
}

impl SimdChoice {
    /// Parses `auto|scalar|sse|avx2|avx512`.
    pub fn from_name(s: &str) -> Option<SimdChoice> {
        if s == "auto" {
            return Some(SimdChoice::Auto);
        }
        Variant::from_name(s).map(SimdChoice::Fixed)
    }

    /// Accepted names, for error messages.
    pub const NAMES: &'static str = "auto, scalar, sse, avx2, avx512";
}

/// Resolves the setting against this CPU.
pub fn resolve(choice: SimdChoice) -> Result<Simd, String> {
    match choice {
        SimdChoice::Auto => Ok(Simd::detect()),
        SimdChoice::Fixed(v) => Simd::new(v).ok_or_else(|| {
            format!(
                "simd: `{v}` is not supported by this CPU; supported here: auto, {}",
                Simd::supported().iter().map(|s| s.name()).collect::<Vec<_>>().join(", ")
            )
        }),
    }
}

/// One kernel variant. Implementations are zero-sized marker types.
pub trait Kernel: 'static {
    /// Which variant this is.
    const SIMD: Variant;

    /// Swaps destination and source MAC (bytes 0..6 and 6..12) of four frames: loads all four
    /// headers, then shuffles and stores.
    ///
    /// # Safety
    /// Each pointer is valid for reads and writes of 16 bytes, the four ranges do not overlap, and
    /// the CPU supports the variant. Bytes 12..16 are written back unchanged.
    unsafe fn macswap4(frames: [*mut u8; 4]);

    /// Swaps destination and source MAC of one frame.
    ///
    /// # Safety
    /// As for [`Kernel::macswap4`], for one pointer.
    unsafe fn macswap1(frame: *mut u8);

    /// Copies `n` bytes from `src` to `dst`.
    ///
    /// # Safety
    /// `src` valid for reads of `n` bytes, `dst` for writes of `n` bytes, no overlap, and the CPU
    /// supports the variant.
    unsafe fn memcpy(dst: *mut u8, src: *const u8, n: usize);

    /// Runs `f` inside a function compiled for the variant's instructions. The kernels are
    /// `#[target_feature]` functions, which the compiler inlines only into code compiled with the
    /// same features: a loop run through `scope` has them inlined (no call, no frame pointers
    /// spilled to the stack per group of packets), a loop outside calls them out of line.
    ///
    /// # Safety
    /// The CPU supports the variant.
    unsafe fn scope<R>(f: impl FnOnce() -> R) -> R;
}

/// One value per kernel variant: typically a function instantiated for each. The values are reached
/// only through [`PerSimd::get`], with a [`Simd`] that proves the CPU supports the variant.
#[derive(Debug, Clone, Copy)]
pub struct PerSimd<T> {
    scalar: T,
    sse: T,
    avx2: T,
    avx512: T,
}

impl<T: Copy> PerSimd<T> {
    /// The values for [`Variant::Scalar`], `Sse`, `Avx2` and `Avx512` (see [`per_simd!`](crate::per_simd)).
    pub const fn new(scalar: T, sse: T, avx2: T, avx512: T) -> PerSimd<T> {
        PerSimd { scalar, sse, avx2, avx512 }
    }

    /// The value for `simd`.
    #[inline(always)]
    pub fn get(&self, simd: Simd) -> T {
        match simd.variant() {
            Variant::Scalar => self.scalar,
            Variant::Sse => self.sse,
            Variant::Avx2 => self.avx2,
            Variant::Avx512 => self.avx512,
        }
    }
}

/// `per_simd!(f)` is a [`PerSimd`] of `f::<Scalar>`, `f::<Sse>`, `f::<Avx2>`, `f::<Avx512>`.
#[macro_export]
macro_rules! per_simd {
    ($f:ident) => {
        $crate::simd::PerSimd::new(
            $f::<$crate::simd::Scalar>,
            $f::<$crate::simd::Sse>,
            $f::<$crate::simd::Avx2>,
            $f::<$crate::simd::Avx512>,
        )
    };
}

/// Copies `src` into the front of `dst` with the variant `K`.
///
/// Panics if `dst` is shorter than `src` (callers check lengths first).
///
/// # Safety
/// The CPU supports `K::SIMD`: the caller holds a [`Simd`] for it (code instantiated per variant and
/// reached through [`PerSimd::get`] does).
#[inline(always)]
pub unsafe fn copy<K: Kernel>(dst: &mut [u8], src: &[u8]) {
    assert!(dst.len() >= src.len(), "copy: destination shorter than source");
    // SAFETY: lengths checked above; `&mut`/`&` cannot overlap; CPU support is the caller's contract.
    unsafe { K::memcpy(dst.as_mut_ptr(), src.as_ptr(), src.len()) }
}

/// [`copy`] with the variant chosen at run time: for callers outside a per-packet loop (host
/// functions called by plugins), where one dispatch per call is fine.
pub fn copy_dyn(simd: Simd, dst: &mut [u8], src: &[u8]) {
    // SAFETY: `simd` proves the CPU supports its variant.
    unsafe {
        match simd.variant() {
            Variant::Scalar => copy::<Scalar>(dst, src),
            Variant::Sse => copy::<Sse>(dst, src),
            Variant::Avx2 => copy::<Avx2>(dst, src),
            Variant::Avx512 => copy::<Avx512>(dst, src),
        }
    }
}

/// `simd_scoped!(simd => expr)` evaluates `expr` compiled for `simd`'s instructions: what is
/// inlined into it (fixed-size copies in particular, which LLVM lowers to the widest vectors the
/// function may use) takes the variant's vectors, where code compiled for the baseline takes
/// 16-byte ones. Each variant gets its own out-of-line instance (a function with `expr` inlined
/// into [`Kernel::scope`]: `expr` appears once per variant, so that each copy has one caller and
/// is inlined; one closure for all four was left out of line, compiled for the baseline).
#[macro_export]
macro_rules! simd_scoped {
    ($simd:expr => $run:expr) => {{
        use $crate::simd::{Kernel, Variant};
        // Each closure is made outside the `unsafe` blocks, so that `$run` gets no leave to be unsafe.
        match $simd.variant() {
            Variant::Scalar => $run,
            Variant::Sse => {
                let run = || $run;
                // SAFETY: a `Simd` proves the CPU supports its variant, which is what `scope` requires.
                unsafe { $crate::simd::Sse::scope(run) }
            }
            Variant::Avx2 => {
                let run = || $run;
                // SAFETY: as above.
                unsafe { $crate::simd::Avx2::scope(run) }
            }
            Variant::Avx512 => {
                let run = || $run;
                // SAFETY: as above.
                unsafe { $crate::simd::Avx512::scope(run) }
            }
        }
    }};
}

/// Hints the CPU to bring the cache line at `p` into L1. Never faults, whatever `p` is.
#[inline(always)]
pub fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch is a hint that never faults, even on invalid addresses; SSE is baseline on x86-64.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast())
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
