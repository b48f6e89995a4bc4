//! A port's maps by name, for the life of the dataplane: what a reload's new instances find again.

use super::{MapSpec, Table};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// A map's entries: key and value bytes.
pub type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// The tables of one name: one shared, or one per instance.
#[derive(Debug)]
enum Tables {
    Shared(Arc<Table>),
    PerInstance(BTreeMap<u32, Arc<Table>>),
}

#[derive(Debug)]
struct Entry {
    spec: MapSpec,
    tables: Tables,
}

/// A port's maps.
#[derive(Debug, Default)]
pub struct Registry {
    // Touched only by `map_declare` (in init, off the hot path) and by stats/dumps.
    entries: Mutex<BTreeMap<String, Entry>>,
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
}

impl Registry {
    /// The table instance `instance` uses for `spec`: the existing one when a map of that name was
    /// declared identically before (by another queue, or by the policy this one replaces), a new one
    /// otherwise (replacing a differently declared one). `budget` (bytes the instance may still
    /// declare) pays for the table either way, and is checked before anything is allocated.
    pub fn declare(&self, spec: &MapSpec, instance: u32, budget: &mut u64) -> Result<Arc<Table>, String> {
        let bytes = spec.bytes();
        if bytes > *budget {
            return Err(format!(
                "map {:?} needs {} KiB; limits.map_kib leaves {} KiB for this instance",
                spec.name,
                bytes.div_ceil(1024),
                *budget / 1024
            ));
        }
        *budget -= bytes;
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let entry =
            entries.entry(spec.name.clone()).or_insert_with(|| Entry { spec: spec.clone(), tables: Self::empty(spec) });
        if entry.spec != *spec {
            *entry = Entry { spec: spec.clone(), tables: Self::empty(spec) };
        }
        Ok(match &mut entry.tables {
            Tables::Shared(t) => t.clone(),
            Tables::PerInstance(by_instance) => {
                by_instance.entry(instance).or_insert_with(|| Arc::new(Table::new(spec))).clone()
            }
        })
    }

    fn empty(spec: &MapSpec) -> Tables {
        if spec.kind.per_instance() {
            Tables::PerInstance(BTreeMap::new())
        } else {
            Tables::Shared(Arc::new(Table::new(spec)))
        }
    }

    /// Every map, for the stats.
    pub fn snapshot(&self) -> Vec<MapInfo> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .values()
            .map(|e| {
                let tables: Vec<&Arc<Table>> = match &e.tables {
                    Tables::Shared(t) => vec![t],
                    Tables::PerInstance(m) => m.values().collect(),
                };
                MapInfo {
                    name: e.spec.name.clone(),
                    kind: e.spec.kind.name(),
                    key_size: e.spec.key_size,
                    value_size: e.spec.value_size,
                    capacity: e.spec.capacity,
                    entries: tables.iter().map(|t| u64::from(t.len())).sum(),
                    tables: tables.len(),
                }
            })
            .collect()
    }

    /// The entries of map `name` (per-instance maps summed by key, value words added), or None.
    pub fn dump(&self, name: &str) -> Option<(MapSpec, Entries)> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let e = entries.get(name)?;
        let rows = match &e.tables {
            Tables::Shared(t) => t.entries(),
            Tables::PerInstance(m) => {
                let mut sum: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
                for (k, v) in m.values().flat_map(|t| t.entries()) {
                    let acc = sum.entry(k).or_insert_with(|| vec![0; v.len()]);
                    add_words(acc, &v);
                }
                sum.into_iter().collect()
            }
        };
        Some((e.spec.clone(), rows))
    }
}

/// `acc += v`, as little-endian u64 words (a short last word as its bytes), wrapping.
fn add_words(acc: &mut [u8], v: &[u8]) {
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

    fn spec(name: &str, kind: MapKind, capacity: u32) -> MapSpec {
        MapSpec { name: name.into(), kind, key_size: 4, value_size: 8, capacity }
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
    fn the_budget_is_checked_before_anything_is_allocated() {
        let r = Registry::default();
        let big =
            MapSpec { name: "big".into(), kind: MapKind::Hash, key_size: 64, value_size: 1024, capacity: 1 << 24 };
        let mut budget = 64 << 20;
        let e = r.declare(&big, 0, &mut budget).unwrap_err();
        assert!(e.contains("limits.map_kib") && e.contains("\"big\""), "{e}");
        assert_eq!(budget, 64 << 20);
        assert!(r.snapshot().is_empty());
    }
}
