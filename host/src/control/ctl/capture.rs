//! `wasmdp ctl capture PORT -w FILE|-`: asks for a capture, copies the pcapng stream the server
//! answers to the file (or stdout, a block at a time, so that `| tshark -r -` shows packets as
//! they come), and reports from the closing statistics blocks what was seen, captured and lost.
//! Ctrl-C ends the capture cleanly ([`super::follow`]): the server closes the file with the
//! statistics.

use super::follow::{timed_out, Following};
use super::CtlArgs;
use pcap_parser::pcapng::Block;
use serde_json::json;
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;

/// Largest block accepted from the server (a packet of the largest pool buffer and its options).
const MAX_BLOCK: usize = 1 << 17;

/// Runs the capture of `port`.
pub fn run(args: &CtlArgs, port: &str) -> anyhow::Result<()> {
    let Some(path) = &args.write else {
        anyhow::bail!("capture: -w FILE (a pcapng file) or -w - (stdout) is required");
    };
    let dir = match (args.rx, args.tx) {
        (true, _) => "rx",
        (_, true) => "tx",
        _ => "both",
    };
    let req = json!({"cmd": "capture", "port": port, "dir": dir, "queue": args.queue, "count": args.count,
        "snaplen": args.snaplen, "filter": args.filter});
    let socket = args.socket.clone().unwrap_or_else(super::super::default_path);
    let mut f = Following::start(&socket, &req)?;
    let mut out: Box<dyn Write> = if path.as_os_str() == "-" {
        Box::new(std::io::stdout().lock())
    } else {
        let f = std::fs::File::create(path).map_err(|e| anyhow::anyhow!("-w {}: {e}", path.display()))?;
        Box::new(std::io::BufWriter::new(f))
    };
    let to_stdout = path.as_os_str() == "-";
    let res = &f.result;
    eprintln!(
        "capturing {} ({}{}{}), snaplen {}, pcapng to {}; Ctrl-C to stop",
        res["port"].as_str().unwrap_or(port),
        res["dir"].as_str().unwrap_or(dir),
        res["queue"].as_u64().map(|q| format!(", queue {q}")).unwrap_or_default(),
        res["filter"].as_str().map(|f| format!(", filter {f:?}")).unwrap_or_default(),
        res["snaplen"],
        if to_stdout { "stdout".into() } else { path.display().to_string() },
    );
    let mut tally = Tally::default();
    loop {
        f.check_interrupt();
        let block = match read_block(&mut f.reader) {
            Ok(Some(b)) => b,
            Ok(None) => break,
            Err(e) if timed_out(&e) => continue,
            Err(e) => anyhow::bail!("capture: reading the stream: {e}"),
        };
        tally.add(&block);
        match out.write_all(&block).and_then(|_| if to_stdout { out.flush() } else { Ok(()) }) {
            Ok(()) => {}
            // The reader (tshark, head) went away: stop the capture.
            Err(e) if e.kind() == ErrorKind::BrokenPipe => return Ok(()),
            Err(e) => anyhow::bail!("-w {}: {e}", path.display()),
        }
    }
    out.flush()?;
    eprintln!("{}", tally.summary());
    Ok(())
}

/// One whole pcapng block (None at the end of the stream). A read that times out part way keeps
/// what it read: `BufReader` returns it again only if nothing was consumed, so this reads the
/// header and body with retries of its own.
fn read_block(r: &mut BufReader<UnixStream>) -> std::io::Result<Option<Vec<u8>>> {
    if r.fill_buf()?.is_empty() {
        return Ok(None);
    }
    let mut head = [0u8; 8];
    read_full(r, &mut head)?;
    let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
    if !(12..=MAX_BLOCK).contains(&len) || !len.is_multiple_of(4) {
        return Err(std::io::Error::new(ErrorKind::InvalidData, format!("a pcapng block of {len} bytes")));
    }
    let mut block = head.to_vec();
    block.resize(len, 0);
    read_full(r, &mut block[8..])?;
    Ok(Some(block))
}

fn read_full(r: &mut impl Read, mut buf: &mut [u8]) -> std::io::Result<()> {
    while !buf.is_empty() {
        match r.read(buf) {
            Ok(0) => return Err(ErrorKind::UnexpectedEof.into()),
            Ok(n) => buf = &mut buf[n..],
            Err(e) if timed_out(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// What the stream carried: packets, and each interface's closing statistics.
#[derive(Default)]
struct Tally {
    packets: u64,
    /// Per interface (rx, tx): seen, accepted, lost.
    stats: [[u64; 3]; 2],
}

impl Tally {
    fn add(&mut self, block: &[u8]) {
        let Ok((_, b)) = pcap_parser::pcapng::parse_block_le(block) else { return };
        match b {
            Block::EnhancedPacket(_) => self.packets += 1,
            Block::InterfaceStatistics(isb) if isb.if_id < 2 => {
                self.stats[isb.if_id as usize] = crate::capture::pcapng::read_statistics(&isb);
            }
            _ => {}
        }
    }

    fn summary(&self) -> String {
        let [rx, tx] = self.stats;
        format!(
            "{} packets captured; rx: {} seen, {} matched, {} lost to overruns; tx: {} seen, {} matched, {} lost to overruns",
            self.packets, rx[0], rx[1], rx[2], tx[0], tx[1], tx[2]
        )
    }
}
