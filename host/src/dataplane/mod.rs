//! Puts a configuration together and runs it: pool, ports, streams, workers, stats, stop.

mod build;
mod run;

pub use build::{build, Dataplane, Overrides};
pub use run::{run, RunOptions, RunReport};
