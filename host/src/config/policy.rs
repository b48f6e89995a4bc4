//! `policy:` of a port: the WebAssembly plugin that decides per burst, its parameters, limits and
//! what happens when it fails; or a chain of them, run in order (a list of such links).

use super::Bounded;
use serde::de::{self, Deserializer};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Most links in a port's policy chain.
pub const MAX_LINKS: usize = 16;

/// `policy:` of a port: nothing, one policy (a mapping, as it was always written), or a chain of
/// links run in order (a list of such mappings, at most [`MAX_LINKS`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Chain {
    links: Vec<PolicyCfg>,
    /// Written as a list (errors then name `policy[K]`), not as one mapping.
    listed: bool,
}

impl Chain {
    /// A chain of these links, as if written as a list.
    pub fn of(links: Vec<PolicyCfg>) -> Chain {
        Chain { listed: links.len() != 1, links }
    }

    /// The links, in order.
    pub fn links(&self) -> &[PolicyCfg] {
        &self.links
    }

    /// The links, to change (paths made relative to the config file).
    pub fn links_mut(&mut self) -> &mut [PolicyCfg] {
        &mut self.links
    }

    /// Whether the port has no policy.
    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// The first link: a single policy's only one.
    pub fn first(&self) -> Option<&PolicyCfg> {
        self.links.first()
    }

    /// Where link `k` is in the configuration, for messages: `policy`, or `policy[k]` in a list.
    pub fn key(&self, k: usize) -> String {
        if self.listed {
            format!("policy[{k}]")
        } else {
            "policy".into()
        }
    }
}

impl From<PolicyCfg> for Chain {
    fn from(p: PolicyCfg) -> Chain {
        Chain { links: vec![p], listed: false }
    }
}

impl<'de> Deserialize<'de> for Chain {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Links;
        impl<'de> de::Visitor<'de> for Links {
            type Value = Chain;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "a policy (a mapping with `plugin:`) or a list of at most {MAX_LINKS} of them (a chain)")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Chain, E> {
                Ok(Chain::default())
            }
            fn visit_map<A: de::MapAccess<'de>>(self, m: A) -> Result<Chain, A::Error> {
                PolicyCfg::deserialize(de::value::MapAccessDeserializer::new(m)).map(Chain::from)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut s: A) -> Result<Chain, A::Error> {
                let mut links = Vec::new();
                // Counted before each link is read: a list of a million links stops at the 17th.
                while let Some(link) = s.next_element::<PolicyCfg>()? {
                    if links.len() == MAX_LINKS {
                        return Err(de::Error::custom(format!(
                            "more than {MAX_LINKS} links in the policy chain; the limit is {MAX_LINKS}"
                        )));
                    }
                    links.push(link);
                }
                if links.is_empty() {
                    return Err(de::Error::custom("an empty policy chain; leave `policy:` out for no policy"));
                }
                Ok(Chain { links, listed: true })
            }
        }
        d.deserialize_any(Links)
    }
}

/// One policy: `policy:` of a port, or one link of its chain.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PolicyCfg {
    /// The link's name in a chain: what stats, `ctl policies` and Prometheus (label `link`) call it,
    /// and how a reload recognises the link (an edited link of the same name keeps its counters).
    /// Default: the plugin file's stem (`acl` for `acl.wasm` and `native:acl`).
    #[serde(default)]
    pub name: Option<String>,
    /// Path of the .wasm module (relative paths are relative to the config file), or `native:NAME`:
    /// the host's own native build of example policy NAME (`plugin::native`; trusted, no sandbox).
    pub plugin: PathBuf,
    /// Parameters handed to the plugin's init (scalars only), read with `param_get`.
    #[serde(default)]
    pub params: BTreeMap<String, ParamValue>,
    /// What to do when the plugin traps, times out or returns an error.
    #[serde(default)]
    pub on_failure: FailurePolicy,
    /// Traps within `failure_window_s` after which the plugin is disabled (the failure policy then
    /// applies to every burst).
    #[serde(default = "default_max_failures")]
    pub max_failures: Bounded<1, 10_000>,
    /// The window, in seconds, over which traps count towards `max_failures`.
    #[serde(default = "default_failure_window")]
    pub failure_window_s: Bounded<1, 86_400>,
    /// Resource limits.
    #[serde(default)]
    pub limits: LimitsCfg,
    /// Milliseconds between calls of the plugin's optional tick (0: never).
    #[serde(default = "default_tick_ms")]
    pub tick_ms: Bounded<0, 3_600_000>,
    /// Names of the maps this policy shares with the policies of other ports that list them: one
    /// table for all of them (hash and array kinds, declared alike).
    #[serde(default)]
    pub shared_maps: Vec<String>,
    /// Initial entries of the policy's maps, from a file per map (relative paths are relative to
    /// the config file): `KEY -> VALUE` lines (`plugin::maps::initial`). A map whose file's content
    /// changes is made anew from the file at the reload that sees it, atomically for the port.
    #[serde(default)]
    pub map_entries: BTreeMap<String, PathBuf>,
    /// Maps kept in a file across restarts of the process, as a pinned BPF map outlives its loader:
    /// the file's entries (when it exists) are the map's initial entries at start, and the map's
    /// entries are written back to it at a clean stop (same format as `map_entries`).
    #[serde(default)]
    pub map_pins: BTreeMap<String, PathBuf>,
}

impl PolicyCfg {
    /// The link's name: `name:`, else the plugin file's stem.
    pub fn link_name(&self) -> String {
        if let Some(n) = &self.name {
            return n.clone();
        }
        let p = self.plugin.to_string_lossy();
        let p = p.strip_prefix("native:").unwrap_or(&p);
        let file = p.rsplit('/').next().unwrap_or(p);
        file.strip_suffix(".wasm").unwrap_or(file).to_string()
    }
}

fn default_max_failures() -> Bounded<1, 10_000> {
    Bounded(5)
}

fn default_failure_window() -> Bounded<1, 86_400> {
    Bounded(60)
}

fn default_tick_ms() -> Bounded<0, 3_600_000> {
    Bounded(100)
}

/// `on_failure:`
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FailurePolicy {
    /// Run the port's native engine on the burst.
    #[default]
    FailOpen,
    /// Drop the burst (counted as `plugin` drops).
    FailClosed,
    /// Re-instantiate the plugin, with exponential backoff; the native engine runs meanwhile.
    Reload,
}

impl FailurePolicy {
    /// Config name.
    pub fn name(self) -> &'static str {
        match self {
            FailurePolicy::FailOpen => "fail_open",
            FailurePolicy::FailClosed => "fail_closed",
            FailurePolicy::Reload => "reload",
        }
    }
}

/// `limits:`
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsCfg {
    /// CPU time a single call into the plugin may use, in microseconds (checked every 250 us tick of
    /// the epoch ticker: a call is cut within two ticks after it).
    pub deadline_us: Bounded<250, 10_000_000>,
    /// Largest linear memory, KiB.
    pub memory_kib: Bounded<64, 4_194_304>,
    /// Largest table, elements (growing a table is one uninterruptible step, so this stays small).
    pub table_elements: Bounded<0, 100_000>,
    /// Largest module file, KiB (compiling costs up to about 1.5 s per MiB of code).
    pub module_kib: Bounded<1, 65_536>,
    /// Memory an instance's map declarations may allocate, KiB (a shared map counts once, against
    /// the instance that declared it first; checked before anything is allocated).
    pub map_kib: Bounded<0, 4_194_304>,
}

impl Default for LimitsCfg {
    fn default() -> Self {
        LimitsCfg {
            deadline_us: Bounded(1000),
            memory_kib: Bounded(16 * 1024),
            table_elements: Bounded(10_000),
            module_kib: Bounded(4 * 1024),
            map_kib: Bounded(64 * 1024),
        }
    }
}

/// A parameter value: any YAML scalar, kept as the text written in the file (`1.10` stays
/// `"1.10"`, `0x10` stays `"0x10"`; a quoted string is its content).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamValue(pub String);

/// Longest parameter value, bytes.
pub const MAX_PARAM_VALUE: usize = 4096;

impl<'de> Deserialize<'de> for ParamValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text;
        impl de::Visitor<'_> for Text {
            type Value = String;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string, number or boolean (lists: write them as one comma-separated string)")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<String, E> {
                if s.len() > MAX_PARAM_VALUE {
                    return Err(E::custom(format!(
                        "parameter value of {} bytes; the limit is {MAX_PARAM_VALUE}",
                        s.len()
                    )));
                }
                Ok(s.to_string())
            }
        }
        // Asking for a string gets a scalar's text as written, whatever it looks like.
        d.deserialize_str(Text).map(ParamValue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_arrive_as_the_text_written() {
        let m: BTreeMap<String, ParamValue> =
            serde_yaml::from_str("{a: 1.10, b: 0x10, c: 1e3, d: 12345678901234567890123, e: true, f: 'x y', g: \"\"}")
                .unwrap();
        let got: Vec<&str> = m.values().map(|v| v.0.as_str()).collect();
        assert_eq!(got, ["1.10", "0x10", "1e3", "12345678901234567890123", "true", "x y", ""]);
        assert!(serde_yaml::from_str::<ParamValue>("[1, 2]").is_err());
        assert!(serde_yaml::from_str::<ParamValue>(&"x".repeat(5000))
            .unwrap_err()
            .to_string()
            .contains("limit is 4096"));
    }
}
