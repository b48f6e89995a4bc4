//! The static limits: counts a module may not exceed, checked from the section headers before
//! anything is validated or compiled, so that a hostile module costs time linear in its size and
//! never reaches the compiler when it is too big.

use wasmparser::{Parser, Payload, RefType, TypeRef};

/// Defined functions per module. Compile time grows with it (about 75 us per empty function here):
/// 10 000 keeps a worst-case compile near one second. The example plugins define 20 to 200.
pub const MAX_FUNCTIONS: u32 = 10_000;
/// Bytes of one function body. Bounds the compile time and memory of one function.
pub const MAX_FUNCTION_BODY: u32 = 256 * 1024;
/// Locals of one function.
const MAX_LOCALS: u32 = 10_000;
/// Types, imports, exports, globals, data and element segments per module.
const MAX_TYPES: u32 = 4096;
const MAX_IMPORTS: u32 = 256;
const MAX_EXPORTS: u32 = 1024;
const MAX_GLOBALS: u32 = 1024;
const MAX_DATA_SEGMENTS: u32 = 1024;
const MAX_ELEM_SEGMENTS: u32 = 1024;
/// One linear memory and one table: nothing a policy needs takes more, and per-instance memory
/// limits then cover everything a module can allocate.
const MAX_MEMORIES: u32 = 1;
const MAX_TABLES: u32 = 1;

/// Limits that depend on the port's `limits:` settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StaticLimits {
    /// Largest linear memory, bytes (`limits.memory_kib`).
    pub memory_bytes: u64,
    /// Largest table, elements (`limits.table_elements`).
    pub table_elements: u64,
}

/// What the instrumentation needs to know of a module's layout.
#[derive(Debug, Default)]
pub(crate) struct Shape {
    /// Imported functions (they come first in the function index space).
    pub imported_funcs: u32,
    /// Defined functions.
    pub defined_funcs: u32,
    /// Entries of the type index space.
    pub types: u32,
    /// Element type of each table.
    pub tables: Vec<RefType>,
}

fn over(what: &str, n: u32, max: u32) -> Result<(), String> {
    if n > max {
        return Err(format!("has {n} {what}; the limit is {max} (see docs/ABI.md, security model)"));
    }
    Ok(())
}

fn bad(e: wasmparser::BinaryReaderError) -> String {
    format!("is not a valid WebAssembly module: {} (at byte offset {:#x})", e.message(), e.offset())
}

/// Counts what `bytes` declares against the limits; returns its shape.
pub(crate) fn scan(bytes: &[u8], limits: &StaticLimits) -> Result<Shape, String> {
    let mut s = Shape::default();
    for payload in Parser::new(0).parse_all(bytes) {
        match payload.map_err(bad)? {
            Payload::Version { encoding: wasmparser::Encoding::Component, .. } => {
                return Err("is a WebAssembly component; a plugin must be a core module".into())
            }
            Payload::TypeSection(r) => {
                over("types", r.count(), MAX_TYPES)?;
                for group in r {
                    s.types += group.map_err(bad)?.types().len() as u32;
                }
                over("types", s.types, MAX_TYPES)?;
            }
            Payload::ImportSection(r) => {
                over("imports", r.count(), MAX_IMPORTS)?;
                for (n, imp) in r.into_imports().enumerate() {
                    over("imports", n as u32 + 1, MAX_IMPORTS)?;
                    let imp = imp.map_err(bad)?;
                    if !matches!(imp.ty, TypeRef::Func(_)) {
                        return Err(format!(
                            "imports `{}::{}` as a {}; a plugin may import only functions of module `wasmdp`",
                            imp.module,
                            imp.name,
                            kind(&imp.ty)
                        ));
                    }
                    s.imported_funcs += 1;
                }
            }
            Payload::FunctionSection(r) => {
                over("functions", r.count(), MAX_FUNCTIONS)?;
                s.defined_funcs = r.count();
            }
            Payload::TableSection(r) => {
                over("tables", r.count(), MAX_TABLES)?;
                for t in r {
                    let t = t.map_err(bad)?.ty;
                    if t.initial > limits.table_elements {
                        return Err(format!(
                            "declares a table of {} elements; limits.table_elements is {}",
                            t.initial, limits.table_elements
                        ));
                    }
                    s.tables.push(t.element_type);
                }
            }
            Payload::MemorySection(r) => {
                over("memories", r.count(), MAX_MEMORIES)?;
                for m in r {
                    let bytes = m.map_err(bad)?.initial.saturating_mul(65536);
                    if bytes > limits.memory_bytes {
                        return Err(format!(
                            "declares a memory of {} KiB; limits.memory_kib is {}",
                            bytes / 1024,
                            limits.memory_bytes / 1024
                        ));
                    }
                }
            }
            Payload::GlobalSection(r) => over("globals", r.count(), MAX_GLOBALS)?,
            Payload::ExportSection(r) => over("exports", r.count(), MAX_EXPORTS)?,
            Payload::ElementSection(r) => over("element segments", r.count(), MAX_ELEM_SEGMENTS)?,
            Payload::DataSection(r) => over("data segments", r.count(), MAX_DATA_SEGMENTS)?,
            Payload::CodeSectionEntry(body) => check_body(&body)?,
            _ => {}
        }
    }
    Ok(s)
}

fn check_body(body: &wasmparser::FunctionBody<'_>) -> Result<(), String> {
    let size = body.range().len() as u32;
    if size > MAX_FUNCTION_BODY {
        return Err(format!(
            "has a function body of {size} bytes (at byte offset {:#x}); the limit is {MAX_FUNCTION_BODY}",
            body.range().start
        ));
    }
    let mut locals = 0u32;
    for l in body.get_locals_reader().map_err(bad)? {
        locals = locals.saturating_add(l.map_err(bad)?.0);
    }
    over("locals in one function", locals, MAX_LOCALS)
}

fn kind(t: &TypeRef) -> &'static str {
    match t {
        TypeRef::Func(_) | TypeRef::FuncExact(_) => "function",
        TypeRef::Table(_) => "table",
        TypeRef::Memory(_) => "memory",
        TypeRef::Global(_) => "global",
        TypeRef::Tag(_) => "tag",
    }
}
