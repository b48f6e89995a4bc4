//! Typed map layouts, as BTF lets bpftool print a map: field names and types of a map's key and
//! value, which a module declares in its custom section `wasmdp.map_layouts` (the SDK's
//! `map_layout!`), one line per map:
//!
//! ```text
//! fw_flows key inside:ipv4 outside:ipv4 iport:be16 oport:be16 proto:u8 value seen:u8
//! ```
//!
//! The control socket then shows entries as `inside=10.0.0.5 outside=198.51.100.7 ... -> seen=1`
//! and takes keys and values in that form. The section is the plugin's, so it is bounded and
//! checked like any input: at most [`MAX_SECTION`] bytes, [`MAX_MAPS`] lines, [`MAX_FIELDS`] fields
//! a side; the sizes must add up to the map's key and value sizes when the map is declared.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

/// The custom section's name.
pub const SECTION: &str = "wasmdp.map_layouts";
/// Most bytes of the section.
pub const MAX_SECTION: usize = 16 * 1024;
/// Most maps described.
pub const MAX_MAPS: usize = 64;
/// Most fields of a key or a value.
pub const MAX_FIELDS: usize = 32;
/// The field types: `u8 u16 u32 u64` (little-endian), `be16 be32 be64` (network order), `ipv4`,
/// `ipv6`, `mac`, and `hexN` (N bytes shown as hex, 1..=1024).
pub const TYPES: &str = "u8, u16, u32, u64, be16, be32, be64, ipv4, ipv6, mac, hexN (N bytes)";

/// How a field's bytes read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Le,
    Be,
    Ipv4,
    Ipv6,
    Mac,
    Hex,
}

/// One field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    name: String,
    kind: Kind,
    size: usize,
}

/// A map's key and value fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    key: Vec<Field>,
    value: Vec<Field>,
}

/// The layouts a module declares, by map name.
pub type Layouts = BTreeMap<String, Arc<Layout>>;

fn field(text: &str) -> Result<Field, String> {
    let (name, ty) = text.split_once(':').ok_or(format!("field {text:?} is not NAME:TYPE"))?;
    if name.is_empty() || name.len() > 32 || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(format!("field name {name:?}: use 1-32 characters of [A-Za-z0-9_]"));
    }
    let size = wasmdp_abi::map::field_size(ty).ok_or(format!("field {name:?}: type {ty:?} is not one of {TYPES}"))?;
    let kind = match ty {
        "u8" | "u16" | "u32" | "u64" => Kind::Le,
        "be16" | "be32" | "be64" => Kind::Be,
        "ipv4" => Kind::Ipv4,
        "ipv6" => Kind::Ipv6,
        "mac" => Kind::Mac,
        _ => Kind::Hex,
    };
    Ok(Field { name: name.to_string(), kind, size })
}

/// A record's fields from `NAME:TYPE ...` (an event's), at most [`MAX_FIELDS`], each name once.
pub fn fields(text: &str) -> Result<Vec<Field>, String> {
    let mut out: Vec<Field> = Vec::new();
    for w in text.split_whitespace() {
        if out.len() == MAX_FIELDS {
            return Err(format!("more than {MAX_FIELDS} fields"));
        }
        let f = field(w)?;
        if out.iter().any(|g| g.name == f.name) {
            return Err(format!("field {:?} appears twice", f.name));
        }
        out.push(f);
    }
    if out.is_empty() {
        return Err(format!("no fields: write NAME:TYPE ... (types {TYPES})"));
    }
    Ok(out)
}

/// The bytes the fields take.
pub fn size(fields: &[Field]) -> usize {
    fields.iter().map(|f| f.size).sum()
}

/// `bytes` as a JSON object of the fields: integers as numbers, addresses and `hexN` as text.
pub fn json(fields: &[Field], mut bytes: &[u8]) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    for f in fields {
        let (b, rest) = bytes.split_at(f.size.min(bytes.len()));
        bytes = rest;
        let v = match f.kind {
            Kind::Le => serde_json::json!(b.iter().rev().fold(0u64, |w, &x| w << 8 | u64::from(x))),
            Kind::Be => serde_json::json!(b.iter().fold(0u64, |w, &x| w << 8 | u64::from(x))),
            _ => serde_json::json!(value_text(f, b)),
        };
        out.insert(f.name.clone(), v);
    }
    serde_json::Value::Object(out)
}

/// Parses the section's text: the layouts by map name, or what is wrong (naming the line).
pub fn parse(section: &[u8]) -> Result<Layouts, String> {
    if section.len() > MAX_SECTION {
        return Err(format!("custom section {SECTION} is {} bytes; at most {MAX_SECTION}", section.len()));
    }
    let text = std::str::from_utf8(section).map_err(|_| format!("custom section {SECTION} is not UTF-8"))?;
    let mut out = Layouts::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let err = |why: String| format!("custom section {SECTION}, line {}: {why}", n + 1);
        if out.len() == MAX_MAPS {
            return Err(err(format!("more than {MAX_MAPS} maps")));
        }
        let mut words = line.split_whitespace();
        let map = words.next().unwrap_or_default().to_string();
        if !super::name_ok(&map) {
            return Err(err(format!("{map:?} is not a map name")));
        }
        if words.next() != Some("key") {
            return Err(err(format!("write `{map} key NAME:TYPE ... value NAME:TYPE ...`")));
        }
        let (mut key, mut value, mut in_value) = (Vec::new(), Vec::new(), false);
        for w in words {
            if w == "value" && !in_value {
                in_value = true;
                continue;
            }
            let side = if in_value { &mut value } else { &mut key };
            if side.len() == MAX_FIELDS {
                return Err(err(format!("more than {MAX_FIELDS} fields")));
            }
            side.push(field(w).map_err(err)?);
        }
        if key.is_empty() || value.is_empty() {
            return Err(err(format!("map {map:?} needs fields for both its key and its value")));
        }
        if out.insert(map.clone(), Arc::new(Layout { key, value })).is_some() {
            return Err(err(format!("map {map:?} is described twice")));
        }
    }
    Ok(out)
}

/// The module's layouts: its `wasmdp.map_layouts` custom sections, concatenated (the linker
/// concatenates the sections of each object file), empty when it has none.
pub fn of_module(bytes: &[u8]) -> Result<Layouts, String> {
    let mut text = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        if let Ok(wasmparser::Payload::CustomSection(c)) = payload {
            if c.name() == SECTION {
                if text.len() + c.data().len() > MAX_SECTION {
                    return Err(format!("custom sections {SECTION} hold more than {MAX_SECTION} bytes"));
                }
                text.extend_from_slice(c.data());
                text.push(b'\n');
            }
        }
    }
    parse(&text)
}

impl Layout {
    /// Whether the fields add up to the declared sizes, or what is wrong.
    pub fn check(&self, map: &str, key_size: u32, value_size: u32) -> Result<(), String> {
        let sum = |f: &[Field]| f.iter().map(|f| f.size).sum::<usize>();
        let (k, v) = (sum(&self.key), sum(&self.value));
        if k != key_size as usize || v != value_size as usize {
            return Err(format!(
                "map {map:?}: its layout ({SECTION}) describes {k}-byte keys and {v}-byte values; it is declared with {key_size} and {value_size}"
            ));
        }
        Ok(())
    }

    /// `key` and `value` as `name=value` words: `inside=10.0.0.5 iport=40000 -> seen=1`.
    pub fn show(&self, key: &[u8], value: &[u8]) -> String {
        format!("{} -> {}", show(&self.key, key), show(&self.value, value))
    }

    /// A key in the `name=value` form, as bytes.
    pub fn key_bytes(&self, text: &str) -> Result<Vec<u8>, String> {
        read(&self.key, text)
    }

    /// A value in the `name=value` form, as bytes.
    pub fn value_bytes(&self, text: &str) -> Result<Vec<u8>, String> {
        read(&self.value, text)
    }
}

/// Which side of an entry a text gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Key,
    Value,
}

/// The bytes a key or value written as text stands for, as the control socket and initial entries
/// files take them: hex (two digits a byte), or `name=value` fields when the map has a typed
/// `layout`, or (an `lpm_trie`'s key) a prefix `ADDRESS/LENGTH`. Exactly `size` bytes.
pub fn bytes_of(text: &str, side: Side, size: u32, layout: Option<&Layout>, lpm: bool) -> Result<Vec<u8>, String> {
    let name = if side == Side::Key { "key" } else { "value" };
    let b = if let Some(b) = unhex(text) {
        b
    } else if let Some(b) = lpm.then(|| prefix(text)).flatten().filter(|_| side == Side::Key) {
        b?
    } else if let Some(l) = layout {
        read(if side == Side::Key { &l.key } else { &l.value }, text)?
    } else {
        let prefix = if lpm && side == Side::Key { ", ADDRESS/LENGTH" } else { "" };
        return Err(format!(
            "{text:?} is not hex (two digits a byte){prefix}, and the map declares no typed layout for `name=value` fields"
        ));
    };
    if b.len() != size as usize {
        return Err(format!("{text:?} is {} bytes; the map has {size}-byte {name}s", b.len()));
    }
    Ok(b)
}

/// Bytes of a hex string (None: not hex).
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.is_empty() || !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

/// An `lpm_trie` key from `ADDRESS/LENGTH` (None: not of that form): the length as a little-endian
/// `u32`, then the address.
fn prefix(text: &str) -> Option<Result<Vec<u8>, String>> {
    let (addr, len) = text.split_once('/')?;
    let addr: std::net::IpAddr = addr.parse().ok()?;
    let most = if addr.is_ipv4() { 32 } else { 128 };
    Some(match len.parse::<u32>() {
        Ok(n) if n <= most => {
            let mut key = n.to_le_bytes().to_vec();
            match addr {
                std::net::IpAddr::V4(a) => key.extend_from_slice(&a.octets()),
                std::net::IpAddr::V6(a) => key.extend_from_slice(&a.octets()),
            }
            Ok(key)
        }
        _ => Err(format!("{text:?}: the prefix length is not 0..={most}")),
    })
}

fn show(fields: &[Field], mut bytes: &[u8]) -> String {
    let mut out = String::new();
    for f in fields {
        let (b, rest) = bytes.split_at(f.size.min(bytes.len()));
        bytes = rest;
        if !out.is_empty() {
            out.push(' ');
        }
        let _ = write!(out, "{}={}", f.name, value_text(f, b));
    }
    out
}

/// One field's bytes as text.
fn value_text(f: &Field, b: &[u8]) -> String {
    match f.kind {
        Kind::Le => b.iter().rev().fold(0u64, |w, &x| w << 8 | u64::from(x)).to_string(),
        Kind::Be => b.iter().fold(0u64, |w, &x| w << 8 | u64::from(x)).to_string(),
        Kind::Ipv4 => std::net::Ipv4Addr::from(<[u8; 4]>::try_from(b).unwrap_or_default()).to_string(),
        Kind::Ipv6 => std::net::Ipv6Addr::from(<[u8; 16]>::try_from(b).unwrap_or_default()).to_string(),
        Kind::Mac => b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(":"),
        Kind::Hex => b.iter().map(|x| format!("{x:02x}")).collect(),
    }
}

fn read(fields: &[Field], text: &str) -> Result<Vec<u8>, String> {
    let mut given: BTreeMap<&str, &str> = BTreeMap::new();
    for w in text.split_whitespace() {
        let (k, v) = w.split_once('=').ok_or(format!("{w:?} is not NAME=VALUE"))?;
        if given.insert(k, v).is_some() {
            return Err(format!("field {k:?} is given twice"));
        }
    }
    let mut out = Vec::new();
    for f in fields {
        let v = given.remove(f.name.as_str()).ok_or(format!("field {:?} is missing", f.name))?;
        let bad = |what: &str| format!("field {:?}: {v:?} is not {what}", f.name);
        match f.kind {
            Kind::Le | Kind::Be => {
                let n: u64 = v.parse().map_err(|_| bad("a number"))?;
                if f.size < 8 && n >> (8 * f.size) != 0 {
                    return Err(bad(&format!("a number of {} bytes", f.size)));
                }
                let le = n.to_le_bytes();
                let bytes = &le[..f.size];
                if f.kind == Kind::Le {
                    out.extend_from_slice(bytes);
                } else {
                    out.extend(bytes.iter().rev());
                }
            }
            Kind::Ipv4 => out.extend(v.parse::<std::net::Ipv4Addr>().map_err(|_| bad("an IPv4 address"))?.octets()),
            Kind::Ipv6 => out.extend(v.parse::<std::net::Ipv6Addr>().map_err(|_| bad("an IPv6 address"))?.octets()),
            Kind::Mac | Kind::Hex => {
                let hex: String = v.chars().filter(|&c| c != ':').collect();
                let b = (0..hex.len())
                    .step_by(2)
                    .map(|i| hex.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
                    .collect::<Option<Vec<u8>>>()
                    .filter(|b| b.len() == f.size)
                    .ok_or_else(|| bad(&format!("{} bytes of hex", f.size)))?;
                out.extend(b);
            }
        }
    }
    if let Some(k) = given.keys().next() {
        return Err(format!("no field is called {k:?}"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FW: &[u8] = b"fw_flows key inside:ipv4 outside:ipv4 iport:be16 oport:be16 proto:u8 value seen:u8\n";

    #[test]
    fn a_layout_shows_entries_by_field_and_reads_them_back() {
        let l = parse(FW).unwrap();
        let fw = &l["fw_flows"];
        fw.check("fw_flows", 13, 1).unwrap();
        let key = [10, 0, 0, 5, 198, 51, 100, 7, 0x9c, 0x40, 1, 0xbb, 6];
        let text = fw.show(&key, &[1]);
        assert_eq!(text, "inside=10.0.0.5 outside=198.51.100.7 iport=40000 oport=443 proto=6 -> seen=1");
        let (k, v) = text.split_once(" -> ").unwrap();
        assert_eq!((fw.key_bytes(k).unwrap(), fw.value_bytes(v).unwrap()), (key.to_vec(), vec![1]));
        assert_eq!(
            fw.check("fw_flows", 16, 1).unwrap_err(),
            "map \"fw_flows\": its layout (wasmdp.map_layouts) describes 13-byte keys and 1-byte values; it is declared with 16 and 1"
        );
        assert_eq!(fw.key_bytes("inside=10.0.0.5").unwrap_err(), "field \"outside\" is missing");
        assert_eq!(fw.value_bytes("seen=300").unwrap_err(), "field \"seen\": \"300\" is not a number of 1 bytes");
        assert_eq!(fw.value_bytes("seen=1 other=2").unwrap_err(), "no field is called \"other\"");
    }

    #[test]
    fn a_hostile_section_is_refused_naming_the_line() {
        for (text, want) in [
            (&b"m key a:u9 value b:u8"[..], "line 1: field \"a\": type \"u9\" is not one of"),
            (b"\nm key a:u8", "line 2: map \"m\" needs fields for both"),
            (b"m/x key a:u8 value b:u8", "line 1: \"m/x\" is not a map name"),
            (b"m key a:u8 value b:u8\nm key a:u8 value b:u8", "line 2: map \"m\" is described twice"),
            (b"m a:u8", "line 1: write `m key NAME:TYPE"),
            (b"m key a:hex0 value b:u8", "type \"hex0\""),
            (b"\xff", "is not UTF-8"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
        let many: String = (0..65).map(|i| format!("m{i} key a:u8 value b:u8\n")).collect();
        assert!(parse(many.as_bytes()).unwrap_err().contains("more than 64 maps"));
        let wide = format!("m key {} value b:u8", (0..33).map(|i| format!("f{i}:u8")).collect::<Vec<_>>().join(" "));
        assert!(parse(wide.as_bytes()).unwrap_err().contains("more than 32 fields"));
        assert!(parse(&vec![b' '; MAX_SECTION + 1]).unwrap_err().contains("at most 16384"));
    }
}
