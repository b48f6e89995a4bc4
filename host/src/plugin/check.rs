//! Load-time checks with messages a user can act on: exports and imports against ABI 1.1 (a
//! superset of 1.0).

use wasmdp_abi::{export, import, IMPORT_MODULE};
use wasmtime::{ExternType, FuncType, Module, ValType};

/// The parameter and result types of host function `name`, from the ABI's one table
/// (`wasmdp_abi::import::IMPORTS`).
pub(crate) fn host_signature(name: &str) -> Option<(Vec<ValType>, Vec<ValType>)> {
    let i = import::find(name)?;
    Some((valtypes(i.params), valtypes(i.results)))
}

/// The ABI's value types as wasmtime's.
fn valtypes(types: &[wasmdp_abi::import::Ty]) -> Vec<ValType> {
    use wasmdp_abi::import::Ty;
    types
        .iter()
        .map(|t| match t {
            Ty::I32 => ValType::I32,
            Ty::I64 => ValType::I64,
        })
        .collect()
}

fn same(f: &FuncType, params: &[ValType], results: &[ValType]) -> bool {
    let eq = |a: &ValType, b: &ValType| ValType::eq(a, b);
    f.params().len() == params.len()
        && f.results().len() == results.len()
        && f.params().zip(params).all(|(a, b)| eq(&a, b))
        && f.results().zip(results).all(|(a, b)| eq(&a, b))
}

fn show(params: &[ValType], results: &[ValType]) -> String {
    let list = |v: &[ValType]| v.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ");
    format!("({}) -> ({})", list(params), list(results))
}

/// Checks a compiled module against ABI v1: every import is a known host function with the right
/// signature, and the exports of the ABI's table (`wasmdp_abi::export::EXPORTS`) have theirs, the
/// required ones present.
pub(crate) fn module(m: &Module) -> Result<(), String> {
    for imp in m.imports() {
        let (module, name) = (imp.module(), imp.name());
        if module != IMPORT_MODULE {
            return Err(format!("imports `{module}::{name}`, but the host only provides module `{IMPORT_MODULE}`"));
        }
        let Some((p, r)) = host_signature(name) else {
            let (major, minor) = (wasmdp_abi::ABI_MAJOR, wasmdp_abi::ABI_MINOR);
            return Err(format!(
                "imports `{module}::{name}`, which the host does not provide (ABI {major}.{minor}; see docs/ABI.md)"
            ));
        };
        match imp.ty() {
            ExternType::Func(f) if same(&f, &p, &r) => {}
            ExternType::Func(f) => {
                return Err(format!("imports `{module}::{name}` as {f}, but the host provides {}", show(&p, &r)))
            }
            other => return Err(format!("imports `{module}::{name}` as a {other:?}, but it is a function")),
        }
    }
    for e in export::EXPORTS {
        let (name, p, r) = (e.name, valtypes(e.params), valtypes(e.results));
        match m.get_export(name) {
            Some(ExternType::Func(f)) if same(&f, &p, &r) => {}
            Some(ExternType::Func(f)) => {
                return Err(format!("exports `{name}` as {f}, but ABI v1 needs {}", show(&p, &r)))
            }
            Some(_) => return Err(format!("exports `{name}`, but not as a function")),
            None if e.required => {
                return Err(format!("does not export `{name}` {}, which ABI v1 requires", show(&p, &r)))
            }
            None => {}
        }
    }
    match m.get_export(export::MEMORY) {
        Some(ExternType::Memory(_)) => Ok(()),
        _ => Err(format!("does not export its linear memory as `{}`", export::MEMORY)),
    }
}
