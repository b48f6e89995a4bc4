//! The functions instrumentation appends to a module (`super::instrument`): each bulk operation's
//! work in chunks with an epoch check between them, after a zero-length probe at the far end that
//! traps exactly when the original would; each growth as a call of its own.

use wasm_encoder::{BlockType, Function, InstructionSink};
use wasmparser::Operator;

/// Bytes of linear memory filled or copied between two checks (a few microseconds).
const MEM_CHUNK: i32 = 64 * 1024;
/// Table elements filled or copied between two checks.
const TABLE_CHUNK: i32 = 4096;

/// A function appended to the module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Shim {
    MemFill,
    MemCopy,
    MemInit(u32),
    MemGrow,
    TableFill(u32),
    TableCopy(u32, u32),
    TableInit(u32, u32),
    TableGrow(u32),
}

impl Shim {
    pub(super) fn of(op: &Operator<'_>) -> Option<Shim> {
        Some(match *op {
            Operator::MemoryFill { .. } => Shim::MemFill,
            Operator::MemoryCopy { .. } => Shim::MemCopy,
            Operator::MemoryInit { data_index, .. } => Shim::MemInit(data_index),
            Operator::MemoryGrow { .. } => Shim::MemGrow,
            Operator::TableFill { table } => Shim::TableFill(table),
            Operator::TableCopy { dst_table, src_table } => Shim::TableCopy(dst_table, src_table),
            Operator::TableInit { elem_index, table } => Shim::TableInit(elem_index, table),
            Operator::TableGrow { table } => Shim::TableGrow(table),
            _ => return None,
        })
    }
}

/// The body of one shim. Parameters: (dst, src or value, count) in the order of the operator.
pub(super) fn shim_body(s: Shim) -> Function {
    let mut f = Function::new([]);
    let mut i = f.instructions();
    match s {
        Shim::MemGrow => {
            i.local_get(0).memory_grow(0);
        }
        Shim::TableGrow(t) => {
            i.local_get(0).local_get(1).table_grow(t);
        }
        Shim::MemFill => chunked(&mut i, MEM_CHUNK, false, &|i| {
            i.memory_fill(0);
        }),
        Shim::TableFill(t) => chunked(&mut i, TABLE_CHUNK, false, &|i| {
            i.table_fill(t);
        }),
        Shim::MemInit(seg) => chunked(&mut i, MEM_CHUNK, true, &|i| {
            i.memory_init(0, seg);
        }),
        Shim::TableInit(seg, t) => chunked(&mut i, TABLE_CHUNK, true, &|i| {
            i.table_init(t, seg);
        }),
        Shim::MemCopy => copy(&mut i, MEM_CHUNK, &|i| {
            i.memory_copy(0, 0);
        }),
        Shim::TableCopy(d, s) => copy(&mut i, TABLE_CHUNK, &|i| {
            i.table_copy(d, s);
        }),
    }
    i.end();
    f
}

/// `if n <= chunk: run the operator on the original operands and return`: the common small case
/// costs one compare (the operator checks its own bounds, and traps before writing).
fn small_at_once(i: &mut InstructionSink<'_>, chunk: i32, op: &dyn Fn(&mut InstructionSink<'_>)) {
    i.local_get(2).i32_const(chunk).i32_le_u().if_(BlockType::Empty);
    i.local_get(0).local_get(1).local_get(2);
    op(i);
    i.return_().end();
}

/// `if a + n overflows (unsigned): run the operator on the original operands (it traps) and return.`
fn trap_on_overflow(i: &mut InstructionSink<'_>, a: u32, op: &dyn Fn(&mut InstructionSink<'_>)) {
    i.local_get(a).local_get(2).i32_add().local_get(a).i32_lt_u().if_(BlockType::Empty);
    i.local_get(0).local_get(1).local_get(2);
    op(i);
    i.return_().end();
}

/// The zero-length probe at the far end: traps exactly when the whole operation would.
fn probe(i: &mut InstructionSink<'_>, second_moves: bool, op: &dyn Fn(&mut InstructionSink<'_>)) {
    i.local_get(0).local_get(2).i32_add();
    if second_moves {
        i.local_get(1).local_get(2).i32_add();
    } else {
        i.local_get(1);
    }
    i.i32_const(0);
    op(i);
}

/// Fill or init in chunks, front to back. `second_moves`: the second operand is a source offset
/// (init) rather than a value (fill).
fn chunked(i: &mut InstructionSink<'_>, chunk: i32, second_moves: bool, op: &dyn Fn(&mut InstructionSink<'_>)) {
    small_at_once(i, chunk, op);
    trap_on_overflow(i, 0, op);
    if second_moves {
        trap_on_overflow(i, 1, op);
    }
    probe(i, second_moves, op);
    i.loop_(BlockType::Empty);
    i.local_get(2).i32_const(chunk).i32_gt_u().if_(BlockType::Empty);
    i.local_get(0).local_get(1).i32_const(chunk);
    op(i);
    advance(i, 0, chunk);
    if second_moves {
        advance(i, 1, chunk);
    }
    i.local_get(2).i32_const(chunk).i32_sub().local_set(2);
    i.br(1).end().end();
    i.local_get(0).local_get(1).local_get(2);
    op(i);
}

fn advance(i: &mut InstructionSink<'_>, local: u32, by: i32) {
    i.local_get(local).i32_const(by).i32_add().local_set(local);
}

/// Copy in chunks: front to back when the destination is below the source, else back to front, so
/// that overlapping ranges come out as one `copy` would leave them.
fn copy(i: &mut InstructionSink<'_>, chunk: i32, op: &dyn Fn(&mut InstructionSink<'_>)) {
    small_at_once(i, chunk, op);
    trap_on_overflow(i, 0, op);
    trap_on_overflow(i, 1, op);
    probe(i, true, op);
    i.local_get(0).local_get(1).i32_le_u().if_(BlockType::Empty);
    {
        i.loop_(BlockType::Empty);
        i.local_get(2).i32_const(chunk).i32_gt_u().if_(BlockType::Empty);
        i.local_get(0).local_get(1).i32_const(chunk);
        op(i);
        advance(i, 0, chunk);
        advance(i, 1, chunk);
        i.local_get(2).i32_const(chunk).i32_sub().local_set(2);
        i.br(1).end().end();
    }
    i.else_();
    {
        i.loop_(BlockType::Empty);
        i.local_get(2).i32_const(chunk).i32_gt_u().if_(BlockType::Empty);
        i.local_get(2).i32_const(chunk).i32_sub().local_set(2);
        i.local_get(0).local_get(2).i32_add().local_get(1).local_get(2).i32_add().i32_const(chunk);
        op(i);
        i.br(1).end().end();
    }
    i.end();
    i.local_get(0).local_get(1).local_get(2);
    op(i);
}
