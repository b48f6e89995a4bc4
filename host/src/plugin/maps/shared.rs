//! Maps shared across ports: the names a port's `policy: shared_maps:` lists are one table for every
//! port whose policy lists and declares them alike, as a pinned BPF map opened by the programs of
//! two interfaces. A stateful firewall's flow table is written by the inside port's policy and read
//! by the outside port's.
//!
//! The dataplane holds one [`SharedMaps`]; it owns each shared table, and each port's
//! [`Registry`](super::Registry) links to it (for the stats and dumps). A shared map's shape is fixed
//! while any instance holds it: a policy declaring it otherwise is refused, naming the ports that
//! declared it (libbpf likewise refuses to reuse a pinned map whose definition differs).

use super::{MapSpec, Table};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

/// The dataplane's shared maps by name.
#[derive(Debug, Default)]
pub struct SharedMaps {
    // Touched only by `map_declare` (in init, off the hot path) and sweeps.
    inner: Mutex<BTreeMap<String, Shared>>,
}

#[derive(Debug)]
struct Shared {
    spec: MapSpec,
    table: Arc<Table>,
    /// Ports whose policies declared it (by name), for the errors.
    ports: BTreeSet<String>,
}

/// A declaration as the errors show it.
fn shape(s: &MapSpec) -> String {
    format!("{} key_size {} value_size {} capacity {}", s.kind.name(), s.key_size, s.value_size, s.capacity)
}

impl SharedMaps {
    /// The shared table `spec` names, declared by a policy of port `port`: the existing one when it
    /// was declared alike, a new one when none is held (the instance's `budget` pays for it either
    /// way, checked before anything is allocated), or why not.
    pub fn declare(&self, spec: &MapSpec, port: &str, budget: &mut u64) -> Result<Arc<Table>, String> {
        let name = &spec.name;
        if spec.kind.per_instance() {
            return Err(format!(
                "map {name:?} is listed in port `{port}`'s shared_maps, but a {} map is one per instance: \
                 shared maps are of kind hash or array",
                spec.kind.name()
            ));
        }
        let bytes = spec.affordable(*budget)?;
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = inner.get_mut(name.as_str()) {
            if s.spec == *spec {
                s.ports.insert(port.to_string());
                *budget -= bytes;
                return Ok(s.table.clone());
            }
            if Arc::strong_count(&s.table) > 1 {
                let by: Vec<String> = s.ports.iter().map(|p| format!("`{p}`")).collect();
                return Err(format!(
                    "map {name:?} is shared (shared_maps): port {} declared it as {}, port `{port}` declares \
                     it as {}; every policy sharing a map declares it alike (to change its shape, change \
                     every policy that shares it, or stop sharing it)",
                    by.join(", "),
                    shape(&s.spec),
                    shape(spec)
                ));
            }
        }
        *budget -= bytes;
        let table = Arc::new(Table::new(spec));
        let ports = BTreeSet::from([port.to_string()]);
        inner.insert(name.clone(), Shared { spec: spec.clone(), table: table.clone(), ports });
        Ok(table)
    }

    /// Frees the tables no instance holds (after a reload: no running policy declares them).
    pub fn sweep(&self) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.retain(|_, s| Arc::strong_count(&s.table) > 1);
    }

    /// Names of the shared maps held (tests, stats).
    pub fn names(&self) -> Vec<String> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).keys().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::maps::MapKind;

    fn spec(capacity: u32) -> MapSpec {
        MapSpec { name: "flows".into(), kind: MapKind::Hash, key_size: 13, value_size: 8, capacity, ttl_ms: 0 }
    }

    #[test]
    fn ports_declaring_alike_share_one_table_and_a_different_shape_is_refused_naming_them() {
        let s = SharedMaps::default();
        let mut budget = u64::MAX;
        let inside = s.declare(&spec(1024), "inside", &mut budget).unwrap();
        let outside = s.declare(&spec(1024), "outside", &mut budget).unwrap();
        assert!(Arc::ptr_eq(&inside, &outside));
        let e = s.declare(&spec(2048), "dmz", &mut budget).unwrap_err();
        assert!(
            e.contains("`inside`, `outside`")
                && e.contains("`dmz`")
                && e.contains("capacity 1024")
                && e.contains("capacity 2048"),
            "{e}"
        );
        let per = MapSpec { kind: MapKind::PerInstanceHash, ..spec(1024) };
        assert!(s.declare(&per, "inside", &mut budget).unwrap_err().contains("percpu_hash"));
        // Nobody holds it any more: a new shape may take the name, and a sweep frees it.
        drop((inside, outside));
        let new = s.declare(&spec(2048), "dmz", &mut budget).unwrap();
        assert!(new.is_empty());
        drop(new);
        s.sweep();
        assert!(s.names().is_empty());
    }

    #[test]
    fn the_budget_is_checked_before_a_shared_table_is_made() {
        let s = SharedMaps::default();
        let mut budget = spec(1024).bytes() - 1;
        assert!(s.declare(&spec(1024), "inside", &mut budget).unwrap_err().contains("limits.map_kib"));
        assert!(s.names().is_empty());
    }
}
