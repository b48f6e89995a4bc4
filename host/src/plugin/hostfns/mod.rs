//! The host functions of the ABI (1.0 and 1.1) as wasmtime sees them, one file per concern:
//! packets, decisions, what the plugin knows (counters, gauges, params, log, context), maps, the
//! burst area. This layer is the glue: it reads the arguments out of the plugin's memory (every
//! guest pointer and length checked, the packet region excluded: [`Limit`]) and calls the
//! semantics of `crate::plugin::ops`, which the native host calls too.

pub(crate) mod area;
pub(crate) mod decide;
pub(crate) mod info;
pub(crate) mod maps;
pub(crate) mod packets;

use super::state::HostState;
use wasmdp_abi::{err, IMPORT_MODULE};
use wasmtime::{Caller, Linker};

type C<'a> = Caller<'a, HostState>;

/// Registers every host function.
pub(crate) fn link(linker: &mut Linker<HostState>) -> anyhow::Result<()> {
    let m = IMPORT_MODULE;
    packets::link(linker, m)?;
    decide::link(linker, m)?;
    info::link(linker, m)?;
    maps::link(linker, m)?;
    area::link(linker, m)?;
    Ok(())
}

/// What of a guest memory host functions may read and write: its first `len` bytes but the
/// stream's packet region (`hole`; direct packet access), which the host reaches only through the
/// packets' own buffers.
#[derive(Debug, Clone)]
pub(crate) struct Limit {
    pub len: usize,
    pub hole: std::ops::Range<usize>,
}

impl HostState {
    /// The [`Limit`] of this instance's memory of `len` bytes.
    pub(crate) fn limit(&self, len: usize) -> Limit {
        Limit { len, hole: self.direct.as_ref().map_or(0..0, |m| m.range()) }
    }
}

/// A guest pointer/length pair as a range of its memory, outside the packet region. Pointers are
/// `i32` bit patterns of u32 addresses.
pub(super) fn guest_span(ptr: i32, len: i32, limit: &Limit) -> Option<std::ops::Range<usize>> {
    let (ptr, len) = (ptr as u32 as usize, usize::try_from(len).ok()?);
    let end = ptr.checked_add(len)?;
    let clear = end <= limit.hole.start || ptr >= limit.hole.end || limit.hole.is_empty();
    (end <= limit.len && clear).then_some(ptr..end)
}

/// At most `max` bytes of guest memory at `ptr..ptr+len` (checked against the whole range), and the
/// length asked for.
pub(super) fn guest_bytes(c: &mut C<'_>, ptr: i32, len: i32, max: usize) -> Result<(Vec<u8>, usize), i32> {
    let mem = c.data().memory.ok_or(err::BAD_MEMORY)?;
    let data = mem.data(&*c);
    let r = guest_span(ptr, len, &c.data().limit(data.len())).ok_or(err::BAD_MEMORY)?;
    let total = r.len();
    Ok((data[r.start..r.start + total.min(max)].to_vec(), total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmdp_abi::import::{Ty, IMPORTS};

    /// The linker and the ABI's table (which load-time checks read) agree: a module importing every
    /// entry with the table's signature links.
    #[test]
    fn the_linker_serves_every_import_of_the_abi_table_with_its_signature() {
        let rt = crate::plugin::Runtime::new().unwrap();
        let mut linker = Linker::new(rt.engine());
        link(&mut linker).unwrap();
        let ty = |t: &Ty| match t {
            Ty::I32 => "i32",
            Ty::I64 => "i64",
        };
        let list = |ts: &[Ty]| ts.iter().map(ty).collect::<Vec<_>>().join(" ");
        let imports: String = IMPORTS
            .iter()
            .map(|i| {
                format!(
                    "(import \"{IMPORT_MODULE}\" \"{}\" (func (param {}) (result {})))",
                    i.name,
                    list(i.params),
                    list(i.results)
                )
            })
            .collect();
        let bytes = wat::parse_str(format!("(module {imports})")).unwrap();
        let module = wasmtime::Module::new(rt.engine(), bytes).unwrap();
        linker.instantiate_pre(&module).unwrap();
    }
}
