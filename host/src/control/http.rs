//! A small HTTP/1.0 responder on one thread, for `GET /metrics`: every client may be hostile, so
//! everything it can make us hold is bounded.
//!
//! Why not a general server: `tiny_http` gave each connection a thread and read header lines without
//! limit (8000 slow connections made 7989 threads; endless header lines grew its memory by 90 MB/s).
//! Prometheus needs one path answered with `Connection: close`; a `poll(2)` loop over non-blocking
//! sockets does that with fixed bounds and no threads per client:
//!
//! - at most [`MAX_CONNS`] connections; a new one when all are taken closes the one that has been
//!   there longest (so trickling clients cannot keep a scraper out: they are the oldest);
//! - a request head of at most [`MAX_HEAD`] bytes (else `431`), read and answered within
//!   [`MAX_TIME`] from the connection's accept, whatever the pace of the bytes (else closed);
//! - one request per connection; the answer is written without blocking, in as many turns as the
//!   client's window allows.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Connections held at once.
pub const MAX_CONNS: usize = 64;
/// Bytes of a request head (request line and headers).
pub const MAX_HEAD: usize = 8192;
/// Time from accept to the last byte of the answer.
pub const MAX_TIME: Duration = Duration::from_secs(5);

/// An answer: status, content type, body.
pub struct Answer {
    /// Status code and reason, e.g. `200 OK`.
    pub status: &'static str,
    /// Content type.
    pub content_type: &'static str,
    /// Body.
    pub body: Vec<u8>,
}

/// Answers the path of a `GET` request.
pub type Handler = dyn Fn(&str) -> Answer + Send;

struct Conn {
    stream: TcpStream,
    since: Instant,
    head: Vec<u8>,
    /// The answer once the head is in, and how much of it was written.
    out: Option<(Vec<u8>, usize)>,
}

/// Serves `addr` with `handler` until `stop`.
pub fn spawn(addr: SocketAddr, handler: Box<Handler>, stop: Arc<AtomicBool>) -> std::io::Result<JoinHandle<()>> {
    let listener = TcpListener::bind(addr)?;
    listener.set_nonblocking(true)?;
    std::thread::Builder::new().name("wasmdp-metrics".into()).spawn(move || serve(&listener, &*handler, &stop))
}

fn serve(listener: &TcpListener, handler: &Handler, stop: &AtomicBool) {
    let mut conns: Vec<Conn> = Vec::with_capacity(MAX_CONNS);
    let mut fds: Vec<libc::pollfd> = Vec::with_capacity(MAX_CONNS + 1);
    while !stop.load(Relaxed) {
        fds.clear();
        fds.push(libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 });
        for c in &conns {
            let events = if c.out.is_some() { libc::POLLOUT } else { libc::POLLIN };
            fds.push(libc::pollfd { fd: c.stream.as_raw_fd(), events, revents: 0 });
        }
        // SAFETY: `fds` is a valid array of `fds.len()` pollfds for the duration of the call.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 100) };
        if n < 0 {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        let ready: Vec<bool> = fds[1..].iter().map(|f| f.revents != 0).collect();
        for (c, r) in conns.iter_mut().zip(ready) {
            if r {
                turn(c, handler);
            }
        }
        conns.retain(|c| !done(c));
        if fds[0].revents != 0 {
            accept(listener, &mut conns);
        }
    }
}

/// Takes every waiting connection, closing the oldest held when all places are taken.
fn accept(listener: &TcpListener, conns: &mut Vec<Conn>) {
    while let Ok((stream, _)) = listener.accept() {
        if stream.set_nonblocking(true).is_err() {
            continue;
        }
        if conns.len() >= MAX_CONNS {
            // The oldest is the first: connections are pushed in accept order.
            conns.remove(0);
        }
        conns.push(Conn { stream, since: Instant::now(), head: Vec::new(), out: None });
    }
}

/// Whether the connection is finished (answered, failed or out of time).
fn done(c: &Conn) -> bool {
    match &c.out {
        Some((out, at)) if *at >= out.len() => true,
        _ => c.since.elapsed() > MAX_TIME,
    }
}

/// Reads what the client sent or writes what it can take.
fn turn(c: &mut Conn, handler: &Handler) {
    if let Some((out, at)) = &mut c.out {
        match c.stream.write(&out[*at..]) {
            Ok(0) => *at = out.len(),
            Ok(k) => *at += k,
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {}
            Err(_) => *at = out.len(),
        }
        return;
    }
    let mut buf = [0u8; 2048];
    loop {
        let room = (MAX_HEAD + 1 - c.head.len()).min(buf.len());
        match c.stream.read(&mut buf[..room]) {
            Ok(0) => {
                // Closed before a whole head: nothing to answer.
                c.out = Some((Vec::new(), 0));
                return;
            }
            Ok(k) => c.head.extend_from_slice(&buf[..k]),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return,
            Err(_) => {
                c.out = Some((Vec::new(), 0));
                return;
            }
        }
        if let Some(answer) = respond(&c.head, handler) {
            c.out = Some((answer, 0));
            return;
        }
    }
}

/// The answer to a head, once it is whole (or too long).
fn respond(head: &[u8], handler: &Handler) -> Option<Vec<u8>> {
    let end = head.windows(4).position(|w| w == b"\r\n\r\n").or_else(|| head.windows(2).position(|w| w == b"\n\n"));
    if end.is_none() {
        if head.len() > MAX_HEAD {
            let body = format!("request head longer than {MAX_HEAD} bytes\n");
            return Some(encode(&Answer {
                status: "431 Request Header Fields Too Large",
                content_type: "text/plain",
                body: body.into(),
            }));
        }
        return None;
    }
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_whitespace();
    let answer = match (words.next(), words.next()) {
        (Some("GET"), Some(path)) => handler(path),
        _ => Answer {
            status: "405 Method Not Allowed",
            content_type: "text/plain",
            body: b"wasmdp: GET only\n".to_vec(),
        },
    };
    Some(encode(&answer))
}

fn encode(a: &Answer) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.0 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        a.status,
        a.content_type,
        a.body.len()
    )
    .into_bytes();
    out.extend_from_slice(&a.body);
    out
}
