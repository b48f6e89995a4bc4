//! Logging through the host (`log` import): the host's tracing, tagged with the plugin and the port.
//!
//! The functions take a `&str` and cost no formatting code. The macros [`error!`](crate::error),
//! [`warn!`](crate::warn), [`info!`](crate::info) and [`debug!`](crate::debug) take `format!`-style
//! arguments and format into a [`StackStr<256>`](crate::StackStr) on the stack (longer messages are
//! cut); they bring in `core::fmt`, a few kilobytes of code.

use core::fmt;

use wasmdp_abi::level;

use crate::{sys, StackStr};

/// Size of the buffer the macros format into.
pub const MSG_CAP: usize = 256;

/// A log level ([`wasmdp_abi::level`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u32)]
pub enum Level {
    /// Error.
    Error = level::ERROR,
    /// Warning.
    Warn = level::WARN,
    /// Information.
    Info = level::INFO,
    /// Debug.
    Debug = level::DEBUG,
}

/// Logs `msg` at `level`.
#[inline]
pub fn log(level: Level, msg: &str) {
    sys::log(level as u32, msg);
}

/// Logs `msg` at level error.
#[inline]
pub fn error(msg: &str) {
    log(Level::Error, msg);
}

/// Logs `msg` at level warning.
#[inline]
pub fn warn(msg: &str) {
    log(Level::Warn, msg);
}

/// Logs `msg` at level information.
#[inline]
pub fn info(msg: &str) {
    log(Level::Info, msg);
}

/// Logs `msg` at level debug.
#[inline]
pub fn debug(msg: &str) {
    log(Level::Debug, msg);
}

/// Formats `args` into a [`MSG_CAP`]-byte stack buffer and logs it at `level` (what the macros call).
pub fn log_fmt(level: Level, args: fmt::Arguments<'_>) {
    let mut msg = StackStr::<MSG_CAP>::new();
    // Writing to a StackStr never fails; a Display impl that fails just ends the message early.
    let _ = fmt::write(&mut msg, args);
    log(level, msg.as_str());
}

/// Logs a formatted message at level error: `wasmdp_sdk::error!("bad value {}", v)`.
#[macro_export]
macro_rules! error {
    ($($arg:tt)+) => { $crate::log::log_fmt($crate::log::Level::Error, ::core::format_args!($($arg)+)) };
}

/// Logs a formatted message at level warning.
#[macro_export]
macro_rules! warn {
    ($($arg:tt)+) => { $crate::log::log_fmt($crate::log::Level::Warn, ::core::format_args!($($arg)+)) };
}

/// Logs a formatted message at level information.
#[macro_export]
macro_rules! info {
    ($($arg:tt)+) => { $crate::log::log_fmt($crate::log::Level::Info, ::core::format_args!($($arg)+)) };
}

/// Logs a formatted message at level debug.
#[macro_export]
macro_rules! debug {
    ($($arg:tt)+) => { $crate::log::log_fmt($crate::log::Level::Debug, ::core::format_args!($($arg)+)) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock;
    use std::string::ToString;

    #[test]
    fn levels_and_macros() {
        mock::reset();
        error("e");
        warn("w");
        info("i");
        debug("d");
        crate::info!("x={} y={:?}", 1, "two");
        crate::error!("{}", "é".repeat(200));
        let logs = mock::logs();
        assert_eq!(
            &logs[..4],
            &[(1, "e".to_string()), (2, "w".to_string()), (3, "i".to_string()), (4, "d".to_string())]
        );
        assert_eq!(logs[4], (level::INFO, "x=1 y=\"two\"".to_string()));
        assert_eq!(logs[5].1.len(), MSG_CAP);
    }
}
