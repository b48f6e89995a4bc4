//! What the generated files are made of: the structures and constants of the ABI in the order the
//! files show them. The import table is `wasmdp_abi::import::IMPORTS`.

pub mod assemblyscript;
pub mod c;
pub mod markdown;
pub mod zig;

use wasmdp_abi::import::{Import, Ty};
use wasmdp_abi::layout::{Field, Only};
use wasmdp_abi::*;

/// A structure of the plugin's memory: its C name, what it is, its Rust module, size and fields
/// (those of one shape).
pub struct Struct {
    pub c_name: &'static str,
    pub title: &'static str,
    pub module: &'static str,
    pub size: usize,
    pub fields: Vec<Field>,
}

fn shape(fields: &[Field], not: Only) -> Vec<Field> {
    fields.iter().copied().filter(|f| f.only != not).collect()
}

pub fn structs() -> Vec<Struct> {
    vec![
        Struct {
            c_name: "wasmdp_area_header",
            title: "Burst area header",
            module: "area::hdr",
            size: area::HEADER,
            fields: area::hdr::FIELDS.to_vec(),
        },
        Struct {
            c_name: "wasmdp_desc",
            title: "Descriptor (areas with windows)",
            module: "area::desc",
            size: area::DESC,
            fields: shape(area::desc::FIELDS, Only::Direct),
        },
        Struct {
            c_name: "wasmdp_direct_desc",
            title: "Descriptor (areas with `DIRECT`)",
            module: "area::desc",
            size: area::DESC,
            fields: shape(area::desc::FIELDS, Only::Windows),
        },
        Struct {
            c_name: "wasmdp_direct_head",
            title: "Direct head (areas with `DIRECT | HEADS`)",
            module: "area::direct_head",
            size: area::DIRECT_HEAD,
            fields: area::direct_head::FIELDS.to_vec(),
        },
        Struct {
            c_name: "wasmdp_context_header",
            title: "Context header",
            module: "context",
            size: context::HEADER,
            fields: context::FIELDS.to_vec(),
        },
        Struct {
            c_name: "wasmdp_context_port",
            title: "Context port entry",
            module: "context::port",
            size: context::PORT,
            fields: context::port::FIELDS.to_vec(),
        },
    ]
}

/// A group of constants: a comment, and each as (C name, value as C writes it).
pub struct Group {
    pub what: &'static str,
    pub consts: Vec<(String, String)>,
}

macro_rules! group {
    ($what:literal, $prefix:literal, $path:path, [$($name:ident),* $(,)?]) => {{
        use $path as m;
        Group {
            what: $what,
            consts: vec![$((format!("WASMDP_{}{}", $prefix, stringify!($name)), value(m::$name as i128))),*],
        }
    }};
}

/// A constant as C writes it: decimal, or hex with a suffix for wide flags.
fn value(v: i128) -> String {
    if v < 0 {
        format!("({v})")
    } else if v > i32::MAX as i128 {
        format!("0x{v:x}ULL")
    } else if v >= 0xffff && (v.count_ones() == 1 || v & (v + 1) == 0) || v == wasmdp_abi::ABI_VERSION as i128 {
        format!("0x{v:x}")
    } else {
        v.to_string()
    }
}

pub fn groups() -> Vec<Group> {
    vec![
        group!(
            "The ABI version a module returns from wasmdp_abi_version",
            "",
            wasmdp_abi,
            [ABI_MAJOR, ABI_MINOR, ABI_VERSION]
        ),
        group!("Limits", "", wasmdp_abi, [MAX_BURST, ALL_PACKETS, MAX_COUNTERS]),
        group!(
            "Engine ids (run_engine, set_sticky, the area's engine and ENGINE verdicts)",
            "ENGINE_",
            engine,
            [IO, MAC, MACSWAP, FIVETSWAP, COPY, RXONLY, VXLAN_ENCAP, VXLAN_DECAP, GENEVE_ENCAP, GENEVE_DECAP, COUNT]
        ),
        group!(
            "TX offload flags (ol_flags bits)",
            "FLAG_",
            flags,
            [TX_VLAN, TX_QINQ, TX_MACSEC, TX_IP_CKSUM, TX_UDP_CKSUM, TX_TCP_CKSUM, ALLOWED]
        ),
        group!(
            "Error codes (negative results)",
            "ERR_",
            err,
            [
                BAD_INDEX, BAD_RANGE, BAD_MEMORY, BAD_ENGINE, BAD_PORT, BAD_FLAGS, NOT_FOUND, TOO_SMALL, NO_BURST,
                GONE, FULL, NO_ROOM, NOT_INIT
            ]
        ),
        group!("Log levels", "LEVEL_", level, [ERROR, WARN, INFO, DEBUG]),
        group!("wasmdp_on_burst's engine verdict: WASMDP_RUN_ENGINE | id", "", verdict, [RUN_ENGINE]),
        group!(
            "The burst area: sizes and burst_area's window flags",
            "AREA_",
            area,
            [HEADER, DESC, MAX_WINDOW, WINDOW_BYTES, FLOW_HASH, HEADS, DIRECT, DROPS, DIRECT_HEAD, LEN_BYTES]
        ),
        group!("Descriptor verdicts", "VERDICT_", area::verdict, [PASS, DROP, SEND, ENGINE]),
        group!("Descriptor RX flags", "RX_", area::rx, [VLAN, TUNNEL]),
        group!("The context: sizes and port flags", "CONTEXT_", context, [HEADER, PORT, SENDABLE, MAX_PORTS]),
        group!(
            "Map kinds and limits",
            "MAP_",
            map,
            [
                HASH,
                ARRAY,
                PERCPU_HASH,
                PERCPU_ARRAY,
                LRU_HASH,
                LPM_TRIE,
                NEXT_KEY_SLOTS,
                MAX_LPM_DATA,
                MAX_TTL_MS,
                MAX_KEY,
                MAX_VALUE,
                MAX_CAPACITY,
                MAX_NAME
            ]
        ),
    ]
}

/// Doc lines as one line of text.
pub fn one_line(doc: &str) -> String {
    doc.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

/// What an import's argument is, from the table's native type: a pointer into the plugin's memory
/// (to bytes read, text read, bytes written, a `u64` read and written) or a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    Bytes,
    Text,
    BytesOut,
    U64InOut,
    Int(Ty),
}

pub fn arg(imp: &Import, i: usize) -> Arg {
    let native: String = imp.natives[i].chars().filter(|c| !c.is_whitespace()).collect();
    match native.as_str() {
        "&[u8]" => Arg::Bytes,
        "&str" => Arg::Text,
        "&mut[u8]" | "*mut[u8]" => Arg::BytesOut,
        "&mutu64" => Arg::U64InOut,
        "" => Arg::Int(imp.params[i]),
        other => panic!("{}: no argument kind for `{other}`", imp.name),
    }
}

/// `text` wrapped at 100 columns as lines starting with `indent` and `mark`.
pub fn wrapped(out: &mut String, indent: &str, mark: &str, text: &str) {
    let mut line = format!("{indent}{mark}");
    for word in text.split_whitespace() {
        if line.len() + 1 + word.len() > 100 {
            out.push_str(&line);
            out.push('\n');
            line = format!("{indent}{mark}");
        }
        line.push(' ');
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
}
