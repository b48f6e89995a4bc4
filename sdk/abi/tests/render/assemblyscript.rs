//! `sdk/assemblyscript/wasmdp.ts`: the ABI for AssemblyScript: the same imports and constants as
//! `sdk/c/wasmdp.h`, and the layouts as byte offsets (read with `load<T>(area + OFFSET)`:
//! AssemblyScript has no structs of a given layout).

use super::{groups, one_line, structs, wrapped};
use std::fmt::Write;
use wasmdp_abi::import::{Ty, IMPORTS};
use wasmdp_abi::layout::Dir;

fn ty(t: Ty) -> &'static str {
    match t {
        Ty::I32 => "i32",
        Ty::I64 => "i64",
    }
}

fn doc(out: &mut String, indent: &str, text: &str) {
    wrapped(out, indent, "//", text);
}

pub fn module() -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// The wasmdp plugin ABI {}.{} for AssemblyScript: imports, constants and the byte offsets of the\n\
         // burst area's and the context's fields (little-endian). GENERATED from the wasmdp-abi crate\n\
         // (sdk/abi) by `WASMDP_BLESS=1 cargo test -p wasmdp-abi --test generated`: do not edit. The prose\n\
         // is docs/ABI.md.\n",
        wasmdp_abi::ABI_MAJOR,
        wasmdp_abi::ABI_MINOR
    );
    for g in groups() {
        doc(&mut out, "", &format!("{}.", g.what));
        for (name, value) in &g.consts {
            let (value, t) = match value.strip_suffix("ULL") {
                Some(v) => (v, "u64"),
                None if value.starts_with('(') => (value.as_str(), "i32"),
                None => (value.as_str(), "u32"),
            };
            let _ = writeln!(out, "export const {}: {t} = {value};", name.trim_start_matches("WASMDP_"));
        }
        out.push('\n');
    }
    for s in structs() {
        if s.c_name == "wasmdp_direct_desc" {
            continue; // its fields are the descriptor's, under the same names
        }
        let prefix = s.c_name.trim_start_matches("wasmdp_").to_uppercase();
        let fields: Vec<_> =
            if s.module == "area::desc" { wasmdp_abi::area::desc::FIELDS.to_vec() } else { s.fields.clone() };
        doc(&mut out, "", &format!("{} ({}, {} bytes): byte offsets.", s.title, s.module, s.size));
        for f in fields {
            let dir = match f.dir {
                Dir::In => "in",
                Dir::Out => "out",
            };
            doc(&mut out, "", &format!("{:?} {dir}: {}", f.ty, one_line(f.doc)).to_lowercase());
            let _ = writeln!(out, "export const {prefix}_{}: u32 = {};", f.name, f.offset);
        }
        out.push('\n');
    }
    doc(
        &mut out,
        "",
        "The host functions (module \"wasmdp\"). Non-negative results are values, negative ones ERR_ codes \
         (nothing changed). Pointers are addresses in the plugin's own memory (usize).",
    );
    for imp in IMPORTS {
        let when = format!("{:?}", imp.when).to_lowercase();
        doc(&mut out, "", &format!("{} (1.{}, {when}): {}", imp.name, imp.since, one_line(imp.doc)));
        let args: Vec<String> = imp
            .names
            .iter()
            .zip(imp.params)
            .zip(imp.natives)
            .map(|((n, t), native)| format!("{n}: {}", if native.is_empty() { ty(*t) } else { "usize" }))
            .collect();
        let ret = imp.results.first().map_or("void", |t| ty(*t));
        let _ = writeln!(
            out,
            "@external(\"wasmdp\", \"{0}\")\nexport declare function {0}({1}): {ret};\n",
            imp.name,
            args.join(", ")
        );
    }
    out.pop();
    out
}
