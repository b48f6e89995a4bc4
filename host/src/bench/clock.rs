//! The CPU's time-stamp counter, for figures in cycles.

use std::time::{Duration, Instant};

/// Time-stamp counter ticks per nanosecond, measured against the OS clock.
#[derive(Debug, Clone, Copy)]
pub struct TscRate(pub f64);

/// Reads the time-stamp counter (0 where there is none).
#[inline(always)]
pub fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc has no preconditions on x86-64.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

impl TscRate {
    /// Measures the rate over 50 ms; None where the CPU has no usable counter.
    pub fn measure() -> Option<TscRate> {
        if !cfg!(target_arch = "x86_64") {
            return None;
        }
        let (t0, c0) = (Instant::now(), ticks());
        std::thread::sleep(Duration::from_millis(50));
        let (ns, c) = (t0.elapsed().as_nanos() as f64, ticks() - c0);
        (c > 0).then(|| TscRate(c as f64 / ns))
    }
}
