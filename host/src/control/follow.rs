//! Answers that follow the dataplane (`capture`, `events`): after the answer line, the connection
//! carries records as they come, written in chunks, until the request's count is reached, the
//! client closes or shuts down its side, or the dataplane stops. The reader never makes a worker
//! wait: the workers hand records over through a ring, and a client that takes nothing for
//! [`super::TIMEOUT`] is closed.

use super::state::State;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// Bytes of records gathered before a write.
pub const CHUNK: usize = 64 * 1024;
/// How often the reader looks whether the client closed its side.
const LOOK_EVERY: Duration = Duration::from_millis(50);
/// How long the reader sleeps when no record waits.
const IDLE: Duration = Duration::from_millis(2);

/// How following ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// `count` records were written, the client closed its side, or the dataplane stopped: the
    /// client may still be written to (a capture's statistics).
    Done,
    /// The client could not be written to.
    Gone,
}

/// Writes what `next` appends to its buffer (returning how many records it appended; 0: none
/// waits) until `count` records (0: no limit) were written, the client goes or the dataplane stops.
pub fn follow(s: &mut UnixStream, st: &State, count: u64, mut next: impl FnMut(&mut Vec<u8>) -> u64) -> End {
    let mut written = 0u64;
    let mut out = Vec::with_capacity(CHUNK);
    let mut last_look = Instant::now();
    loop {
        while out.len() < CHUNK && (count == 0 || written < count) {
            match next(&mut out) {
                0 => break,
                n => written += n,
            }
        }
        let wrote = !out.is_empty();
        if wrote {
            if !super::deadline::write_by(s, &out, Instant::now() + super::TIMEOUT) {
                return End::Gone;
            }
            out.clear();
        }
        if (count != 0 && written >= count) || st.stop.load(Relaxed) {
            return End::Done;
        }
        // Looked at even while records keep coming: following a busy port ends when asked.
        if last_look.elapsed() >= LOOK_EVERY {
            if client_closed(s) {
                return End::Done;
            }
            last_look = Instant::now();
        }
        if !wrote {
            std::thread::sleep(IDLE);
        }
    }
}

/// Whether the client closed or shut down its side (it sends nothing else while it follows).
fn client_closed(s: &UnixStream) -> bool {
    let mut b = [0u8; 1];
    // SAFETY: `recv` writes at most 1 byte into `b`, which lives across the call; the descriptor
    // is `s`'s, open for the call's duration. MSG_PEEK | MSG_DONTWAIT neither consumes nor waits.
    let n = unsafe { libc::recv(s.as_raw_fd(), b.as_mut_ptr().cast(), 1, libc::MSG_PEEK | libc::MSG_DONTWAIT) };
    n == 0 || (n < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::WouldBlock)
}

/// Nanoseconds since the Unix epoch.
pub fn now_ns() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// The command of `line` when it is one whose answer follows the dataplane (`capture`, `events`).
pub fn following(line: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    let cmd = v.get("cmd")?.as_str()?;
    matches!(cmd, "capture" | "events").then(|| cmd.to_string())
}
