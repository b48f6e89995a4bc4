//! What wasmtime is given to compile: the plugin's bytes, checked against the static limits and
//! validated with exactly the WebAssembly features the host allows, then instrumented so that every
//! call stays interruptible (see [`instrument`]).
//!
//! Everything here runs on attacker-controlled bytes before any compilation, in time linear in the
//! module's size, and refuses with a message that names the limit or the construct.

mod instrument;
mod limits;
mod shim;

pub(crate) use limits::StaticLimits;
pub use limits::{MAX_FUNCTIONS, MAX_FUNCTION_BODY};

use wasmparser::WasmFeatures;

/// The WebAssembly features a plugin may use: the MVP plus SIMD128, bulk memory, multi-value,
/// reference types (funcref tables), sign extension, non-trapping float-to-int, mutable globals and
/// extended constant expressions. Everything else (threads, multiple memories, memory64, GC,
/// exceptions, tail calls, relaxed SIMD, ...) is refused at load. The wasmtime engine is configured
/// with the same set.
pub(crate) const FEATURES: WasmFeatures = WasmFeatures::MUTABLE_GLOBAL
    .union(WasmFeatures::SATURATING_FLOAT_TO_INT)
    .union(WasmFeatures::SIGN_EXTENSION)
    .union(WasmFeatures::REFERENCE_TYPES)
    .union(WasmFeatures::MULTI_VALUE)
    .union(WasmFeatures::BULK_MEMORY)
    .union(WasmFeatures::SIMD)
    .union(WasmFeatures::FLOATS)
    .union(WasmFeatures::EXTENDED_CONST);

/// Version of the instrumentation: part of the compile cache's key, so that a change here never
/// runs code compiled by an older version.
pub(crate) const INSTRUMENT_VERSION: u32 = 3;

/// Checks `bytes` against `limits` (nothing else: a module found in the compile cache was validated
/// when it was compiled, but the limits are the port's and may have changed).
pub(crate) fn check_limits(bytes: &[u8], limits: &StaticLimits) -> Result<(), String> {
    limits::scan(bytes, limits).map(|_| ())
}

/// Checks `bytes` against `limits`, validates them, and returns the instrumented module.
pub(crate) fn prepare(bytes: &[u8], limits: &StaticLimits) -> Result<Vec<u8>, String> {
    let shape = limits::scan(bytes, limits)?;
    wasmparser::Validator::new_with_features(FEATURES).validate_all(bytes).map_err(|e| {
        format!("is not a valid WebAssembly module for this host: {} (at byte offset {:#x})", e.message(), e.offset())
    })?;
    instrument::rewrite(bytes, &shape)
}

#[cfg(test)]
mod tests;
