//! Accepting clients: a listener thread polls for connections (and the stop flag), each client is
//! served on a thread of its own, at most [`MAX_CLIENTS`] at once; every request line is at most
//! [`MAX_REQUEST`] bytes and must arrive within [`TIMEOUT`].

use super::commands::State;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Longest request line.
pub const MAX_REQUEST: usize = 64 * 1024;
/// Clients served at once; more are answered with an error and closed.
pub const MAX_CLIENTS: usize = 128;
/// Time a client has to send each request (and to take each answer).
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// Binds `path` and serves it until `stop`; the socket file is removed when the thread ends.
pub fn spawn(path: PathBuf, state: Arc<State>, stop: Arc<AtomicBool>) -> anyhow::Result<JoinHandle<()>> {
    let listener = super::socket::bind(&path)?;
    listener.set_nonblocking(true)?;
    tracing::info!("control socket: {}", path.display());
    let clients = Arc::new(AtomicUsize::new(0));
    Ok(std::thread::Builder::new().name("wasmdp-ctl".into()).spawn(move || {
        while !stop.load(Relaxed) {
            match listener.accept() {
                Ok((s, _)) => admit(s, &state, &clients),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => {
                    tracing::warn!("control socket: accept: {e}");
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
        let _ = std::fs::remove_file(&path);
    })?)
}

/// Serves `s` on its own thread, or refuses it when [`MAX_CLIENTS`] are being served.
fn admit(s: UnixStream, state: &Arc<State>, clients: &Arc<AtomicUsize>) {
    let _ = s.set_nonblocking(false);
    let _ = s.set_read_timeout(Some(TIMEOUT));
    let _ = s.set_write_timeout(Some(TIMEOUT));
    if clients.fetch_add(1, Relaxed) >= MAX_CLIENTS {
        clients.fetch_sub(1, Relaxed);
        let _ = (&s).write_all(super::commands::error("too many clients at once; try again").as_bytes());
        return;
    }
    let (state, clients) = (state.clone(), clients.clone());
    let spawned = std::thread::Builder::new().name("wasmdp-ctl-client".into()).spawn(move || {
        serve(s, &state);
        clients.fetch_sub(1, Relaxed);
    });
    if spawned.is_err() {
        tracing::warn!("control socket: no thread for a client");
    }
}

/// Answers each request line of the client until it closes, times out or sends too much.
fn serve(s: UnixStream, state: &State) {
    let Ok(mut out) = s.try_clone() else { return };
    let mut reader = BufReader::new(s);
    loop {
        let mut line = Vec::new();
        match (&mut reader).take(MAX_REQUEST as u64 + 1).read_until(b'\n', &mut line) {
            Ok(0) => return,
            Ok(_) if line.len() > MAX_REQUEST => {
                let msg = format!("request longer than {MAX_REQUEST} bytes; closing");
                let _ = out.write_all(super::commands::error(&msg).as_bytes());
                return;
            }
            Ok(_) => {
                let answer = super::commands::answer(&line, state);
                if out.write_all(answer.as_bytes()).is_err() {
                    return;
                }
            }
            Err(_) => return, // timed out or reset: the client is gone
        }
    }
}
