//! Accepting clients: a listener thread polls for connections (and the stop flag), each client is
//! served on a thread of its own, at most [`MAX_CLIENTS`] at once; every request line is at most
//! [`MAX_REQUEST`] bytes and must arrive whole within [`TIMEOUT`] of the previous answer (or of the
//! connection), however its bytes trickle in.
//!
//! When every place is taken, a new client takes the place of the one that has waited longest for
//! its request to arrive: clients that hold a place by sending a byte now and then are the oldest
//! waiters, so they cannot keep `wasmdp ctl` out. Only when every client is being answered (a
//! `reload` waits for its outcome) is a new one refused.

use super::deadline::write_by;
use super::state::{error, State};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest request line.
pub const MAX_REQUEST: usize = 64 * 1024;
/// Clients served at once; more take the place of the longest waiting one, or are refused.
pub const MAX_CLIENTS: usize = 128;
/// Time a client has to send each whole request (and to take each answer).
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// One client's place.
struct Place {
    id: u64,
    /// A handle to shut its connection down with.
    stream: UnixStream,
    /// Since when it has been waiting for a request (None: being answered).
    waiting: Option<Instant>,
}

/// The places, shared by the listener and the client threads.
#[derive(Default)]
struct Places {
    list: Mutex<Vec<Place>>,
}

impl Places {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Place>> {
        self.list.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a place for `stream`, closing the longest waiting client when all are taken; None when
    /// every client is being answered.
    fn take(&self, id: u64, stream: &UnixStream) -> Option<()> {
        let handle = stream.try_clone().ok()?;
        let mut list = self.lock();
        if list.len() >= MAX_CLIENTS {
            let oldest = list.iter().enumerate().filter_map(|(i, p)| Some((i, p.waiting?))).min_by_key(|(_, t)| *t);
            let (i, _) = oldest?;
            let gone = list.swap_remove(i);
            let _ = gone.stream.shutdown(std::net::Shutdown::Both);
        }
        list.push(Place { id, stream: handle, waiting: Some(Instant::now()) });
        Some(())
    }

    fn set_waiting(&self, id: u64, waiting: Option<Instant>) {
        if let Some(p) = self.lock().iter_mut().find(|p| p.id == id) {
            p.waiting = waiting;
        }
    }

    fn leave(&self, id: u64) {
        self.lock().retain(|p| p.id != id);
    }
}

/// Binds `path` and serves it until `stop`; the socket file is removed when the thread ends.
pub fn spawn(path: PathBuf, state: Arc<State>, stop: Arc<AtomicBool>) -> anyhow::Result<JoinHandle<()>> {
    let listener = super::socket::bind(&path)?;
    listener.set_nonblocking(true)?;
    tracing::info!("control socket: {}", path.display());
    let places = Arc::new(Places::default());
    Ok(std::thread::Builder::new().name("wasmdp-ctl".into()).spawn(move || {
        let mut next_id = 0u64;
        while !stop.load(Relaxed) {
            match listener.accept() {
                Ok((s, _)) => {
                    next_id += 1;
                    admit(s, next_id, &state, &places);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => {
                    tracing::warn!("control socket: accept: {e}");
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
        let _ = std::fs::remove_file(&path);
    })?)
}

/// Serves `s` on its own thread, or refuses it when every place is taken by a client being answered.
fn admit(s: UnixStream, id: u64, state: &Arc<State>, places: &Arc<Places>) {
    let _ = s.set_nonblocking(false);
    if places.take(id, &s).is_none() {
        let _ = s.set_write_timeout(Some(TIMEOUT));
        let _ = (&s).write_all(error("too many clients at once; try again").as_bytes());
        return;
    }
    let (state, places) = (state.clone(), places.clone());
    let spawned = std::thread::Builder::new().name("wasmdp-ctl-client".into()).spawn({
        let places = places.clone();
        move || {
            serve(s, id, &state, &places);
            places.leave(id);
        }
    });
    if spawned.is_err() {
        places.leave(id);
        tracing::warn!("control socket: no thread for a client");
    }
}

/// How reading a request line ended.
enum Line {
    /// A whole line (without its newline).
    Whole(Vec<u8>),
    /// The client closed, timed out or was closed.
    Gone,
    /// Longer than [`MAX_REQUEST`].
    TooLong,
}

/// Reads one request line of `s`, which must arrive whole by `deadline`; `pending` holds what was
/// read past the previous line.
fn read_line(s: &mut UnixStream, pending: &mut Vec<u8>, deadline: Instant) -> Line {
    let mut buf = [0u8; 4096];
    loop {
        if let Some(i) = pending.iter().position(|&b| b == b'\n') {
            let rest = pending.split_off(i + 1);
            let mut line = std::mem::replace(pending, rest);
            line.pop();
            return Line::Whole(line);
        }
        if pending.len() > MAX_REQUEST {
            return Line::TooLong;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || s.set_read_timeout(Some(left)).is_err() {
            return Line::Gone;
        }
        match s.read(&mut buf) {
            Ok(0) => return Line::Gone,
            Ok(k) => pending.extend_from_slice(&buf[..k]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Line::Gone, // timed out, reset, or shut down for a newer client
        }
    }
}

/// Answers each request line of the client until it closes, runs out of time or sends too much.
fn serve(mut s: UnixStream, id: u64, state: &State, places: &Places) {
    let mut pending = Vec::new();
    loop {
        let since = Instant::now();
        places.set_waiting(id, Some(since));
        match read_line(&mut s, &mut pending, since + TIMEOUT) {
            Line::Whole(line) => {
                places.set_waiting(id, None);
                // The connection carries what the dataplane does from now on, until it ends.
                match super::follow::following(&line).as_deref() {
                    Some("capture") => return super::capture::serve(s, &line, state),
                    Some(_) => return super::events::serve(s, &line, state),
                    None => {}
                }
                let answer = super::commands::answer(&line, state);
                if !write_by(&mut s, answer.as_bytes(), Instant::now() + TIMEOUT) {
                    return;
                }
            }
            Line::TooLong => {
                let msg = format!("request longer than {MAX_REQUEST} bytes; closing");
                let _ = s.write_all(error(&msg).as_bytes());
                return;
            }
            Line::Gone => return,
        }
    }
}
