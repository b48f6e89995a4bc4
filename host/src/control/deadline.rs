//! Writing to a client by a deadline: a client that takes its answer a byte at a time is dropped
//! when the time is up, so it cannot hold a thread of the server.

use std::io::{ErrorKind, Write};
use std::os::unix::net::UnixStream;
use std::time::Instant;

/// Writes `bytes` to `s`, all of them by `deadline` (a client that takes its answer a byte at a time
/// is closed then); false when it did not.
pub fn write_by(s: &mut UnixStream, mut bytes: &[u8], deadline: Instant) -> bool {
    while !bytes.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || s.set_write_timeout(Some(left)).is_err() {
            return false;
        }
        match s.write(bytes) {
            Ok(0) => return false,
            Ok(k) => bytes = &bytes[k..],
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    true
}
