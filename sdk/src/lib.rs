//! SDK for wasmdp policy plugins: WebAssembly modules that decide, per port and per burst, what the
//! host's native dataplane does with the packets (ABI v1, [`wasmdp_abi`]; the prose reference is
//! `docs/ABI.md`).
//!
//! `no_std`, no allocator. A plugin is a `cdylib` built for `wasm32-unknown-unknown`; it implements
//! [`Policy`] and exports it with [`export_policy!`]. The packets stay in the host: the plugin reads
//! and writes bytes through [`Packet`], runs the host's native engines on ranges of the [`Burst`],
//! requests TX [`Offloads`], drops or redirects packets, and can hand the port back to a native engine
//! for good with a [`Sticky`] decision.
//!
//! | item | host import(s) |
//! |---|---|
//! | [`Burst::len`], [`Burst::current`] | `burst_len` (the length is also `wasmdp_on_burst`'s argument) |
//! | [`Packet::len`], [`Packet::read`], [`Packet::write`], [`Burst::copy`] | `pkt_len`, `pkt_read`, `pkt_write`, `pkt_copy` |
//! | [`Burst::run_engine`], [`Burst::macswap`] | `run_engine`, `macswap` |
//! | [`Burst::set_offloads`], [`Packet::set_offloads`] | `set_offloads` |
//! | [`Burst::drop`], [`Burst::send_to`] (and on [`Packet`]) | `drop_pkt`, `send_to` |
//! | [`Sticky::set`], [`Sticky::clear`] | `set_sticky`, `clear_sticky` |
//! | [`Counter::register`], [`Counter::add`] | `counter_register`, `counter_add` |
//! | [`Params`] | `param_get` |
//! | [`log`], [`info!`] & co. | `log` |
//! | [`now_ns`] | `now_ns` |
//! | [`random`] | `random` |
//!
//! Every import's safe wrapper is in [`sys`], and its `extern` declaration is made there from the
//! ABI's one table ([`wasmdp_abi::for_each_import!`]); nothing else in the crate is `extern`. Every wrapper returns `Result<_, `[`Error`]`>` and never panics.
//!
//! # Example: a static policy
//!
//! The `static-policy` plugin of `plugins/`: one engine and one set of offloads for every packet,
//! optionally handed to the host as a sticky decision after the first burst.
//!
//! ```
//! use wasmdp_sdk::{Burst, Engine, Error, Offloads, Params, Policy, Refusal, Sticky};
//!
//! struct StaticPolicy {
//!     engine: Engine,
//!     offloads: Offloads,
//!     sticky: bool,
//!     sticky_set: bool,
//! }
//!
//! impl Policy for StaticPolicy {
//!     fn init(_port: u32, params: &Params) -> Result<Self, Refusal> {
//!         let engine = params.get_engine("engine")?.unwrap_or(Engine::Macswap);
//!         let mut buf = [0u8; 128];
//!         let mut offloads = match params.try_get("offloads", &mut buf)? {
//!             None => Offloads::NONE,
//!             Some(list) => Offloads::parse_list(list)
//!                 .map_err(|bad| Refusal::param("offloads", bad, "an offload name"))?,
//!         };
//!         offloads.vlan_tci = params.get_u16("vlan")?.unwrap_or(0);
//!         offloads.vlan_tci_outer = params.get_u16("vlan_outer")?.unwrap_or(0);
//!         let sticky = params.get_bool("sticky")?.unwrap_or(false);
//!         Ok(StaticPolicy { engine, offloads, sticky, sticky_set: false })
//!     }
//!
//!     fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
//!         burst.run_engine(self.engine, ..)?;
//!         if !self.offloads.is_empty() {
//!             // After the engine: engines mark packets with the TX port's own offloads.
//!             burst.set_offloads(self.offloads)?;
//!         }
//!         if self.sticky && !self.sticky_set {
//!             // This burst is still ours; from the next one on the host runs the engine natively.
//!             Sticky::new(self.engine).offloads(self.offloads).set()?;
//!             self.sticky_set = true;
//!         }
//!         Ok(())
//!     }
//! }
//!
//! wasmdp_sdk::export_policy!(StaticPolicy);
//! # // Natively, the same code runs against the fake host of `mock`:
//! # use wasmdp_sdk::mock;
//! # mock::reset();
//! # mock::set_param("offloads", "vlan_insert, ipv4_cksum");
//! # mock::set_param("vlan", "100");
//! # let mut p = StaticPolicy::init(0, &Params::host()).unwrap();
//! # mock::begin_burst(&[&[0xaa; 60]]);
//! # p.on_burst(&mut Burst::current().unwrap()).unwrap();
//! # let out = mock::end_burst();
//! # assert_eq!(out[0].engines, [Engine::Macswap.id()]);
//! # assert_eq!(out[0].vlan_tci, 100);
//! ```
//!
//! with, in its `Cargo.toml`:
//!
//! ```toml
//! [lib]
//! crate-type = ["cdylib"]
//!
//! [dependencies]
//! wasmdp-sdk = { path = "../../sdk" }
//! ```
//!
//! Build it with `cargo build --target wasm32-unknown-unknown --release` (`scripts/build-plugins.sh`
//! builds every plugin of `plugins/`), and use a release profile with `panic = "abort"`.
//!
//! # Failures
//!
//! `on_burst` returning `Err` makes `wasmdp_on_burst` return the error's negative code; a refusal in
//! `init` is logged and makes `wasmdp_init` return [`status::REFUSED`]. A panic traps (see below).
//! The host contains both: it applies the port's failure policy (`docs/ABI.md`). An instance that
//! trapped is not used again by the host; should it be, the generated exports answer
//! [`status::POISONED`] rather than run on a half-updated policy.
//!
//! # Features
//!
//! * `panic-handler` (default): on `wasm32`, a `#[panic_handler]` that logs "panic at FILE:LINE" at
//!   level error and traps (`unreachable`). Turn it off (`default-features = false`) to provide your
//!   own, or when building with `std`.
//! * `mock`: the fake host `mock` on native targets, for unit tests (a dev-dependency feature; see
//!   below). A native build linked into a program leaves it off and carries no fake host.
//!
//! # Testing a policy natively
//!
//! On any target other than `wasm32`, [`sys`] calls the host installed on the thread instead of the
//! imports (the crate then links `std`). The module `mock` (on those targets, with the feature
//! `mock`: enable it in your crate's `[dev-dependencies]`) is a per-thread fake host, installed by `mock::reset()`, a test's first step: a policy's `init` and
//! `on_burst` can then be unit-tested with `cargo test` as in the example above. With no host
//! installed, every import fails (`NO_BURST`) rather than answering from a fake. A host may instead
//! answer the imports itself and run the policy natively (`native`, also on those targets only:
//! what `wasmdp` does for its example policies, `plugin: native:NAME`); [`export_policy!`] then
//! exports nothing, so that several policies can be linked into one program.
#![no_std]
#![warn(missing_docs)]

#[cfg(not(target_arch = "wasm32"))]
extern crate std;

pub mod area;
#[cfg(not(target_arch = "wasm32"))]
mod backend;
mod burst;
mod context;
mod counter;
mod engine;
mod error;
mod event;
mod fours;
mod heads;
pub mod log;
mod map;
#[cfg(all(not(target_arch = "wasm32"), any(test, feature = "mock")))]
pub mod mock;
#[cfg(not(target_arch = "wasm32"))]
pub mod native;
/// Zero-copy header views on a packet window (what [`Packet::read`] gives; it may be shorter than the
/// packet), the lean fast path, and the Internet checksums: `wasmdp-wire`'s views, the same crate
/// the host parses and checksums with, so host and plugin read a frame by the same rules.
pub use wasmdp_wire::view as net;
mod offloads;
mod params;
mod params_net;
mod policy;
pub mod sys;
mod text;
mod typed_map;
mod verdict;

pub use area::{AreaSpec, Window, Windows};
pub use burst::{Burst, Packet};
/// The crate [`TypedMap`]'s keys and values are bound by (`Pod`, `Zeroable` and their derives).
pub use bytemuck;
pub use context::Context;
pub use counter::{now_ns, Counter, Gauge};
pub use engine::Engine;
pub use error::Error;
pub use event::Event;
pub use heads::{Heads, Verdict, Verdicts, VerdictsMut};
#[doc(hidden)]
pub use map::__layout_bytes;
pub use map::{ArrayMap, Lpm, Lpm4, Lpm6, Map, MapKind};
pub use offloads::{Offloads, Sticky};
pub use params::{parse_u64, Params};
pub use params_net::{parse_mac, Cidr, Prefix4};
#[doc(hidden)]
pub use policy::__private;
pub use policy::{status, Policy, Refusal, REASON_CAP};
pub use sys::random;
pub use text::StackStr;
pub use typed_map::TypedMap;
/// The ABI crate: versions, import names, engine ids, flags, error codes.
pub use wasmdp_abi as abi;
pub use wasmdp_abi::hash::flow_hash;

/// The ABI version this SDK implements ([`wasmdp_abi::ABI_VERSION`]).
pub const ABI_VERSION: u32 = wasmdp_abi::ABI_VERSION;

/// Logs the panic's location at level error, then traps: the host contains the trap (failure policy).
#[cfg(all(target_arch = "wasm32", not(test), feature = "panic-handler"))]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    let mut msg = StackStr::<160>::new();
    msg.push_str("panic");
    if let Some(loc) = info.location() {
        msg.push_str(" at ").push_str(loc.file()).push_str(":").push_u64(loc.line().into());
    }
    log::error(msg.as_str());
    core::arch::wasm32::unreachable()
}
