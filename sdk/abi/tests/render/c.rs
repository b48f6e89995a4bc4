//! `sdk/c/wasmdp.h`: the ABI for C (and anything that reads C headers).

use super::{arg, groups, one_line, structs, Arg, Struct};
use std::fmt::Write;
use wasmdp_abi::import::{Import, Ty, IMPORTS};
use wasmdp_abi::layout::{self, Dir};

/// The C type of an import's argument: a pointer where it is one.
fn arg_type(imp: &Import, i: usize) -> &'static str {
    match arg(imp, i) {
        Arg::Text => "const char *",
        Arg::Bytes => "const void *",
        Arg::BytesOut => "void *",
        Arg::U64InOut => "uint64_t *",
        Arg::Int(t) => int_type(t),
    }
}

fn int_type(t: Ty) -> &'static str {
    match t {
        Ty::I32 => "int32_t ",
        Ty::I64 => "int64_t ",
    }
}

fn result_type(imp: &Import) -> &'static str {
    match imp.results {
        [] => "void",
        [Ty::I32] => "int32_t",
        [Ty::I64] => "int64_t",
        _ => unreachable!("at most one result"),
    }
}

fn field_type(t: layout::Ty) -> &'static str {
    match t {
        layout::Ty::U8 | layout::Ty::Mac => "uint8_t",
        layout::Ty::U16 => "uint16_t",
        layout::Ty::I16 => "int16_t",
        layout::Ty::U32 => "uint32_t",
        layout::Ty::I32 => "int32_t",
        layout::Ty::U64 => "uint64_t",
    }
}

/// `text` as a block comment at `indent`, wrapped at 100 columns.
fn comment(out: &mut String, indent: &str, text: &str) {
    let mut line = format!("{indent}/*");
    let mut lines = Vec::new();
    for word in text.split_whitespace() {
        let word = word.replace("*/", "* /");
        if line.len() + 1 + word.len() > 100 {
            lines.push(std::mem::replace(&mut line, format!("{indent} *")));
        }
        line.push(' ');
        line.push_str(&word);
    }
    lines.push(line);
    let last = lines.len() - 1;
    for (i, l) in lines.iter().enumerate() {
        if i == last {
            if l.len() + 3 <= 100 {
                let _ = writeln!(out, "{l} */");
            } else {
                let _ = writeln!(out, "{l}\n{indent} */");
            }
        } else {
            let _ = writeln!(out, "{l}");
        }
    }
}

fn structure(out: &mut String, s: &Struct) {
    comment(out, "", &format!("{} ({}, {} bytes).", s.title, s.module, s.size));
    let _ = writeln!(out, "typedef struct {} {{", s.c_name);
    let mut at = 0;
    for f in &s.fields {
        if f.offset > at {
            let _ = writeln!(out, "    uint8_t _pad{at}[{}];", f.offset - at);
        }
        let dir = match f.dir {
            Dir::In => "in",
            Dir::Out => "out",
        };
        comment(out, "    ", &format!("{dir}: {}", one_line(f.doc)));
        let array = if f.ty == layout::Ty::Mac { "[6]" } else { "" };
        let _ = writeln!(out, "    {} {}{array};", field_type(f.ty), f.name.to_lowercase());
        at = f.offset + f.ty.size();
    }
    if s.size > at {
        let _ = writeln!(out, "    uint8_t _pad{at}[{}];", s.size - at);
    }
    let _ = writeln!(out, "}} {};", s.c_name);
    let _ = writeln!(out, "_Static_assert(sizeof({}) == {}, \"{} size\");", s.c_name, s.size, s.c_name);
    for f in &s.fields {
        let m = f.name.to_lowercase();
        let _ = writeln!(out, "_Static_assert(offsetof({}, {m}) == {}, \"{}.{m}\");", s.c_name, f.offset, s.c_name);
    }
    let _ = writeln!(out);
}

pub fn header() -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "/* The wasmdp plugin ABI {}.{} for C: imports, constants and the layouts of the burst area and\n \
         * the context. GENERATED from the wasmdp-abi crate (sdk/abi) by\n \
         * `WASMDP_BLESS=1 cargo test -p wasmdp-abi --test generated`: do not edit. The prose is\n \
         * docs/ABI.md; wasmdp_helpers.h is the hand-written layer on top. wasm32, little-endian. */",
        wasmdp_abi::ABI_MAJOR,
        wasmdp_abi::ABI_MINOR
    );
    out.push_str("#ifndef WASMDP_H\n#define WASMDP_H\n\n#include <stddef.h>\n#include <stdint.h>\n\n");
    for g in groups() {
        comment(&mut out, "", &format!("{}.", g.what));
        for (name, value) in &g.consts {
            let _ = writeln!(out, "#define {name} {value}");
        }
        out.push('\n');
    }
    comment(&mut out, "", "Engine names by id, as configs and params spell them (WASMDP_ENGINE_COUNT of them).");
    let names: Vec<String> = wasmdp_abi::engine::NAMES.iter().map(|n| format!("\"{n}\"")).collect();
    let _ = writeln!(out, "#define WASMDP_ENGINE_NAMES {{ {} }}\n", names.join(", "));
    for s in structs() {
        structure(&mut out, &s);
    }
    comment(
        &mut out,
        "",
        "The exports: the module defines them (with WASMDP_EXPORT of wasmdp_helpers.h, or \
         __attribute__((export_name(...)))); declared here so that a definition of another type does not \
         compile. The module also exports its memory as \"memory\".",
    );
    for e in wasmdp_abi::export::EXPORTS {
        let need = if e.required { "required" } else { "optional" };
        comment(&mut out, "", &format!("{} ({need}; called {}): {}", e.name, e.called, one_line(e.doc)));
        let args: Vec<String> = e.names.iter().zip(e.params).map(|(n, t)| format!("{}{n}", int_type(*t))).collect();
        let args = if args.is_empty() { "void".to_string() } else { args.join(", ") };
        let ret = match e.results {
            [] => "void",
            [t] => int_type(*t).trim_end(),
            _ => unreachable!("at most one result"),
        };
        let _ = writeln!(out, "{ret} {}({args});\n", e.name);
    }
    comment(
        &mut out,
        "",
        "The host functions (module \"wasmdp\"). Non-negative results are values, negative ones WASMDP_ERR_ \
         codes (nothing changed). Pointers are into the plugin's own memory. Since: the ABI minor version \
         that added it (a module declaring an older one is refused at load).",
    );
    for imp in IMPORTS {
        let when = format!("{:?}", imp.when).to_lowercase();
        comment(&mut out, "", &format!("{} (1.{}, {when}): {}", imp.name, imp.since, one_line(imp.doc)));
        let args: Vec<String> = imp.names.iter().enumerate().map(|(i, n)| format!("{}{n}", arg_type(imp, i))).collect();
        let args = if args.is_empty() { "void".to_string() } else { args.join(", ") };
        let _ = writeln!(
            out,
            "__attribute__((import_module(\"wasmdp\"), import_name(\"{0}\")))\n{1} wasmdp_{0}({args});\n",
            imp.name,
            result_type(imp)
        );
    }
    out.push_str("#endif /* WASMDP_H */\n");
    out
}
