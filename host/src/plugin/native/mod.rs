//! Native builds of the example policies, as Envoy's NullVM runs proxy-wasm filters: the same
//! source as the `.wasm` modules of `plugins/`, compiled into the host against the SDK's
//! [`wasmdp_sdk::native`] layer, whose imports are answered by the same host functions a module's
//! are ([`host`]). A config names one with `plugin: native:NAME`.
//!
//! What they are for: `wasmdp bench` measures each per-packet example against its own native build
//! (the wasm tax, `path: native`). What they are not: a sandbox. A native build runs with the
//! host's privileges and without a deadline; only the policies in [`TWINS`], which ship with the
//! host, exist.

mod host;

pub(crate) use host::NativeHost;
use std::path::Path;
use wasmdp_sdk::native::{Instance, NativePolicy};
use wasmdp_sdk::Policy;

/// The prefix of `plugin:` that names a native build.
pub const PREFIX: &str = "native:";

/// A policy compiled into the host.
pub struct Twin {
    /// Its name: the `.wasm` file name of its WebAssembly build, without `.wasm`.
    pub name: &'static str,
    make: fn() -> Box<dyn NativePolicy>,
}

impl Twin {
    /// A new, uninitialised instance.
    pub(crate) fn instance(&self) -> Box<dyn NativePolicy> {
        (self.make)()
    }
}

#[cfg_attr(not(feature = "native-examples"), allow(dead_code))]
fn make<P: Policy + Send>() -> Box<dyn NativePolicy> {
    Box::<Instance<P>>::default()
}

/// Every native build, by the name of its WebAssembly build: none without the feature
/// `native-examples`.
pub const TWINS: &[Twin] = &[
    #[cfg(feature = "native-examples")]
    Twin { name: "acl", make: make::<acl::Acl> },
    #[cfg(feature = "native-examples")]
    Twin { name: "dnat", make: make::<dnat::Dnat> },
    #[cfg(feature = "native-examples")]
    Twin { name: "dscp_remark", make: make::<dscp_remark::DscpRemark> },
    #[cfg(feature = "native-examples")]
    Twin { name: "l4_lb", make: make::<l4_lb::L4Lb> },
    #[cfg(feature = "native-examples")]
    Twin { name: "ratelimit", make: make::<ratelimit::RateLimit> },
    #[cfg(feature = "native-examples")]
    Twin { name: "static_policy", make: make::<static_policy::StaticPolicy> },
    #[cfg(feature = "native-examples")]
    Twin { name: "vxlan_decap", make: make::<vxlan_decap::VxlanDecap> },
    #[cfg(feature = "native-examples")]
    Twin { name: "vxlan_encap", make: make::<vxlan_encap::VxlanEncap> },
    #[cfg(feature = "native-examples")]
    Twin { name: "wasm_macswap", make: make::<wasm_macswap::WasmMacswap> },
];

/// Whether this binary has the native builds (the feature `native-examples`).
pub fn available() -> bool {
    !TWINS.is_empty()
}

/// The native build `plugin:` names (`native:NAME`): `None` for a file, `Some(Err(name))` for an
/// unknown name.
pub fn named(plugin: &Path) -> Option<Result<&'static Twin, String>> {
    let name = plugin.to_str()?.strip_prefix(PREFIX)?;
    Some(TWINS.iter().find(|t| t.name == name).ok_or_else(|| name.to_string()))
}

/// The names, for errors.
pub fn names() -> String {
    if !available() {
        return "none: this binary was built without the feature `native-examples`".to_string();
    }
    TWINS.iter().map(|t| t.name).collect::<Vec<_>>().join(", ")
}
