//! A port's maps by name: what a reload's new instances find again.
//!
//! The registry is bounded: it holds at most [`Registry::set_limit`]'s bytes of tables (the
//! dataplane sets `2 x limits.map_kib x` the port's streams, room for the running policy and the one
//! replacing it). A table no running instance holds (its policy was replaced, or its instance
//! trapped and was dropped) is an orphan: orphans are freed when a declaration needs their room, and
//! after every applied reload ([`Registry::sweep`]). A table another declaration replaced under the
//! same name is kept, counted, while an old instance still uses it.

use super::{MapSpec, Table};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, Weak};

/// A map's entries: key and value bytes.
pub type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// The tables of one name: one for the port's instances, one per instance, or one shared across
/// ports (owned by the dataplane's [`SharedMaps`](super::SharedMaps), linked here for the stats and
/// dumps).
#[derive(Debug)]
enum Tables {
    Shared(Arc<Table>),
    PerInstance(BTreeMap<u32, Arc<Table>>),
    Linked(Weak<Table>),
}

#[derive(Debug)]
struct Entry {
    spec: MapSpec,
    tables: Tables,
    /// The typed layout the latest declaring module gave (None: shown in hex).
    layout: Option<Arc<super::Layout>>,
    /// The digest of the initial entries file the tables were filled from (`policy: map_entries:`):
    /// a declaration with another file (or none) gets new tables.
    initial: Option<[u8; 32]>,
    /// The pin file the entries are written to at stop (`policy: map_pins:`), as the latest
    /// declaration named it.
    pin: Option<std::path::PathBuf>,
}

/// A map's initial entries and the layout to read them with, for [`Registry::declare_filled`].
pub type Initial<'a> = Option<(&'a super::InitialEntries, Option<&'a super::Layout>)>;

/// A port's maps.
#[derive(Debug)]
pub struct Registry {
    // Touched only by `map_declare` (in init, off the hot path), sweeps and stats/dumps.
    inner: Mutex<Inner>,
    /// Most bytes of tables held.
    limit: AtomicU64,
}

#[derive(Debug, Default)]
struct Inner {
    entries: BTreeMap<String, Entry>,
    /// Tables replaced by a different declaration of their name, while an instance still holds them.
    retired: Vec<Arc<Table>>,
    /// The owner of the linked tables, kept alive as long as this registry (the stop report reads
    /// the maps after the dataplane is gone).
    shared: Option<Arc<super::SharedMaps>>,
}

impl Default for Registry {
    fn default() -> Registry {
        Registry { inner: Mutex::default(), limit: AtomicU64::new(u64::MAX) }
    }
}

impl Tables {
    /// The tables this registry owns (a linked one is the dataplane's).
    fn owned(&self) -> Vec<&Arc<Table>> {
        match self {
            Tables::Shared(t) => vec![t],
            Tables::PerInstance(m) => m.values().collect(),
            Tables::Linked(_) => Vec::new(),
        }
    }

    /// The owned tables an instance still holds (kept, counted, when their name is taken over).
    fn held(&self) -> Vec<Arc<Table>> {
        self.owned().into_iter().filter(|t| Arc::strong_count(t) > 1).cloned().collect()
    }

    /// Every table behind the name, linked ones included while they exist.
    fn each(&self) -> Vec<Arc<Table>> {
        match self {
            Tables::Linked(w) => w.upgrade().into_iter().collect(),
            owned => owned.owned().into_iter().cloned().collect(),
        }
    }
}

impl Inner {
    /// Bytes of every table held.
    fn held(&self) -> u64 {
        let tables = self.entries.values().flat_map(|e| e.tables.owned()).chain(&self.retired);
        tables.map(|t| t.spec().bytes()).sum()
    }

    /// Frees the tables no instance holds (only the registry does: its clone is the only one, and
    /// no instance can get another without the registry's lock, held here).
    fn sweep(&mut self) {
        let orphan = |t: &Arc<Table>| Arc::strong_count(t) == 1;
        self.retired.retain(|t| !orphan(t));
        self.entries.retain(|_, e| match &mut e.tables {
            Tables::Shared(t) => !orphan(t),
            Tables::PerInstance(m) => {
                m.retain(|_, t| !orphan(t));
                !m.is_empty()
            }
            Tables::Linked(w) => w.strong_count() > 0,
        });
    }
}

/// One map as the stats JSON shows it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct MapInfo {
    /// Name.
    pub name: String,
    /// `hash`, `array`, `percpu_hash` or `percpu_array`.
    pub kind: &'static str,
    /// Key bytes.
    pub key_size: u32,
    /// Value bytes.
    pub value_size: u32,
    /// Capacity (per instance for per-instance kinds).
    pub capacity: u32,
    /// Entries used (summed over instances).
    pub entries: u64,
    /// Tables behind the name (1, or the number of instances).
    pub tables: usize,
    /// Shared with other ports (`policy: shared_maps:`).
    pub shared: bool,
    /// Expiry after the last use, milliseconds (0: none).
    pub ttl_ms: u64,
    /// Entries evicted to make room (LRU) and expired entries freed, summed over the tables.
    pub evicted: u64,
    pub expired: u64,
}

impl Registry {
    /// Bounds the bytes of tables the registry holds (set by the dataplane before a policy's
    /// instances declare their maps).
    pub fn set_limit(&self, bytes: u64) {
        self.limit.store(bytes, Relaxed);
    }

    /// Frees the tables no running instance holds.
    pub fn sweep(&self) {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).sweep();
    }

    /// The table instance `instance` uses for `spec`: the existing one when a map of that name was
    /// declared identically before (by another queue, or by the policy this one replaces), a new one
    /// otherwise (replacing a differently declared one). `budget` (bytes the instance may still
    /// declare) pays for the table either way; a new table must also fit the registry's limit, after
    /// the orphans are freed. Both are checked before anything is allocated.
    pub fn declare(&self, spec: &MapSpec, instance: u32, budget: &mut u64) -> Result<Arc<Table>, String> {
        self.declare_filled(spec, instance, budget, None)
    }

    /// [`declare`](Registry::declare) of a map with initial entries: a table is kept only if it
    /// was filled from the same file content, and a new one is filled before it is returned (so an
    /// instance never sees it part filled); an entry the file gets wrong fails the declaration,
    /// leaving what was there.
    pub fn declare_filled(
        &self,
        spec: &MapSpec,
        instance: u32,
        budget: &mut u64,
        initial: Initial<'_>,
    ) -> Result<Arc<Table>, String> {
        let bytes = spec.affordable(*budget)?;
        let digest = initial.map(|(e, _)| e.digest);
        let pin = initial.and_then(|(e, _)| e.pin.then(|| e.path.clone()));
        if pin.is_some() && spec.kind.per_instance() {
            return Err(format!(
                "map {:?} is a {} map, one table per instance: it cannot be pinned as one (map_pins)",
                spec.name,
                spec.kind.name()
            ));
        }
        let fresh = |spec: &MapSpec| -> Result<Arc<Table>, String> {
            let t = Arc::new(Table::new(spec));
            initial.map_or(Ok(()), |(e, layout)| e.fill(&t, layout))?;
            Ok(t)
        };
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let same = |e: &Entry| e.spec == *spec && e.initial == digest;
        let found = inner.entries.get(&spec.name).filter(|e| same(e)).map(|e| match &e.tables {
            Tables::Shared(t) => Some(t.clone()),
            Tables::PerInstance(m) => m.get(&instance).cloned(),
            Tables::Linked(_) => None,
        });
        if let Some(Some(t)) = found {
            if let Some(e) = inner.entries.get_mut(&spec.name) {
                e.pin = pin;
            }
            *budget -= bytes;
            return Ok(t);
        }
        let limit = self.limit.load(Relaxed);
        if inner.held().saturating_add(bytes) > limit {
            inner.sweep();
            let held = inner.held();
            if held.saturating_add(bytes) > limit {
                return Err(format!(
                    "map {:?} needs {} KiB; the port's maps already hold {} KiB of its {} KiB (2 x limits.map_kib x the port's streams)",
                    spec.name,
                    bytes.div_ceil(1024),
                    held.div_ceil(1024),
                    limit / 1024
                ));
            }
        }
        let inner = &mut *inner;
        // A per-instance map declared alike gets this instance's table beside the others';
        // anything else gets a new entry (the old one's tables kept, counted, while still held).
        let keep = inner.entries.get(&spec.name).is_some_and(same);
        let table = fresh(spec)?;
        match inner.entries.get_mut(&spec.name) {
            Some(Entry { tables: Tables::PerInstance(by_instance), .. }) if keep => {
                by_instance.insert(instance, table.clone());
            }
            _ => {
                let tables = if spec.kind.per_instance() {
                    Tables::PerInstance(BTreeMap::from([(instance, table.clone())]))
                } else {
                    Tables::Shared(table.clone())
                };
                let entry = Entry { spec: spec.clone(), tables, layout: None, initial: digest, pin };
                if let Some(old) = inner.entries.insert(spec.name.clone(), entry) {
                    inner.retired.extend(old.tables.held());
                }
            }
        }
        *budget -= bytes;
        Ok(table)
    }

    /// Shows the shared table `table` (declared as `spec`) under its name in this port's maps,
    /// replacing a table of the port's own of that name (kept, counted, while an instance holds it).
    pub fn link(&self, spec: &MapSpec, table: &Arc<Table>, owner: &Arc<super::SharedMaps>) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.shared.get_or_insert_with(|| owner.clone());
        let linked = Entry {
            spec: spec.clone(),
            tables: Tables::Linked(Arc::downgrade(table)),
            layout: None,
            initial: None,
            pin: None,
        };
        if let Some(old) = inner.entries.insert(spec.name.clone(), linked) {
            inner.retired.extend(old.tables.held());
        }
    }

    /// Writes every pinned map's entries to its pin file (at stop); what could not be written.
    pub fn save_pins(&self) -> Vec<String> {
        let pinned: Vec<(MapSpec, Arc<Table>, std::path::PathBuf)> = {
            let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            let pinned = inner.entries.values().filter_map(|e| match (&e.pin, &e.tables) {
                (Some(path), Tables::Shared(t)) => Some((e.spec.clone(), t.clone(), path.clone())),
                _ => None,
            });
            pinned.collect()
        };
        let saved = pinned.iter().map(|(spec, t, path)| super::initial::save(path, spec, &t.entries()));
        saved.filter_map(Result::err).collect()
    }

    /// Sets the typed layout of map `name` (the module that just declared it gave `layout`).
    pub fn set_layout(&self, name: &str, layout: Option<Arc<super::Layout>>) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = inner.entries.get_mut(name) {
            e.layout = layout;
        }
    }

    /// The typed layout of map `name`, if its module declared one.
    pub fn layout(&self, name: &str) -> Option<Arc<super::Layout>> {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.entries.get(name).and_then(|e| e.layout.clone())
    }

    /// Every map, for the stats.
    pub fn snapshot(&self) -> Vec<MapInfo> {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner
            .entries
            .values()
            .map(|e| {
                let tables = e.tables.each();
                MapInfo {
                    name: e.spec.name.clone(),
                    kind: e.spec.kind.name(),
                    key_size: e.spec.key_size,
                    value_size: e.spec.value_size,
                    capacity: e.spec.capacity,
                    entries: tables.iter().map(|t| u64::from(t.len())).sum(),
                    tables: tables.len(),
                    shared: matches!(e.tables, Tables::Linked(_)),
                    ttl_ms: e.spec.ttl_ms,
                    evicted: tables.iter().map(|t| t.evictions().0).sum(),
                    expired: tables.iter().map(|t| t.evictions().1).sum(),
                }
            })
            .collect()
    }

    /// Map `name`'s declaration and tables (several for a per-instance kind), None: no such map.
    /// Nothing is held after the call.
    pub fn tables(&self, name: &str) -> Option<(MapSpec, Vec<Arc<Table>>)> {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let e = inner.entries.get(name)?;
        Some((e.spec.clone(), e.tables.each()))
    }

    /// One page of map `name`'s entries from `cursor` (0: the start): at most `max_rows` rows and
    /// about `max_bytes` bytes of keys and values, and the cursor of the next page. Per-instance
    /// maps are summed by key (value words added), each key shown once. The registry's lock is not
    /// held while the tables are read; nothing is kept between two pages. None: no such map.
    pub fn dump_page(&self, name: &str, cursor: u64, max_rows: usize, max_bytes: usize) -> Option<Page> {
        let (spec, tables) = self.tables(name)?;
        let count = tables.iter().map(|t| u64::from(t.len())).sum();
        let mut page = Page { spec, count, rows: Vec::new(), next: None };
        let Some(slots) = tables.first().map(|t| t.slots() as u64) else { return Some(page) };
        let (mut ti, mut from) = ((cursor / slots) as usize, (cursor % slots) as usize);
        let mut bytes = 0;
        let mut sum = Vec::new();
        while ti < tables.len() {
            let next = tables[ti].visit(from, |k, v| {
                // A key an earlier instance's table also holds was shown with that table.
                if tables[..ti].iter().any(|t| t.lookup(k, sum_buf(&mut sum, v.len()))) {
                    return true;
                }
                let mut row = v.to_vec();
                for t in &tables[ti + 1..] {
                    if t.lookup(k, sum_buf(&mut sum, v.len())) {
                        add_words(&mut row, &sum);
                    }
                }
                bytes += k.len() + v.len();
                page.rows.push((k.to_vec(), row));
                page.rows.len() < max_rows && bytes < max_bytes
            });
            match next {
                Some(s) => {
                    page.next = Some(ti as u64 * slots + s as u64);
                    break;
                }
                None => (ti, from) = (ti + 1, 0),
            }
        }
        Some(page)
    }

    /// Every entry of map `name`, page after page (tests).
    #[cfg(test)]
    pub fn dump(&self, name: &str) -> Option<(MapSpec, Entries)> {
        let mut first = self.dump_page(name, 0, 3, usize::MAX)?;
        while let Some(c) = first.next {
            let more = self.dump_page(name, c, 3, usize::MAX)?;
            first.rows.extend(more.rows);
            first.next = more.next;
        }
        Some((first.spec, first.rows))
    }
}

/// One page of a map's dump.
#[derive(Debug)]
pub struct Page {
    /// The map's declaration.
    pub spec: MapSpec,
    /// Entries in the map now (per-instance maps: summed over the instances' tables).
    pub count: u64,
    /// Key and value bytes, in table order.
    pub rows: Entries,
    /// The cursor of the next page (None: this is the last).
    pub next: Option<u64>,
}

/// `buf` resized to `n` bytes, for a value looked up.
fn sum_buf(buf: &mut Vec<u8>, n: usize) -> &mut [u8] {
    buf.resize(n, 0);
    buf
}

/// `acc += v`, as little-endian u64 words (a short last word as its bytes), wrapping.
pub fn add_words(acc: &mut [u8], v: &[u8]) {
    for (a, b) in acc.chunks_mut(8).zip(v.chunks(8)) {
        let (mut x, mut y) = ([0u8; 8], [0u8; 8]);
        x[..a.len()].copy_from_slice(a);
        y[..b.len()].copy_from_slice(b);
        let s = u64::from_le_bytes(x).wrapping_add(u64::from_le_bytes(y)).to_le_bytes();
        let n = a.len();
        a.copy_from_slice(&s[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::maps::MapKind;

    /// A budget that never runs out (the registry's limit is what these tests try).
    fn unlimited() -> u64 {
        u64::MAX
    }

    fn spec(name: &str, kind: MapKind, capacity: u32) -> MapSpec {
        MapSpec { name: name.into(), kind, key_size: 4, value_size: 8, capacity, ttl_ms: 0 }
    }

    #[test]
    fn the_same_declaration_finds_the_same_table_and_another_replaces_it() {
        let r = Registry::default();
        let mut budget = u64::MAX;
        let a = r.declare(&spec("m", MapKind::Hash, 8), 0, &mut budget).unwrap();
        a.add(&[1, 0, 0, 0], 0, 5).unwrap();
        let b = r.declare(&spec("m", MapKind::Hash, 8), 1, &mut budget).unwrap();
        assert!(Arc::ptr_eq(&a, &b), "queues share it; a reload declaring it alike keeps it");
        let c = r.declare(&spec("m", MapKind::Hash, 16), 0, &mut budget).unwrap();
        assert!(c.is_empty(), "a different shape is a new map");
        assert_eq!(r.snapshot()[0].capacity, 16);
    }

    #[test]
    fn a_map_with_initial_entries_is_kept_while_its_file_is_the_same_and_made_anew_when_it_changes() {
        let r = Registry::default();
        let s = spec("m", MapKind::Hash, 8);
        let file = |text: &str| crate::plugin::maps::InitialEntries::parse("m.txt".as_ref(), text.as_bytes()).unwrap();
        let (one, two) = (file("01000000 -> 0100000000000000\n"), file("02000000 -> 0200000000000000\n"));
        let a = r.declare_filled(&s, 0, &mut unlimited(), Some((&one, None))).unwrap();
        assert_eq!(a.entries(), vec![(vec![1, 0, 0, 0], vec![1, 0, 0, 0, 0, 0, 0, 0])], "filled before it is returned");
        a.update(&[9, 0, 0, 0], &[9; 8]).unwrap();
        let again = r.declare_filled(&s, 1, &mut unlimited(), Some((&file("01000000 -> 0100000000000000\n"), None)));
        assert!(Arc::ptr_eq(&a, &again.unwrap()), "the same content: kept, with what the policy wrote");
        let b = r.declare_filled(&s, 0, &mut unlimited(), Some((&two, None))).unwrap();
        assert!(!Arc::ptr_eq(&a, &b), "another content: a new table");
        assert_eq!(b.entries(), vec![(vec![2, 0, 0, 0], vec![2, 0, 0, 0, 0, 0, 0, 0])]);
        assert_eq!(a.len(), 2, "the old policy's table is untouched until it goes");
        assert!(!Arc::ptr_eq(&b, &r.declare(&s, 0, &mut unlimited()).unwrap()), "no file: a new, empty table");
        // A file the map cannot take fails the declaration and leaves the table there.
        let kept = r.declare_filled(&s, 0, &mut unlimited(), Some((&two, None))).unwrap();
        let bad = file("0300 -> 0300000000000000\n");
        assert!(r.declare_filled(&s, 0, &mut unlimited(), Some((&bad, None))).unwrap_err().contains("m.txt, line 1"));
        assert!(Arc::ptr_eq(&kept, &r.declare_filled(&s, 0, &mut unlimited(), Some((&two, None))).unwrap()));
        // A pin: one table, written back whole; a per-instance map has one per queue and is refused.
        let mut pin = file("");
        pin.pin = true;
        let per = spec("p", MapKind::PerInstanceHash, 8);
        let e = r.declare_filled(&per, 0, &mut unlimited(), Some((&pin, None))).unwrap_err();
        assert!(e.contains("percpu_hash") && e.contains("cannot be pinned"), "{e}");
    }

    #[test]
    fn per_instance_maps_are_separate_and_dumped_summed() {
        let r = Registry::default();
        let mut budget = u64::MAX;
        let s = spec("p", MapKind::PerInstanceHash, 8);
        let q0 = r.declare(&s, 0, &mut budget).unwrap();
        let q1 = r.declare(&s, 1, &mut budget).unwrap();
        assert!(!Arc::ptr_eq(&q0, &q1));
        q0.add(&[7, 0, 0, 0], 0, 2).unwrap();
        q1.add(&[7, 0, 0, 0], 0, 3).unwrap();
        q1.add(&[8, 0, 0, 0], 0, 1).unwrap();
        let (_, rows) = r.dump("p").unwrap();
        assert_eq!(
            rows,
            [(vec![7, 0, 0, 0], 5u64.to_le_bytes().to_vec()), (vec![8, 0, 0, 0], 1u64.to_le_bytes().to_vec())]
        );
        let info = &r.snapshot()[0];
        assert_eq!((info.entries, info.tables, info.kind), (3, 2, "percpu_hash"));
    }

    #[test]
    fn the_registry_holds_at_most_its_limit_and_frees_what_no_instance_holds() {
        // A policy that declares a map under a new name at each init and traps: each instance's map
        // is orphaned when it dies. The registry once kept them all, until the OOM killer came.
        let r = Registry::default();
        let one = spec("m0", MapKind::Hash, 1024).bytes();
        r.set_limit(3 * one);
        let mut live = Vec::new();
        for i in 0..3 {
            live.push(r.declare(&spec(&format!("m{i}"), MapKind::Hash, 1024), 0, &mut unlimited()).unwrap());
        }
        let e = r.declare(&spec("m3", MapKind::Hash, 1024), 0, &mut unlimited()).unwrap_err();
        assert!(e.contains("\"m3\"") && e.contains("2 x limits.map_kib"), "{e}");
        drop(live.remove(0));
        let m3 = r.declare(&spec("m3", MapKind::Hash, 1024), 0, &mut unlimited()).unwrap();
        let names: Vec<String> = r.snapshot().into_iter().map(|m| m.name).collect();
        assert_eq!(names, ["m1", "m2", "m3"], "the orphan m0 was freed for m3");
        // A thousand instances in a row, each with a map of its own, each dropped: bounded.
        drop((live, m3));
        for i in 0..1000 {
            let t = r.declare(&spec(&format!("n{i}"), MapKind::Hash, 1024), 0, &mut unlimited()).unwrap();
            drop(t);
        }
        assert!(r.snapshot().len() <= 3);
        r.sweep();
        assert!(r.snapshot().is_empty(), "nothing holds any of them");
    }

    #[test]
    fn a_table_replaced_while_in_use_is_counted_until_its_last_user_goes() {
        let r = Registry::default();
        let small = spec("m", MapKind::Hash, 1024);
        let big = spec("m", MapKind::Hash, 2048);
        r.set_limit(small.bytes() + big.bytes());
        let old = r.declare(&small, 0, &mut unlimited()).unwrap();
        let new = r.declare(&big, 0, &mut unlimited()).unwrap();
        assert!(r.declare(&spec("x", MapKind::Hash, 1), 0, &mut unlimited()).is_err(), "the old table counts");
        drop(old);
        let x = r.declare(&spec("x", MapKind::Hash, 1), 0, &mut unlimited());
        assert!(x.is_ok(), "freed with its last user");
        drop(new);
    }

    #[test]
    fn the_budget_is_checked_before_anything_is_allocated() {
        let r = Registry::default();
        let big = MapSpec {
            name: "big".into(),
            kind: MapKind::Hash,
            key_size: 64,
            value_size: 1024,
            capacity: 1 << 24,
            ttl_ms: 0,
        };
        let mut budget = 64 << 20;
        let e = r.declare(&big, 0, &mut budget).unwrap_err();
        assert!(e.contains("limits.map_kib") && e.contains("\"big\""), "{e}");
        assert_eq!(budget, 64 << 20);
        assert!(r.snapshot().is_empty());
    }
}
