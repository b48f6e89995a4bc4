//! Why a plugin could not be loaded or instantiated: typed, so that callers can tell a file problem
//! from a module the host refuses, and a plugin that refused its configuration from one that trapped.

use std::path::PathBuf;

/// A plugin file that cannot run here. Each message starts with `plugin <path>:`.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read: missing, not a regular file, over `limits.module_kib`.
    #[error("plugin {}: {reason}", path.display())]
    File {
        /// The module file.
        path: PathBuf,
        /// What went wrong (with a hint where one helps).
        reason: String,
    },
    /// The file is not a WebAssembly module.
    #[error("plugin {}: not a WebAssembly module (no \\0asm header)", path.display())]
    NotWasm {
        /// The module file.
        path: PathBuf,
    },
    /// The module is over a static limit, uses a feature the host does not allow, or is invalid.
    #[error("plugin {}: {reason}", path.display())]
    Module {
        /// The module file.
        path: PathBuf,
        /// The limit or construct, named.
        reason: String,
    },
    /// An import or export does not match the ABI.
    #[error("plugin {}: {reason}", path.display())]
    Abi {
        /// The module file.
        path: PathBuf,
        /// The import or export, and what the ABI has.
        reason: String,
    },
    /// A file of `map_entries:` could not be read or split into entries (naming the file and line).
    #[error("{0}")]
    MapEntries(String),
}

/// An instance that could not be made.
#[derive(Debug, thiserror::Error)]
pub enum InstanceError {
    /// The start function, `wasmdp_abi_version` or `wasmdp_init` trapped (the deadline included).
    #[error("{during} trapped: {cause}")]
    Trapped {
        /// Which step.
        during: &'static str,
        /// The trap, with where it happened when known.
        cause: String,
    },
    /// Built for another major version of the ABI.
    #[error("built for ABI v{major}.{minor}; this host runs ABI v{host} (rebuild it with a matching wasmdp-sdk)")]
    Version {
        /// The module's major version.
        major: u32,
        /// Its minor version.
        minor: u32,
        /// The host's major version.
        host: u32,
    },
    /// Declares an ABI minor version older than one of its imports.
    #[error("declares ABI v1.{minor} but imports `{import}`, which ABI v1.{since} added (declare 1.{since}: build it with a wasmdp-sdk of 1.{since} or later)")]
    ImportTooNew {
        /// The module's minor version.
        minor: u32,
        /// The import.
        import: String,
        /// The minor version that added it.
        since: u32,
    },
    /// `wasmdp_init` returned nonzero: it refused its configuration.
    #[error("init refused the configuration (code {code}; the plugin's log above says why)")]
    Refused {
        /// What it returned.
        code: i32,
    },
    /// A map with initial entries (`map_entries:`) was refused (an entry the file gets wrong, no
    /// room) or never declared.
    #[error("{0}")]
    MapEntries(String),
    /// wasmtime could not set the instance up (an export of the wrong type, out of memory).
    #[error("{0}")]
    Setup(String),
}
