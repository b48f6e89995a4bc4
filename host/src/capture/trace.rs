//! Packet trace (`wasmdp ctl trace PORT --count N`, as VPP's `trace add`): for the next N packets
//! a port receives, their path through the dataplane: RX port, queue, length and first bytes;
//! each link of the port's policy chain with its verdict, the length after it and the time of its
//! call; the engine; the TX port with the length, first bytes and offloads requested, or why the
//! packet went no further.
//!
//! A packet is followed by its buffer: one that an engine copies (the `copy` engine, a copy into a
//! stream's own pool) shows as gone at that step. A link's verdict for a packet it removed comes
//! from what the link counted in that call: `dropped` when it dropped packets and sent none
//! elsewhere, `sent to another port` the other way round, `dropped or sent elsewhere` when it did
//! both. Traced bursts are slow (each link timed, bytes copied): only `count` packets are traced,
//! at most [`MAX_TRACE`].

use crate::mbuf::{Burst, Pkt};
use crossbeam_queue::ArrayQueue;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

/// Most packets one trace follows.
pub const MAX_TRACE: usize = 1000;
/// Bytes of each packet shown, at RX and at TX.
pub const HEAD: usize = 64;

/// One trace of a port: the packets claimed so far and the paths finished.
pub struct Trace {
    /// The port traced.
    pub port: u16,
    /// Packets to trace.
    pub count: usize,
    taken: AtomicUsize,
    /// The paths finished, handed to the control thread without a lock (room for `count`: no more
    /// are claimed).
    done: ArrayQueue<Path>,
}

/// A link of the chain as a packet passed it.
#[derive(Debug, Clone)]
pub struct Step {
    /// The link's name.
    pub link: Arc<str>,
    /// What happened to the packet there.
    pub verdict: &'static str,
    /// Its length after the link (None: gone).
    pub len: Option<usize>,
    /// How long the link's call took (for the whole burst).
    pub ns: u64,
}

/// One packet's path.
#[derive(Debug, Clone)]
pub struct Path {
    /// When it was received (ns since the Unix epoch).
    pub ts_ns: u64,
    /// RX port and queue.
    pub rx: (u16, u16),
    /// Its length as received.
    pub len_in: usize,
    /// Its first bytes as received.
    pub head_in: Vec<u8>,
    /// The links of the policy chain it went through (empty: no policy).
    pub links: Vec<Step>,
    /// The stream's engine (with a policy: the native engine of a link that fails open).
    pub engine: &'static str,
    /// TX port and queue, when it reached the TX port.
    pub tx: Option<(u16, u16)>,
    /// Its length handed to the TX port.
    pub len_out: Option<usize>,
    /// Its first bytes handed to the TX port.
    pub head_out: Vec<u8>,
    /// The offloads requested for it (done in software or by the port).
    pub offloads: Vec<&'static str>,
    /// Transmitted, or why not.
    pub fate: String,
}

impl Trace {
    /// A trace of the next `count` packets of `port`.
    pub fn new(port: u16, count: usize) -> Trace {
        let count = count.clamp(1, MAX_TRACE);
        Trace { port, count, taken: AtomicUsize::new(0), done: ArrayQueue::new(count) }
    }

    /// Claims up to `n` packets to trace: how many.
    fn claim(&self, n: usize) -> usize {
        let mut got = 0;
        let _ = self.taken.fetch_update(Relaxed, Relaxed, |t| {
            got = n.min(self.count.saturating_sub(t));
            (got > 0).then_some(t + got)
        });
        got
    }

    fn finish(&self, paths: impl Iterator<Item = Path>) {
        for p in paths {
            // Cannot be full: at most `count` paths are claimed.
            let _ = self.done.push(p);
        }
    }

    /// Paths finished so far.
    pub fn finished(&self) -> usize {
        self.done.len()
    }

    /// Takes the paths finished, in the order they finished.
    pub fn take_paths(&self) -> Vec<Path> {
        std::iter::from_fn(|| self.done.pop()).collect()
    }
}

/// A packet being traced by a stream: its buffer and its path so far.
struct Live {
    buffer: usize,
    path: Path,
    gone: bool,
    /// Its place in the burst handed to the TX port.
    at: usize,
}

/// The paths a stream is following in the current round.
#[derive(Default)]
pub struct Following {
    live: Vec<Live>,
    /// Packets handed to the TX port this round.
    total: usize,
}

fn head(p: &Pkt) -> Vec<u8> {
    p.data()[..p.len().min(HEAD)].to_vec()
}

fn find(burst: &Burst, buffer: usize) -> Option<(usize, &Pkt)> {
    burst.iter().enumerate().find(|(_, p)| p.meta_ptr() as usize == buffer)
}

impl Following {
    /// Starts following up to what `t` still wants of the packets just received.
    pub fn received(&mut self, t: &Trace, burst: &Burst, rx: (u16, u16), engine: &'static str) {
        let n = t.claim(burst.len());
        let ts_ns = super::now_ns();
        for p in burst.iter().take(n) {
            let path = Path {
                ts_ns,
                rx,
                len_in: p.len(),
                head_in: head(p),
                links: Vec::new(),
                engine,
                tx: None,
                len_out: None,
                head_out: Vec::new(),
                offloads: Vec::new(),
                fate: String::new(),
            };
            self.live.push(Live { buffer: p.meta_ptr() as usize, path, gone: false, at: 0 });
        }
    }

    /// Whether packets are being followed this round.
    pub fn any(&self) -> bool {
        !self.live.is_empty()
    }

    /// After link `link`'s call of `ns` in which it dropped `dropped` packets and sent `sent`
    /// elsewhere: each followed packet's step.
    pub fn after_link(&mut self, link: &Arc<str>, burst: &Burst, ns: u64, dropped: u64, sent: u64) {
        for l in self.live.iter_mut().filter(|l| !l.gone) {
            let len = find(burst, l.buffer).map(|(_, p)| p.len());
            let verdict = match (len, dropped > 0, sent > 0) {
                (Some(_), ..) => "pass",
                (None, true, false) => "dropped",
                (None, false, true) => "sent to another port",
                _ => "dropped or sent elsewhere",
            };
            l.path.links.push(Step { link: link.clone(), verdict, len, ns });
            if len.is_none() {
                l.gone = true;
                l.path.fate = format!("{verdict} by link {link}");
            }
        }
    }

    /// Before the TX offloads are carried out (in software on software ports, which clears their
    /// flags): the offloads each followed packet asks of the TX port.
    pub fn offloads(&mut self, burst: &Burst) {
        for l in self.live.iter_mut().filter(|l| !l.gone) {
            if let Some((_, p)) = find(burst, l.buffer) {
                l.path.offloads = crate::offload::names(p.meta().ol_flags);
            }
        }
    }

    /// At the TX port (`tx`), before the transmit: where each followed packet is, and, for those
    /// gone before it without a link saying so, the drop reasons counted this round.
    pub fn sending(&mut self, burst: &Burst, tx: (u16, u16), reasons: &str) {
        self.total = burst.len();
        for l in self.live.iter_mut().filter(|l| !l.gone) {
            match find(burst, l.buffer) {
                Some((at, p)) => {
                    l.at = at;
                    l.path.tx = Some(tx);
                    l.path.len_out = Some(p.len());
                    l.path.head_out = head(p);
                }
                None => {
                    l.gone = true;
                    l.path.fate = format!("gone before the TX port (drops this burst: {reasons})");
                }
            }
        }
    }

    /// After the transmit, of which the last `unsent` packets handed over found no room (the
    /// queue keeps them at the end, in order): finishes the round's paths into `t`.
    pub fn sent(&mut self, t: &Trace, unsent: usize) {
        if self.live.is_empty() {
            return;
        }
        for l in self.live.iter_mut().filter(|l| !l.gone) {
            l.path.fate = if l.at + unsent >= self.total {
                "dropped: tx_full (the TX queue had no room after the retries)".into()
            } else {
                "transmitted".into()
            };
        }
        t.finish(self.live.drain(..).map(|l| l.path));
    }
}

impl Path {
    /// As JSON (bytes in hex).
    pub fn json(&self, ports: &[String]) -> Value {
        let name = |i: u16| ports.get(i as usize).cloned().unwrap_or_default();
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        json!({
            "ts_ns": self.ts_ns,
            "rx": {"port": name(self.rx.0), "queue": self.rx.1, "len": self.len_in, "head": hex(&self.head_in)},
            "links": self.links.iter().map(|s| json!({"link": &*s.link, "verdict": s.verdict, "len": s.len, "ns": s.ns})).collect::<Vec<_>>(),
            "engine": self.engine,
            "tx": self.tx.map(|(p, q)| json!({"port": name(p), "queue": q, "len": self.len_out, "head": hex(&self.head_out),
                "offloads": self.offloads})),
            "fate": self.fate,
        })
    }
}
