//! A stream's counters per link of its policy chain, by link name: kept across reloads for as long
//! as a link of that name is in the chain (an edited link keeps its counters, as a single policy
//! always kept them across swaps), in the chain's order for the stats.

use crate::plugin::PluginCounters;
use std::sync::{Arc, Mutex};

/// The counters of each link of a stream's chain. Locked only by the control thread (at reloads)
/// and the stats display, never by the worker: each runner holds its own link's [`PluginCounters`].
#[derive(Debug, Default)]
pub struct LinkCounters {
    links: Mutex<Vec<(Arc<str>, Arc<PluginCounters>)>>,
}

impl LinkCounters {
    /// The counters of link `name`, made (at the end) when the stream has had no such link.
    pub fn link(&self, name: &str) -> Arc<PluginCounters> {
        let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, c)) = links.iter().find(|(n, _)| &**n == name) {
            return c.clone();
        }
        let c = Arc::new(PluginCounters::default());
        links.push((name.into(), c.clone()));
        c
    }

    /// Keeps the counters of the links named, in that order, and forgets the others (links that
    /// left the chain, or that a refused reload made).
    pub fn keep<'a>(&self, names: impl IntoIterator<Item = &'a str>) {
        let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
        let mut kept = Vec::with_capacity(links.len());
        for name in names {
            if let Some(i) = links.iter().position(|(n, _)| &**n == name) {
                kept.push(links.swap_remove(i));
            }
        }
        *links = kept;
    }

    /// Each link's name and counters, in the chain's order.
    pub fn snapshot(&self) -> Vec<(Arc<str>, Arc<PluginCounters>)> {
        self.links.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering::Relaxed;

    #[test]
    fn a_link_keeps_its_counters_by_name_in_the_chains_order() {
        let l = LinkCounters::default();
        l.link("acl").calls.store(7, Relaxed);
        l.link("lb").calls.store(3, Relaxed);
        assert!(Arc::ptr_eq(&l.link("acl"), &l.link("acl")));
        l.keep(["lb", "acl"]);
        let got: Vec<(String, u64)> =
            l.snapshot().iter().map(|(n, c)| (n.to_string(), c.calls.load(Relaxed))).collect();
        assert_eq!(got, [("lb".to_string(), 3), ("acl".to_string(), 7)]);
        l.keep(["acl"]);
        assert_eq!(l.link("lb").calls.load(Relaxed), 0, "a link that left starts again from zero");
    }
}
