//! The client's side of the answers that follow the dataplane (`capture`, `events`): send the
//! request, read the answer line, then read what follows until the server closes; Ctrl-C (or
//! SIGTERM) shuts the client's side down, so the server ends cleanly (a capture writes its
//! statistics) and the reading goes on to the end.

use serde_json::Value;
use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

/// A request being followed.
pub struct Following {
    s: UnixStream,
    /// What the server sends after the answer line.
    pub reader: BufReader<UnixStream>,
    /// The answer line's `result`.
    pub result: Value,
    interrupted: Arc<AtomicBool>,
    shut: bool,
}

impl Following {
    /// Sends `req` to `socket` and reads the answer: an error answer is an error with its message.
    pub fn start(socket: &Path, req: &Value) -> anyhow::Result<Following> {
        let mut s = UnixStream::connect(socket)
            .map_err(|e| anyhow::anyhow!("control socket {}: {e} (is wasmdp running with it?)", socket.display()))?;
        s.write_all(format!("{req}\n").as_bytes())?;
        let interrupted = Arc::new(AtomicBool::new(false));
        signal_hook::flag::register(signal_hook::consts::SIGINT, interrupted.clone())?;
        signal_hook::flag::register(signal_hook::consts::SIGTERM, interrupted.clone())?;
        s.set_read_timeout(Some(Duration::from_millis(200)))?;
        let mut reader = BufReader::new(s.try_clone()?);
        let mut line = String::new();
        loop {
            match reader.read_line(&mut line) {
                Ok(_) => break,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    if interrupted.load(Relaxed) {
                        anyhow::bail!("interrupted before the server answered");
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
        let answer: Value = serde_json::from_str(&line)
            .map_err(|e| anyhow::anyhow!("control socket {}: bad answer ({e}): {line:?}", socket.display()))?;
        if answer["ok"] != true {
            anyhow::bail!("{}", answer["error"].as_str().unwrap_or("the server answered an error"));
        }
        Ok(Following { s, reader, result: answer["result"].clone(), interrupted, shut: false })
    }

    /// Called before each read: after Ctrl-C, shuts the client's side down (once), so the server
    /// ends and closes.
    pub fn check_interrupt(&mut self) {
        if self.interrupted.load(Relaxed) && !self.shut {
            let _ = self.s.shutdown(std::net::Shutdown::Write);
            self.shut = true;
        }
    }
}

/// Whether a read error is only the periodic timeout (read again).
pub fn timed_out(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted)
}
