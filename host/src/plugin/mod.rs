//! WebAssembly policies: a port's plugin decides per burst which native engine runs and which
//! offloads are set, and may inspect or change packets, through host functions or the burst area
//! (ABI 1.1, `wasmdp-abi`, described in docs/ABI.md), and keep state in maps ([`maps`]).
//!
//! [`Runtime`] owns the one wasmtime `Engine`, the epoch ticker, the compile cache and a service
//! thread. [`Plugin`] is a module read within its size limit, checked against the static limits
//! ([`module`]), instrumented so that every call stays interruptible, compiled, and checked against
//! the ABI, ready to instantiate. Each stream gets its own [`Runner`] (its own `Store` and instance:
//! workers never share a store), which applies the failure policy and sticky decisions around each
//! call. Deadlines count the plugin's CPU time ([`deadline`]).

mod area;
mod cache;
mod calls;
mod chain;
mod check;
mod counters;
mod deadline;
mod direct;
mod env;
mod error;
pub mod events;
mod hostfns;
mod instance;
mod logs;
pub mod maps;
mod memory;
mod module;
pub mod native;
mod ops;
mod runner;
mod runtime;
mod sends;
mod state;

pub use calls::{measure as measure_calls, CallCosts};
pub use chain::{Chain, ChainPlan, LinkCounters, LinkPlan};
pub use counters::{now_ns, PluginCounters, OPERATOR_DISABLE, OPERATOR_ENABLE, TIME_EVERY};
pub use direct::{DirectSlot, BUFFERS as DIRECT_BUFFERS};
pub use env::{PortInfo, StreamEnv};
pub use error::{InstanceError, LoadError};
pub use instance::{digest, Plugin};
pub use logs::{BURST as LOG_BURST, MAX_LOG_BYTES, PER_SECOND as LOG_PER_SECOND};
pub use module::{MAX_FUNCTIONS, MAX_FUNCTION_BODY};
pub use ops::info::MAX_PARAM_KEY;
pub use runner::Runner;
pub use runtime::{Runtime, TICK};
