//! Puts a configuration together and runs it: pool, ports, streams, workers, stats, live reloads,
//! stop.

mod build;
mod preflight;
mod run;

pub use build::{apply, build, Dataplane, Overrides};
pub use preflight::preflight;
pub use run::{run, start, RunOptions, RunReport, Running};
