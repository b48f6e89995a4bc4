//! Live reconfiguration: the YAML file (and every plugin file it names) is watched; a change is
//! parsed, validated, compiled and instantiated on the control thread, and only when all of it
//! succeeded published to the workers, which switch between two bursts.
//!
//! Workers pay one relaxed atomic load per loop for this ([`Control::word`]). The word holds the
//! generation and a "preparing" bit: while it is set, workers time the gaps between their loops, so
//! that the report can say how long a reload held a poll loop up.

mod control;
mod diff;
mod plane;
mod prepare;
mod watch;

pub use control::{Control, ReloadStats, Slot, StreamUpdate, WorkerLink};
pub use plane::{settings, Plane, PluginShown, StreamSpec};
pub use prepare::LoadedPlugin;
pub use watch::spawn as spawn_watcher;
