//! docs/ABI.md's generated sections: the import table and the layout tables.

use super::{one_line, structs};
use std::fmt::Write;
use wasmdp_abi::import::{Ty, IMPORTS};
use wasmdp_abi::layout::{self, Dir, Only};

fn ty(t: Ty) -> &'static str {
    match t {
        Ty::I32 => "i32",
        Ty::I64 => "i64",
    }
}

fn cell(text: &str) -> String {
    one_line(text).replace('|', "\\|")
}

fn signature(names: &[&str], params: &[Ty], results: &[Ty]) -> String {
    let args: Vec<String> = names.iter().zip(params).map(|(n, t)| format!("{n}: {}", ty(*t))).collect();
    let ret = results.first().map(|t| format!(" -> {}", ty(*t))).unwrap_or_default();
    format!("`({}){ret}`", args.join(", "))
}

pub fn exports() -> String {
    let mut out = String::from("| export | signature | required | called | semantics |\n|---|---|---|---|---|\n");
    for e in wasmdp_abi::export::EXPORTS {
        let need = if e.required { "yes" } else { "no" };
        let sig = signature(e.names, e.params, e.results);
        let _ = writeln!(out, "| `{}` | {sig} | {need} | {} | {} |", e.name, e.called, cell(e.doc));
    }
    out
}

pub fn imports() -> String {
    let mut out = String::from("| import | signature | since | when | contract |\n|---|---|---|---|---|\n");
    for imp in IMPORTS {
        let when = format!("{:?}", imp.when).to_lowercase();
        let sig = signature(imp.names, imp.params, imp.results);
        let _ = writeln!(out, "| `{}` | {sig} | 1.{} | {when} | {} |", imp.name, imp.since, cell(imp.doc));
    }
    out
}

fn field_ty(t: layout::Ty) -> &'static str {
    match t {
        layout::Ty::U8 => "u8",
        layout::Ty::U16 => "u16",
        layout::Ty::I16 => "i16",
        layout::Ty::U32 => "u32",
        layout::Ty::I32 => "i32",
        layout::Ty::U64 => "u64",
        layout::Ty::Mac => "6 bytes",
    }
}

pub fn layouts() -> String {
    let mut out = String::new();
    for s in structs() {
        // The two descriptor shapes share one table, the shape named where a field is one's only.
        if s.c_name == "wasmdp_direct_desc" {
            continue;
        }
        let fields: Vec<_> = match s.module {
            "area::desc" => wasmdp_abi::area::desc::FIELDS.to_vec(),
            _ => s.fields.clone(),
        };
        let title = if s.module == "area::desc" { "Descriptor" } else { s.title };
        let _ = writeln!(
            out,
            "**{title}** (`{}`, {} bytes; C `{}`{}):\n",
            s.module,
            s.size,
            s.c_name,
            if s.module == "area::desc" { ", `wasmdp_direct_desc`" } else { "" }
        );
        out.push_str("| offset | size | type | dir | field | holds |\n|---|---|---|---|---|---|\n");
        for f in fields {
            let dir = match f.dir {
                Dir::In => "in",
                Dir::Out => "out",
            };
            let only = match f.only {
                Only::All => "",
                Only::Windows => "(windows only) ",
                Only::Direct => "(`DIRECT` only) ",
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {dir} | `{}` | {only}{} |",
                f.offset,
                f.ty.size(),
                field_ty(f.ty),
                f.name,
                cell(f.doc)
            );
        }
        out.push('\n');
    }
    out.pop();
    out
}
