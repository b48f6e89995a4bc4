//! `wasmdp bench --plugin FILE [--params K=V,...] [--native ENGINE]`: a user's plugin measured in
//! the same cells as the examples: on the `wasm` path against `io` on the same ports and frames and,
//! with `--native`, against that native engine (then the baseline of its ratios).

use std::path::{Path, PathBuf};

/// A user's plugin and how to measure it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserPlugin {
    /// The name of its cells (`engine` in the table and the JSON): the file's stem.
    pub name: String,
    /// The module.
    pub file: PathBuf,
    /// Its params as a YAML flow mapping, every value a quoted string (`{k: 'v'}`).
    pub params: String,
    /// The native engine it is compared with, if any.
    pub native: Option<String>,
}

/// A cell's name or a param's key: letters, digits, `_`, `-`, `.` (plain in the table and in YAML).
fn is_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
}

/// Longest `--params` in bytes altogether: params are a config's, not a data channel.
const MAX_PARAMS: usize = 4096;

impl UserPlugin {
    /// From the command line: `params` as `K=V` items. Checks what the config would otherwise
    /// report as a YAML error far from the flag: the file, each key (letters, digits, `_`, `-`,
    /// `.`), each value (no control characters), and the native engine's name.
    pub fn new(file: &Path, params: &[String], native: Option<&str>) -> anyhow::Result<UserPlugin> {
        let meta = std::fs::metadata(file).map_err(|e| anyhow::anyhow!("--plugin {}: {e}", file.display()))?;
        if !meta.is_file() {
            anyhow::bail!("--plugin {}: not a regular file (a .wasm module is)", file.display());
        }
        let name = file
            .file_stem()
            .and_then(|s| s.to_str())
            .filter(|s| is_name(s))
            .ok_or_else(|| {
                anyhow::anyhow!("--plugin {}: the file's name must be letters, digits, `_`, `-`, `.`", file.display())
            })?
            .to_string();
        if params.iter().map(|p| p.len() + 1).sum::<usize>() > MAX_PARAMS {
            anyhow::bail!("--params: longer than {MAX_PARAMS} bytes altogether");
        }
        let mut items = Vec::new();
        for p in params.iter().filter(|p| !p.is_empty()) {
            let (k, v) = p.split_once('=').ok_or_else(|| anyhow::anyhow!("--params `{p}`: expected KEY=VALUE"))?;
            if !is_name(k) {
                anyhow::bail!("--params `{p}`: the key must be letters, digits, `_`, `-`, `.`");
            }
            if v.chars().any(char::is_control) {
                anyhow::bail!("--params `{k}`: the value holds a control character");
            }
            // A single-quoted YAML scalar: every character stands for itself but the quote, doubled.
            items.push(format!("{k}: '{}'", v.replace('\'', "''")));
        }
        if let Some(e) = native {
            if crate::engines::lookup(e).is_none() {
                anyhow::bail!("--native `{e}`: not an engine; allowed {}", crate::engines::names());
            }
        }
        Ok(UserPlugin {
            name,
            file: file.to_path_buf(),
            params: format!("{{{}}}", items.join(", ")),
            native: native.map(String::from),
        })
    }

    /// The policy of both ports, YAML: the file's path as a quoted scalar, so that any path reads
    /// back as itself.
    pub fn policy(&self) -> String {
        let file = self.file.display().to_string().replace('\'', "''");
        format!("{{plugin: '{file}', params: {}, {}}}", self.params, super::cell::POLICY_TAIL)
    }
}

#[cfg(test)]
mod tests {
    use super::UserPlugin;

    /// A file to name (its contents are the config's business, not these checks').
    fn module(tag: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("wasmdp-bench-user-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("my_policy.wasm");
        std::fs::write(&f, b"\0asm").unwrap();
        f
    }

    #[test]
    fn params_become_quoted_yaml_whatever_they_hold() {
        let f = module("params");
        let params = ["deny_udp_dst_port=9".to_string(), "note=it's {a}: b, c".to_string()];
        let u = UserPlugin::new(&f, &params, Some("macswap")).unwrap();
        assert_eq!(u.name, "my_policy");
        assert_eq!(u.params, "{deny_udp_dst_port: '9', note: 'it''s {a}: b, c'}");
        let v: serde_yaml::Value = serde_yaml::from_str(&u.params).unwrap();
        assert_eq!(v["note"].as_str(), Some("it's {a}: b, c"), "the value arrives as written");
    }

    #[test]
    fn bad_flags_name_what_was_wrong() {
        let f = module("errors");
        let err = |params: &[&str], native| {
            let params: Vec<String> = params.iter().map(|s| s.to_string()).collect();
            UserPlugin::new(&f, &params, native).unwrap_err().to_string()
        };
        assert!(err(&["novalue"], None).contains("--params `novalue`: expected KEY=VALUE"));
        assert!(err(&["a b=1"], None).contains("the key must be"));
        assert!(err(&["a=x\ny"], None).contains("control character"));
        assert!(err(&["a=1"], Some("warp")).contains("--native `warp`: not an engine; allowed"));
        let long = format!("a={}", "x".repeat(5000));
        assert!(err(&[&long], None).contains("longer than 4096 bytes"));
        let dir = f.parent().unwrap();
        let e = UserPlugin::new(dir, &[], None).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let e = UserPlugin::new(&dir.join("none.wasm"), &[], None).unwrap_err().to_string();
        assert!(e.contains("none.wasm"), "{e}");
    }
}
