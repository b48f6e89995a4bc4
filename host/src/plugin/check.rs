//! Load-time checks with messages a user can act on: exports and imports against ABI 1.1 (a
//! superset of 1.0).

use wasmdp_abi::{export, import, IMPORT_MODULE};
use wasmtime::{ExternType, FuncType, Module, ValType};

/// Host functions of ABI 1.1 (1.0's and the ones 1.1 added) with their parameter and result types.
pub(crate) fn host_signature(name: &str) -> Option<(&'static [ValType], &'static [ValType])> {
    use ValType::{I32, I64};
    let sig: (&[ValType], &[ValType]) = match name {
        import::BURST_LEN => (&[], &[I32]),
        import::PKT_LEN => (&[I32], &[I32]),
        import::PKT_READ | import::PKT_WRITE => (&[I32, I32, I32, I32], &[I32]),
        import::PKT_COPY => (&[I32, I32, I32, I32, I32], &[I32]),
        import::RUN_ENGINE => (&[I32, I32, I32], &[I32]),
        import::MACSWAP => (&[I32, I32], &[I32]),
        import::SET_OFFLOADS => (&[I32, I64, I32, I32], &[I32]),
        import::DROP_PKT => (&[I32], &[I32]),
        import::SEND_TO => (&[I32, I32], &[I32]),
        import::SET_STICKY => (&[I32, I64, I32, I32, I32], &[I32]),
        import::CLEAR_STICKY => (&[], &[I32]),
        import::COUNTER_REGISTER => (&[I32, I32], &[I32]),
        import::COUNTER_ADD => (&[I32, I64], &[I32]),
        import::PARAM_GET => (&[I32, I32, I32, I32], &[I32]),
        import::NOW_NS => (&[], &[I64]),
        import::LOG => (&[I32, I32, I32], &[]),
        // 1.1
        import::BURST_AREA => (&[I32, I32, I32], &[I32]),
        import::PKT_ADJUST => (&[I32, I32, I32], &[I32]),
        import::PKT_ROOM => (&[I32], &[I64]),
        import::CONTEXT => (&[I32, I32], &[I32]),
        import::MAP_DECLARE => (&[I32, I32, I32, I32, I32, I32], &[I32]),
        import::MAP_DECLARE_TTL => (&[I32, I32, I32, I32, I32, I32, I64], &[I32]),
        import::MAP_LOOKUP | import::MAP_UPDATE | import::MAP_NEXT_KEY => (&[I32, I32, I32], &[I32]),
        import::MAP_DELETE => (&[I32, I32], &[I32]),
        import::MAP_ADD => (&[I32, I32, I32, I64], &[I32]),
        import::MAP_LOOKUP_BATCH => (&[I32, I32, I32, I32, I32], &[I32]),
        import::MAP_UPDATE_BATCH => (&[I32, I32, I32, I32], &[I32]),
        import::GAUGE_REGISTER => (&[I32, I32], &[I32]),
        import::GAUGE_SET => (&[I32, I64], &[I32]),
        import::EVENT_REGISTER => (&[I32, I32, I32, I32, I32], &[I32]),
        import::EVENT_EMIT => (&[I32, I32, I32], &[I32]),
        _ => return None,
    };
    Some(sig)
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
/// signature, and the required exports exist with the right signatures.
pub(crate) fn module(m: &Module) -> Result<(), String> {
    for imp in m.imports() {
        let (module, name) = (imp.module(), imp.name());
        if module != IMPORT_MODULE {
            return Err(format!("imports `{module}::{name}`, but the host only provides module `{IMPORT_MODULE}`"));
        }
        let Some((p, r)) = host_signature(name) else {
            return Err(format!(
                "imports `{module}::{name}`, which the host does not provide (ABI 1.1; see docs/ABI.md)"
            ));
        };
        match imp.ty() {
            ExternType::Func(f) if same(&f, p, r) => {}
            ExternType::Func(f) => {
                return Err(format!("imports `{module}::{name}` as {f}, but the host provides {}", show(p, r)))
            }
            other => return Err(format!("imports `{module}::{name}` as a {other:?}, but it is a function")),
        }
    }
    use ValType::{I32, I64};
    let need: [(&str, &[ValType], &[ValType], bool); 4] = [
        (export::ABI_VERSION, &[], &[I32], true),
        (export::INIT, &[I32, I32], &[I32], true),
        (export::ON_BURST, &[I32, I32], &[I32], true),
        (export::TICK, &[I64], &[], false),
    ];
    for (name, p, r, required) in need {
        match m.get_export(name) {
            Some(ExternType::Func(f)) if same(&f, p, r) => {}
            Some(ExternType::Func(f)) => {
                return Err(format!("exports `{name}` as {f}, but ABI v1 needs {}", show(p, r)))
            }
            Some(_) => return Err(format!("exports `{name}`, but not as a function")),
            None if required => return Err(format!("does not export `{name}` {}, which ABI v1 requires", show(p, r))),
            None => {}
        }
    }
    match m.get_export(export::MEMORY) {
        Some(ExternType::Memory(_)) => Ok(()),
        _ => Err(format!("does not export its linear memory as `{}`", export::MEMORY)),
    }
}
