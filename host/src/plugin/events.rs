//! Plugin events (`event_register`, `event_emit`): records a policy reports as they happen (a source
//! over its rate, a flow denied), as BPF programs do through a ring buffer. Each port has one ring
//! of fixed capacity, shared by every queue and link of its chain and kept across reloads; an event
//! that finds it full is lost and counted, never waited for. A record's kind names its fields (the
//! layout given at registration, in the map layouts' types), so `wasmdp ctl events PORT` shows each
//! as JSON with named fields.

use crate::plugin::maps::layout::{self, Field};
use crossbeam_queue::ArrayQueue;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, RwLock};

/// Most bytes of one event.
pub const MAX_EVENT: usize = 256;
/// Events a port's ring holds.
pub const RING: usize = 1024;
/// Most kinds of event a port's policies register (over every reload: a kind registered again
/// with the same name and fields is the same kind).
pub const MAX_KINDS: usize = 64;
/// Longest kind name.
pub const MAX_NAME: usize = 64;

/// One event as the ring holds it: no allocation per event.
pub struct Record {
    /// Nanoseconds since the Unix epoch.
    pub ts_ns: u64,
    /// The RX queue of the instance that emitted it.
    pub queue: u16,
    /// Its kind: an index into the port's kinds.
    pub kind: u16,
    len: u16,
    data: [u8; MAX_EVENT],
}

impl Record {
    /// Its bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.data[..self.len as usize]
    }
}

/// A kind of event: its name, the link that registered it, and its fields.
#[derive(Debug, PartialEq, Eq)]
pub struct Kind {
    /// As registered.
    pub name: String,
    /// The plugin that registered it.
    pub plugin: Arc<str>,
    /// Its fields, in order.
    pub fields: Vec<Field>,
    /// Its fields as registered (`NAME:TYPE ...`, one space apart).
    pub layout: String,
    /// Their total size: every event of the kind is this long.
    pub size: usize,
}

/// A port's events.
pub struct Events {
    ring: ArrayQueue<Record>,
    kinds: RwLock<Vec<Arc<Kind>>>,
    /// Events appended to the ring.
    pub emitted: AtomicU64,
    /// Events lost because the ring was full.
    pub lost: AtomicU64,
    /// Whether a client reads the ring (one at a time: reading takes the events).
    reader: std::sync::atomic::AtomicBool,
}

impl Default for Events {
    fn default() -> Events {
        Events {
            ring: ArrayQueue::new(RING),
            kinds: RwLock::default(),
            emitted: AtomicU64::new(0),
            lost: AtomicU64::new(0),
            reader: Default::default(),
        }
    }
}

impl Events {
    /// Registers kind `name` with fields `layout` (`NAME:TYPE ...`) for `plugin`: its index and
    /// size, the same as before for the same name, plugin and fields. The error says what is wrong.
    pub fn register(&self, plugin: &Arc<str>, name: &str, layout: &str) -> Result<(u16, usize), String> {
        if !(1..=MAX_NAME).contains(&name.len()) || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(format!("event name {name:?}: use 1-{MAX_NAME} characters of [A-Za-z0-9_]"));
        }
        let fields = layout::fields(layout)?;
        let size = layout::size(&fields);
        if !(1..=MAX_EVENT).contains(&size) {
            return Err(format!("event `{name}`: its fields take {size} bytes; allowed 1..={MAX_EVENT}"));
        }
        let layout = layout.split_whitespace().collect::<Vec<_>>().join(" ");
        let kind = Kind { name: name.to_string(), plugin: plugin.clone(), fields, layout, size };
        let mut kinds = self.kinds.write().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = kinds.iter().position(|k| **k == kind) {
            return Ok((i as u16, size));
        }
        if kinds.len() >= MAX_KINDS {
            return Err(format!("event `{name}`: the port has {MAX_KINDS} kinds of event already"));
        }
        kinds.push(Arc::new(kind));
        Ok(((kinds.len() - 1) as u16, size))
    }

    /// Appends an event of kind `kind` (its bytes already checked against the kind's size); false
    /// (and counted lost) when the ring is full.
    pub fn emit(&self, kind: u16, queue: u16, bytes: &[u8]) -> bool {
        let mut r = Record { ts_ns: now_ns(), queue, kind, len: bytes.len() as u16, data: [0; MAX_EVENT] };
        r.data[..bytes.len()].copy_from_slice(bytes);
        match self.ring.push(r) {
            Ok(()) => {
                self.emitted.fetch_add(1, Relaxed);
                true
            }
            Err(_) => {
                self.lost.fetch_add(1, Relaxed);
                false
            }
        }
    }

    /// Becomes the ring's reader; false when another client is.
    pub fn claim(&self) -> bool {
        !self.reader.swap(true, Relaxed)
    }

    /// Stops being the ring's reader.
    pub fn release(&self) {
        self.reader.store(false, Relaxed);
    }

    /// The oldest event (the reader).
    pub fn next(&self) -> Option<Record> {
        self.ring.pop()
    }

    /// Events waiting.
    pub fn waiting(&self) -> usize {
        self.ring.len()
    }

    /// `r` as JSON: time, queue, link, kind and its fields by name.
    pub fn json(&self, port: &str, r: &Record) -> Value {
        let kinds = self.kinds.read().unwrap_or_else(|p| p.into_inner());
        let Some(k) = kinds.get(r.kind as usize) else {
            return json!({"ts_ns": r.ts_ns, "port": port, "queue": r.queue, "kind": r.kind, "hex": hex(r.bytes())});
        };
        json!({"ts_ns": r.ts_ns, "port": port, "queue": r.queue, "plugin": &*k.plugin, "event": k.name,
            "fields": layout::json(&k.fields, r.bytes())})
    }

    /// The kinds registered, for `events` answers.
    pub fn kinds(&self) -> Vec<Arc<Kind>> {
        self.kinds.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn now_ns() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_ring_loses_and_counts_and_never_blocks() {
        let e = Events::default();
        let link: Arc<str> = "rl".into();
        let (k, size) = e.register(&link, "over_rate", "src:ipv4 dropped:u32").unwrap();
        assert_eq!(size, 8);
        assert_eq!(e.register(&link, "over_rate", "src:ipv4 dropped:u32").unwrap().0, k, "the same kind again");
        for i in 0..RING as u32 + 10 {
            let mut b = [10, 0, 0, 1, 0, 0, 0, 0];
            b[4..].copy_from_slice(&i.to_le_bytes());
            assert_eq!(e.emit(k, 3, &b), i < RING as u32);
        }
        assert_eq!((e.emitted.load(Relaxed), e.lost.load(Relaxed)), (RING as u64, 10));
        let first = e.next().unwrap();
        let j = e.json("p0", &first);
        assert_eq!(j["event"], "over_rate");
        assert_eq!(j["plugin"], "rl");
        assert_eq!(j["queue"], 3);
        assert_eq!(j["fields"], json!({"src": "10.0.0.1", "dropped": 0}));
        assert_eq!(e.waiting(), RING - 1);
    }

    #[test]
    fn bad_kinds_are_refused_with_the_rule() {
        let e = Events::default();
        let l: Arc<str> = "x".into();
        assert!(e.register(&l, "a b", "x:u8").unwrap_err().contains("use 1-64 characters"));
        assert!(e.register(&l, "a", "x:u9").unwrap_err().contains("is not one of"));
        assert!(e.register(&l, "a", "x:hex300").unwrap_err().contains("allowed 1..=256"));
        for i in 0..MAX_KINDS {
            e.register(&l, &format!("k{i}"), "x:u8").unwrap();
        }
        assert!(e.register(&l, "more", "x:u8").unwrap_err().contains("64 kinds of event already"));
    }
}
