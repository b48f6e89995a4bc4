//! Bounded logging for plugins: a message is cut to [`MAX_LOG_BYTES`] (the host reads no more of the
//! plugin's memory than that), and each instance may write a burst of [`BURST`] lines, refilled at
//! [`PER_SECOND`] lines a second; lines over the rate are counted, and the count is reported with the
//! next line written. The runner's own warnings (traps, error returns) use the same limiter.

use std::time::Instant;

/// Longest message kept, in bytes; the rest is cut and the cut is said.
pub const MAX_LOG_BYTES: usize = 512;
/// Lines an instance may write at once.
pub const BURST: f64 = 20.0;
/// Lines an instance may write per second, sustained.
pub const PER_SECOND: f64 = 10.0;

/// A token bucket with a count of what it refused.
#[derive(Debug)]
pub(crate) struct LogLimit {
    tokens: f64,
    at: Option<Instant>,
    burst: f64,
    rate: f64,
    /// Lines refused since the last one written.
    pub suppressed: u64,
}

impl Default for LogLimit {
    fn default() -> Self {
        LogLimit::new(BURST, PER_SECOND)
    }
}

impl LogLimit {
    /// A bucket of `burst` lines refilled at `rate` per second.
    pub fn new(burst: f64, rate: f64) -> LogLimit {
        LogLimit { tokens: burst, at: None, burst, rate, suppressed: 0 }
    }

    /// Whether a line may be written now; if so, returns how many were suppressed before it.
    pub fn allow(&mut self) -> Option<u64> {
        let now = Instant::now();
        if let Some(at) = self.at {
            self.tokens = (self.tokens + now.duration_since(at).as_secs_f64() * self.rate).min(self.burst);
        }
        self.at = Some(now);
        if self.tokens < 1.0 {
            self.suppressed += 1;
            return None;
        }
        self.tokens -= 1.0;
        Some(std::mem::take(&mut self.suppressed))
    }
}

/// `bytes` as text, cut at [`MAX_LOG_BYTES`] (`total` is the length the plugin passed).
pub(crate) fn message(bytes: &[u8], total: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    if total > bytes.len() {
        format!("{text}... ({} more bytes cut)", total - bytes.len())
    } else {
        text.into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_the_rate() {
        let mut l = LogLimit::new(3.0, 1000.0);
        assert_eq!((l.allow(), l.allow(), l.allow()), (Some(0), Some(0), Some(0)));
        assert_eq!(l.allow(), None);
        assert_eq!(l.suppressed, 1);
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert_eq!(l.allow(), Some(1), "the next line says one was suppressed");
    }

    #[test]
    fn long_messages_are_cut_and_say_so() {
        assert_eq!(message(b"abc", 3), "abc");
        assert_eq!(message(b"abc", 10), "abc... (7 more bytes cut)");
    }
}
