//! [`Counter`]: plugin counters, shown in the host's stats next to the port's.

use crate::{sys, Error};

/// A plugin counter. Register it in [`Policy::init`](crate::Policy::init) (the host accepts
/// registrations only then, at most [`wasmdp_abi::MAX_COUNTERS`] per module) and keep it in the
/// policy; add to it per burst.
///
/// ```no_run
/// use wasmdp_sdk::Counter;
/// let denied = Counter::register("denied").unwrap();
/// denied.add(3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Counter(u32);

impl Counter {
    /// Registers a counter called `name` (`counter_register`).
    pub fn register(name: &str) -> Result<Counter, Error> {
        sys::counter_register(name).map(Counter)
    }

    /// The id the host gave it.
    pub const fn id(self) -> u32 {
        self.0
    }

    /// Adds `n` (capped at `i64::MAX`). A failure cannot happen for a registered counter and is ignored;
    /// see [`Counter::try_add`]. Adding 0 makes no host call (a policy that adds what it counted in a
    /// burst, often nothing, pays a host call only for what it did count).
    #[inline]
    pub fn add(self, n: u64) {
        if n != 0 {
            let _ = self.try_add(n);
        }
    }

    /// Adds 1.
    #[inline]
    pub fn incr(self) {
        self.add(1);
    }

    /// Adds `n` (capped at `i64::MAX`), reporting a failure (`counter_add`).
    #[inline]
    pub fn try_add(self, n: u64) -> Result<(), Error> {
        sys::counter_add(self.0, i64::try_from(n).unwrap_or(i64::MAX))
    }
}

/// A plugin gauge (ABI 1.1): a value set, not added to (a table's fill, a rate), shown in the
/// host's stats next to the counters. Register it in [`Policy::init`](crate::Policy::init).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Gauge(u32);

impl Gauge {
    /// Registers a gauge called `name` (`gauge_register`).
    pub fn register(name: &str) -> Result<Gauge, Error> {
        sys::gauge_register(name).map(Gauge)
    }

    /// Sets it (`gauge_set`); a failure cannot happen for a registered gauge and is ignored.
    #[inline]
    pub fn set(self, value: i64) {
        let _ = sys::gauge_set(self.0, value);
    }
}

/// The host's monotonic clock in nanoseconds (`now_ns`).
#[inline]
pub fn now_ns() -> u64 {
    sys::now_ns()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock;

    #[test]
    fn counters() {
        mock::reset();
        let a = Counter::register("a").unwrap();
        let b = Counter::register("b").unwrap();
        assert_ne!(a, b);
        a.add(2);
        a.incr();
        b.add(u64::MAX);
        assert_eq!(mock::counter("a"), Some(3));
        assert_eq!(mock::counter("b"), Some(i64::MAX));
        assert_eq!(Counter(99).try_add(1), Err(Error::NotFound));
        let g = Gauge::register("fill").unwrap();
        g.set(-7);
        assert_eq!(mock::gauge("fill"), Some(-7));
        mock::with(|h| h.now_ns = 42);
        assert_eq!(now_ns(), 42);
    }

    #[test]
    fn the_mock_draws_a_seeded_sequence_that_repeats_after_reset() {
        mock::reset();
        let a: std::vec::Vec<u64> = (0..4).map(|_| crate::random()).collect();
        assert!(a.windows(2).all(|w| w[0] != w[1]), "{a:x?}");
        mock::reset();
        assert_eq!(crate::random(), a[0], "reset starts the sequence again");
        mock::with(|h| h.random_seed = 7);
        assert!(!a.contains(&crate::random()), "another seed, another sequence");
    }
}
