//! WebAssembly policies: a port's plugin decides per burst which native engine runs and which
//! offloads are set, and may inspect or change packets through host functions (ABI v1, `wasmdp-abi`,
//! described in docs/ABI.md).
//!
//! [`Runtime`] owns the one wasmtime `Engine`, the epoch ticker that bounds every call, and the
//! compile cache. [`Plugin`] is a checked, compiled module ready to instantiate. Each stream gets its
//! own [`Runner`] (its own `Store` and instance: workers never share a store), which applies the
//! failure policy and sticky decisions around each call.

mod calls;
mod check;
mod counters;
mod hostfns;
mod instance;
mod runner;
mod runtime;
mod state;

pub use calls::measure as measure_calls;
pub use counters::{now_ns, PluginCounters};
pub use instance::{digest, Plugin};
pub use runner::Runner;
pub use runtime::Runtime;
