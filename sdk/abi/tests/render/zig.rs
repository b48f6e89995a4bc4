//! `sdk/zig/wasmdp.zig`: the ABI as a Zig module (Zig 0.15 and later have no `@cImport`, and
//! `translate-c` drops the C header's import-module attributes): the same imports, constants and
//! layouts as `sdk/c/wasmdp.h`, with the offsets checked at compile time.

use super::{arg, groups, one_line, structs, wrapped as doc, Arg, Struct};
use std::fmt::Write;
use wasmdp_abi::import::{Import, Ty, IMPORTS};
use wasmdp_abi::layout::{self, Dir};

fn arg_type(imp: &Import, i: usize) -> &'static str {
    match arg(imp, i) {
        Arg::Text | Arg::Bytes => "[*]const u8",
        Arg::BytesOut => "[*]u8",
        Arg::U64InOut => "*u64",
        Arg::Int(Ty::I32) => "i32",
        Arg::Int(Ty::I64) => "i64",
    }
}

fn result_type(imp: &Import) -> &'static str {
    match imp.results {
        [] => "void",
        [Ty::I32] => "i32",
        [Ty::I64] => "i64",
        _ => unreachable!("at most one result"),
    }
}

fn field_type(t: layout::Ty) -> &'static str {
    match t {
        layout::Ty::U8 => "u8",
        layout::Ty::Mac => "[6]u8",
        layout::Ty::U16 => "u16",
        layout::Ty::I16 => "i16",
        layout::Ty::U32 => "u32",
        layout::Ty::I32 => "i32",
        layout::Ty::U64 => "u64",
    }
}

/// `wasmdp_area_header` as `AreaHeader`.
fn type_name(c_name: &str) -> String {
    c_name.trim_start_matches("wasmdp_").split('_').map(|w| w[..1].to_uppercase() + &w[1..]).collect()
}

fn structure(out: &mut String, s: &Struct) {
    let name = type_name(s.c_name);
    doc(out, "", "///", &format!("{} ({}, {} bytes).", s.title, s.module, s.size));
    let _ = writeln!(out, "pub const {name} = extern struct {{");
    let mut at = 0;
    for f in &s.fields {
        if f.offset > at {
            let _ = writeln!(out, "    _pad{at}: [{}]u8,", f.offset - at);
        }
        let dir = match f.dir {
            Dir::In => "in",
            Dir::Out => "out",
        };
        doc(out, "    ", "///", &format!("{dir}: {}", one_line(f.doc)));
        let _ = writeln!(out, "    {}: {},", f.name.to_lowercase(), field_type(f.ty));
        at = f.offset + f.ty.size();
    }
    if s.size > at {
        let _ = writeln!(out, "    _pad{at}: [{}]u8,", s.size - at);
    }
    let _ = writeln!(out, "}};\ncomptime {{\n    if (@sizeOf({name}) != {}) @compileError(\"{name} size\");", s.size);
    for f in &s.fields {
        let m = f.name.to_lowercase();
        let _ = writeln!(out, "    if (@offsetOf({name}, \"{m}\") != {}) @compileError(\"{name}.{m}\");", f.offset);
    }
    out.push_str("}\n\n");
}

pub fn module() -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "//! The wasmdp plugin ABI {}.{} for Zig: imports, constants and the layouts of the burst area and\n\
         //! the context. GENERATED from the wasmdp-abi crate (sdk/abi) by\n\
         //! `WASMDP_BLESS=1 cargo test -p wasmdp-abi --test generated`: do not edit. The C header\n\
         //! sdk/c/wasmdp.h is made from the same tables; the prose is docs/ABI.md.\n",
        wasmdp_abi::ABI_MAJOR,
        wasmdp_abi::ABI_MINOR
    );
    for g in groups() {
        doc(&mut out, "", "//", &format!("{}.", g.what));
        for (name, value) in &g.consts {
            let value = value.trim_end_matches("ULL");
            let _ = writeln!(out, "pub const {} = {value};", name.trim_start_matches("WASMDP_"));
        }
        out.push('\n');
    }
    doc(&mut out, "", "///", "Engine names by id, as configs and params spell them.");
    let names: Vec<String> = wasmdp_abi::engine::NAMES.iter().map(|n| format!("\"{n}\"")).collect();
    let _ = writeln!(out, "pub const ENGINE_NAMES = [_][]const u8{{ {} }};\n", names.join(", "));
    for s in structs() {
        structure(&mut out, &s);
    }
    doc(
        &mut out,
        "",
        "//",
        "The host functions (module \"wasmdp\"). Non-negative results are values, negative ones ERR_ codes \
         (nothing changed). Pointers are into the plugin's own memory.",
    );
    out.push('\n');
    for imp in IMPORTS {
        let when = format!("{:?}", imp.when).to_lowercase();
        doc(&mut out, "", "///", &format!("{} (1.{}, {when}): {}", imp.name, imp.since, one_line(imp.doc)));
        let args: Vec<String> =
            imp.names.iter().enumerate().map(|(i, n)| format!("{n}: {}", arg_type(imp, i))).collect();
        let _ = writeln!(out, "pub extern \"wasmdp\" fn {}({}) {};\n", imp.name, args.join(", "), result_type(imp));
    }
    out.pop();
    out
}
