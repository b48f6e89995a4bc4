//! Standard output for what the commands print: a write that fails (a closed pipe: `wasmdp ctl
//! ports | head`; a terminal gone after SIGHUP) is an error the caller handles, never a panic as
//! `println!` makes it.
//!
//! `wasmdp run` ignores such errors (the periodic and final statistics are for a reader who may
//! have left; the dataplane and its `--stats-json` report go on); the one-shot commands end quietly
//! with success on a closed pipe, as `head` expects of the commands it reads.

use std::io::Write;

/// Writes `text` to standard output and flushes it.
pub fn print(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// [`print()`] for output nobody may be reading any more: errors are dropped.
pub fn print_lossy(text: &str) {
    let _ = print(text);
}

/// Whether `e` (anywhere in its chain) says the reader closed the pipe.
pub fn is_closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}
