//! wasmdp: a programmable software packet dataplane.
//!
//! The host runs the poll loop ([`lcore`]): worker threads pinned to cores poll their streams in
//! bursts, receive from a port ([`ports`]), run a forwarding engine ([`engines`]) whose inner loops
//! are native kernels ([`simd`]), apply TX offloads in software ([`offload`]) and transmit. Packets
//! live in buffers from a pool ([`mbuf`]); headers are read through [`wire`]. [`config`] parses the
//! YAML, [`stats`] counts and displays, [`dataplane`] puts it all together.
//!
//! # Public surface
//!
//! To run a dataplane from a program: [`config::load`] / [`config::parse`] (errors:
//! [`config::ConfigError`]), [`dataplane::preflight`], [`dataplane::build`] and [`dataplane::run`] (or
//! [`dataplane::start`] and [`dataplane::Running::finish`]), which return the JSON report; plugins
//! alone: [`plugin::Runtime`] and [`plugin::Plugin::load`] (errors: [`plugin::LoadError`],
//! [`plugin::InstanceError`]). `anyhow` is used where a caller can only report (building and
//! running the dataplane), typed errors where a caller may act on which failure it was.
//!
//! The building blocks ([`mbuf`], [`ports`], [`engines`], [`lcore`], [`wire`], [`simd`],
//! [`offload`]) are public too: the benchmarks, the integration tests and the fuzz targets assemble
//! streams from them by hand. Everything public is documented and safe to use from safe code: a
//! kernel variant runs only with a [`simd::Simd`] that proves the CPU supports it, a packet's buffer
//! is reached only through [`mbuf::Pkt`], whose accessors keep its invariant. `fuzzing` and
//! `Runner::poke` exist for the fuzz targets only.

// Module overviews name their private parts (the control socket's server, the plugin runtime's
// deadline): those links resolve in `cargo doc --document-private-items`, the view for developers
// of the host.
#![allow(rustdoc::private_intra_doc_links)]

/// Runs `$run` with the const `$N` set to `$value` when that is one of the values listed, else to
/// 0 (the value is then read at run time): one instance of `$run` per common size, whose loops copy
/// and index in fixed moves (the burst area's windows, the map batches' keys and values).
macro_rules! with_const {
    ($value:expr, $N:ident in [$($v:literal),+] => $run:expr) => {
        match $value {
            $($v => {
                const $N: usize = $v;
                $run
            })+
            _ => {
                const $N: usize = 0;
                $run
            }
        }
    };
}

pub mod bench;
pub mod capture;
pub mod cli;
pub mod config;
pub mod control;
pub mod dataplane;
pub mod engines;
pub mod fuzzing;
pub mod input;
pub mod lcore;
pub mod mbuf;
pub mod offload;
pub mod output;
pub mod plugin;
pub mod ports;
pub mod reload;
pub mod simd;
pub mod stats;

/// Frame headers: the `wasmdp-wire` crate, shared with the ABI crate and plugins.
pub use wasmdp_wire as wire;
