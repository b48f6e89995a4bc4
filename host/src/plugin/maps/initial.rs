//! Initial entries of a map, from a file the policy names (`policy: map_entries: {MAP: FILE}`):
//! an LPM route table, an ACL, a backend list, loaded with the policy rather than written by it.
//!
//! The file is text, one entry a line, `KEY -> VALUE`, each side written as the control socket
//! takes it ([`bytes_of`]: hex, the map's typed `name=value` fields, or an `lpm_trie` prefix
//! `ADDRESS/LENGTH`); blank lines and lines starting with `#` are skipped. So the `text` of a
//! `ctl map dump` reads back as a file.
//!
//! The file is an input like any other: a regular file of at most [`MAX_FILE`] bytes, read when the
//! policy is loaded (at start and at every reload that sees the configuration or a file change); its
//! lines are turned into bytes when the policy declares the map, against the declared sizes and
//! layout, and an error names the file and the line. The table the entries go into is a new one,
//! filled before any instance of the new policy runs: the registry keeps a table across reloads
//! only while its entries file's digest is the same, so a changed file swaps the whole table at the
//! reload's switch, as one step for the port (the old policy keeps reading the old table until then).

use super::layout::{bytes_of, Side};
use super::{Layout, MapKind, MapSpec, Table};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Most bytes of an entries file.
pub const MAX_FILE: u64 = 16 << 20;

/// A policy's initial entries files, read, by map name.
pub type Initials = BTreeMap<String, Arc<InitialEntries>>;

/// Reads every file of `policy: map_entries:` and `map_pins:` (a pin file not there yet is an
/// empty one), or says which is wrong.
pub fn read_all(entries: &BTreeMap<String, PathBuf>, pins: &BTreeMap<String, PathBuf>) -> Result<Initials, String> {
    let files = entries.iter().map(|f| (f, false)).chain(pins.iter().map(|f| (f, true)));
    files
        .map(|((map, path), pin)| {
            let key = if pin { "map_pins" } else { "map_entries" };
            let mut e = bytes_of_file(path, pin)
                .and_then(|b| InitialEntries::parse(path, &b))
                .map_err(|e| format!("{key} {map:?}: {}: {e}", path.display()))?;
            e.pin = pin;
            Ok((map.clone(), Arc::new(e)))
        })
        .collect()
}

/// The content of an entries file (`pin`: a pin file not there yet reads as empty).
fn bytes_of_file(path: &Path, pin: bool) -> Result<Vec<u8>, String> {
    match crate::input::read_bounded(path, MAX_FILE) {
        Err(e) if pin && e.is_not_found() => Ok(Vec::new()),
        r => r.map_err(|e| e.to_string()),
    }
}

/// The digest of an entries file's content, as [`InitialEntries::digest`] (a reload compares it).
pub fn digest_of(path: &Path, pin: bool) -> Result<[u8; 32], String> {
    bytes_of_file(path, pin).map(|b| crate::plugin::digest(&b))
}

/// Writes the entries `rows` of map `spec` to its pin file `path`, as a file of initial entries
/// (hex `KEY -> VALUE` lines): to a new file beside it, then renamed over it, so a stop cut short
/// leaves the old file or the new one, never half of one. The file is the operator's (mode 0600).
pub fn save(path: &Path, spec: &MapSpec, rows: &super::Entries) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let mut text = format!(
        "# wasmdp map {:?}: {}, key_size {}, value_size {}, capacity {}; {} entries, written at stop\n",
        spec.name,
        spec.kind.name(),
        spec.key_size,
        spec.value_size,
        spec.capacity,
        rows.len()
    );
    for (k, v) in rows {
        text.push_str(&format!("{} -> {}\n", hex(k), hex(v)));
    }
    let name = path.file_name().ok_or(format!("{}: not a file name", path.display()))?;
    let tmp = path.with_file_name(format!(".{}.{}.tmp", name.to_string_lossy(), std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("map {:?}: pin file {}: {e}", spec.name, path.display())
    })
}

/// One entry as written: its line number, key and value text.
#[derive(Debug, PartialEq, Eq)]
struct Line {
    number: usize,
    key: String,
    value: String,
}

/// A map's initial entries, read from its file.
#[derive(Debug, PartialEq, Eq)]
pub struct InitialEntries {
    /// The file (in errors).
    pub path: PathBuf,
    /// SHA-256 of its bytes: the table is kept across reloads only while it is the same.
    pub digest: [u8; 32],
    /// A pin file (`map_pins:`): the map's entries are written back to it at stop.
    pub pin: bool,
    lines: Vec<Line>,
}

impl InitialEntries {
    /// Reads `path` (a regular file of at most [`MAX_FILE`] bytes) and splits its entries, or says
    /// what is wrong, naming the line.
    pub fn read(path: &Path) -> Result<InitialEntries, String> {
        let bytes = crate::input::read_bounded(path, MAX_FILE).map_err(|e| e.to_string())?;
        Self::parse(path, &bytes)
    }

    /// The entries of `bytes`, the content of file `path`.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<InitialEntries, String> {
        let digest = crate::plugin::digest(bytes);
        let text = std::str::from_utf8(bytes).map_err(|e| format!("is not UTF-8 text ({e})"))?;
        let mut lines = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if lines.len() as u32 == wasmdp_abi::map::MAX_CAPACITY {
                return Err(format!("line {}: more than {} entries", i + 1, wasmdp_abi::map::MAX_CAPACITY));
            }
            let (key, value) =
                line.split_once("->").ok_or(format!("line {}: {line:?} is not `KEY -> VALUE`", i + 1))?;
            lines.push(Line { number: i + 1, key: key.trim().to_string(), value: value.trim().to_string() });
        }
        Ok(InitialEntries { path: path.to_path_buf(), digest, pin: false, lines })
    }

    /// How many entries the file gives.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether it gives none.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Writes the entries into `table` (new, empty, declared as `spec` with `layout`), or says which
    /// line is wrong: a key or value that does not read as the map's sizes, more entries than the
    /// capacity, an index past an array, a key given twice (an `lpm_trie`'s prefixes compared as
    /// stored: `10.1.0.0/8` is `10.0.0.0/8`).
    pub fn fill(&self, table: &Table, layout: Option<&Layout>) -> Result<(), String> {
        let spec: &MapSpec = table.spec();
        let at = |n: usize, why: String| format!("{}, line {n}: {why}", self.path.display());
        if self.lines.len() > spec.capacity as usize {
            return Err(format!(
                "{}: {} entries; map {:?} holds at most {} (its declared capacity)",
                self.path.display(),
                self.lines.len(),
                spec.name,
                spec.capacity
            ));
        }
        let lpm = spec.kind == MapKind::LpmTrie;
        let mut seen = HashSet::with_capacity(self.lines.len());
        for l in &self.lines {
            let key = bytes_of(&l.key, Side::Key, spec.key_size, layout, lpm).map_err(|e| at(l.number, e))?;
            let value = bytes_of(&l.value, Side::Value, spec.value_size, layout, false).map_err(|e| at(l.number, e))?;
            let stored = if lpm {
                let exact = super::lpm::Prefixes::exact(&key)
                    .map_err(|_| at(l.number, format!("{:?}: the prefix length is past the address", l.key)))?;
                exact[..key.len()].to_vec()
            } else {
                key.clone()
            };
            if !seen.insert(stored) {
                return Err(at(l.number, format!("key {:?} is given again (an earlier line sets it)", l.key)));
            }
            table.update(&key, &value).map_err(|e| {
                at(
                    l.number,
                    match e {
                        super::MapError::Full => format!("map {:?} is full", spec.name),
                        super::MapError::BadIndex => {
                            format!("index {:?} is past the array's {} entries", l.key, spec.capacity)
                        }
                        super::MapError::BadPrefix => format!("{:?}: the prefix length is past the address", l.key),
                    },
                )
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file holding `text`, removed when the guard drops.
    struct Temp(PathBuf);

    impl Drop for Temp {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn file(text: &str) -> (Temp, PathBuf) {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("wasmdp-entries-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("entries.txt");
        std::fs::write(&path, text).unwrap();
        (Temp(dir), path)
    }

    fn spec(kind: MapKind, key_size: u32, value_size: u32, capacity: u32) -> MapSpec {
        MapSpec { name: "m".into(), kind, key_size, value_size, capacity, ttl_ms: 0 }
    }

    #[test]
    fn a_route_table_fills_an_lpm_trie_by_prefix() {
        let (_d, path) = file("# routes\n10.0.0.0/8 -> 01000000\n\n10.1.0.0/16 -> 02000000\n0.0.0.0/0 -> 03000000\n");
        let entries = InitialEntries::read(&path).unwrap();
        assert_eq!(entries.len(), 3);
        let t = Table::new(&spec(MapKind::LpmTrie, 8, 4, 16));
        entries.fill(&t, None).unwrap();
        let hop = |addr: [u8; 4]| {
            let mut key = 32u32.to_le_bytes().to_vec();
            key.extend_from_slice(&addr);
            let mut v = [0u8; 4];
            assert!(t.lookup(&key, &mut v));
            v[0]
        };
        assert_eq!((hop([10, 1, 2, 3]), hop([10, 2, 0, 1]), hop([192, 0, 2, 1])), (2, 1, 3));
    }

    #[test]
    fn typed_fields_and_hex_read_as_the_control_socket_takes_them() {
        let layout = super::super::layout::parse(b"m key addr:ipv4 port:be16 value backend:u32").unwrap();
        let layout = layout.get("m").unwrap();
        let (_d, path) = file("addr=10.0.0.1 port=443 -> backend=2\n0a00000201bb -> 03000000\n");
        let t = Table::new(&spec(MapKind::Hash, 6, 4, 8));
        InitialEntries::read(&path).unwrap().fill(&t, Some(layout)).unwrap();
        let mut v = [0u8; 4];
        assert!(t.lookup(&[10, 0, 0, 1, 1, 187], &mut v));
        assert_eq!(v, [2, 0, 0, 0]);
        assert!(t.lookup(&[10, 0, 0, 2, 1, 187], &mut v));
        assert_eq!(v, [3, 0, 0, 0]);
    }

    #[test]
    fn a_bad_file_is_refused_naming_the_file_and_the_line() {
        let t = || Table::new(&spec(MapKind::Hash, 4, 4, 2));
        let fill = |text: &str| {
            let (_d, path) = file(text);
            InitialEntries::read(&path).and_then(|e| e.fill(&t(), None)).unwrap_err()
        };
        let e = fill("01000000 -> 01000000\n02000000 02000000\n");
        assert!(e.contains("line 2") && e.contains("is not `KEY -> VALUE`"), "{e}");
        let e = fill("01000000 -> 01000000\n\n010000 -> 01000000\n");
        assert!(e.contains("entries.txt, line 3") && e.contains("3 bytes; the map has 4-byte keys"), "{e}");
        let e = fill("01000000 -> 01000000\n01000000 -> 02000000\n");
        assert!(e.contains("line 2") && e.contains("given again"), "{e}");
        let e = fill("01000000 -> x=1\n");
        assert!(e.contains("line 1") && e.contains("no typed layout"), "{e}");
        let e = fill("01000000 -> 01000000\n02000000 -> 01000000\n03000000 -> 01000000\n");
        assert!(e.contains("3 entries") && e.contains("at most 2"), "{e}");
        let (_d, path) = file("");
        std::fs::write(&path, [0x30, 0xff, 0xfe]).unwrap();
        assert!(InitialEntries::read(&path).unwrap_err().contains("not UTF-8"));
        // Prefixes compare as stored; a length past the address is refused.
        let lpm = Table::new(&spec(MapKind::LpmTrie, 8, 4, 4));
        let (_d, path) = file("10.0.0.0/8 -> 01000000\n10.1.0.0/8 -> 02000000\n");
        let e = InitialEntries::read(&path).unwrap().fill(&lpm, None).unwrap_err();
        assert!(e.contains("line 2") && e.contains("given again"), "{e}");
        let (_d, path) = file("10.0.0.0/33 -> 01000000\n");
        let e = InitialEntries::read(&path).unwrap().fill(&lpm, None).unwrap_err();
        assert!(e.contains("0..=32"), "{e}");
        // Not a regular file, or too big: refused before reading.
        assert!(InitialEntries::read(Path::new("/dev/zero")).unwrap_err().contains("character device"));
        let arr = Table::new(&spec(MapKind::Array, 4, 4, 2));
        let (_d, path) = file("05000000 -> 01000000\n");
        let e = InitialEntries::read(&path).unwrap().fill(&arr, None).unwrap_err();
        assert!(e.contains("line 1"), "{e}");
    }
}
