//! Instrumentation that keeps every call interruptible.
//!
//! wasmtime checks the epoch (the per-call deadline) at function entries and loop headers only. Three
//! things escape those checks, and each is rewritten here:
//!
//! * **Bulk operations** (`memory.fill`, `memory.copy`, `memory.init`, `table.fill`, `table.copy`,
//!   `table.init`) do work proportional to an operand: one `memory.fill` of 16 MiB is a millisecond.
//!   Each becomes a call to a small function appended to the module that first performs a
//!   zero-length probe at the far end (which traps exactly when the original would, before writing
//!   anything), then does the work in chunks of `MEM_CHUNK` bytes (`TABLE_CHUNK` elements) in a
//!   loop: the loop header checks the epoch between chunks. `memory.copy` and `table.copy` copy
//!   forwards or backwards as the overlap requires, so the result is the original's.
//! * **Growth** (`memory.grow`, `table.grow`) enters the host; each becomes a call to a function
//!   that does just that, so a run of them passes an epoch check before each.
//! * **Long straight-line code**: a path without loops or calls can be as long as a function body.
//!   A forward pass tracks, at each operator, the longest path since the last check that can reach it
//!   (branches to a block's end carry their length there); where that would pass [`MAX_RUN`]
//!   operators, an epoch check is inserted: an empty `loop` block, whose header wasmtime checks (a
//!   load, a compare and a branch; a call of an empty function, as before, cost a prologue and an
//!   epilogue too). Calls to imports (host functions) and `call_indirect` (which may reach one) do
//!   not count as checks.
//! * **Returns**: a return is not a check, so the code after a call runs unchecked after the
//!   callee's last stretch, and a recursion `D` deep unwinds through `D` such stretches in a row (a
//!   recursion 10 000 deep with a thousand operators after each return once ran 70 ms past a 1 ms
//!   deadline). So at most [`AFTER_CALL`] operators may follow a call (a defined function's, or
//!   `call_indirect`) before a check. An unwinding then runs at most `D x AFTER_CALL` operators
//!   unchecked, and `D` is bounded by wasmtime's `max_wasm_stack` ([`super::super::runtime`]).
//!   Where the code after a call reaches a check (a loop header, a branch back to one) or a return
//!   within that many operators in a straight line, nothing is added; otherwise the check goes
//!   right after the call, on the call's own path. (Placed where the budget ran out, it landed
//!   after a merge of paths: a cold call out of a per-packet loop then put checks on the loop's
//!   path that never called anything.)
//!
//! Function indices are unchanged: the new functions come after the module's own, and new types
//! after its types. Cost: one call per bulk operation (a few ns) and one per [`MAX_RUN`] operators of
//! straight-line code, which compiled Rust practically never has.

use super::limits::Shape;
use super::shim::{shim_body, Shim};
use std::collections::BTreeMap;
use wasm_encoder::reencode::{utils, Error, Reencode};
use wasm_encoder::{BlockType, CodeSection, FunctionSection, TypeSection, ValType};
use wasmparser::{Operator, Parser, Payload};

/// Longest run of operators allowed between two epoch checks.
const MAX_RUN: i64 = 1000;
/// Most operators allowed after a call returns before a check (see the module doc: returns).
pub(crate) const AFTER_CALL: i64 = 4;
/// A function signature, as the key of the new types.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Sig(Vec<ValType>, Vec<ValType>);

/// Every shim the module's code uses, and whether it has code at all.
fn needed(bytes: &[u8]) -> Result<(Vec<Shim>, bool), String> {
    let mut set = std::collections::BTreeSet::new();
    let mut code = false;
    for payload in Parser::new(0).parse_all(bytes) {
        let Ok(Payload::CodeSectionEntry(body)) = payload else { continue };
        code = true;
        let mut ops = body.get_operators_reader().map_err(|e| e.to_string())?;
        while !ops.eof() {
            if let Some(s) = Shim::of(&ops.read().map_err(|e| e.to_string())?) {
                set.insert(s);
            }
        }
    }
    Ok((set.into_iter().collect(), code))
}

/// The module with its bulk operations, growth and long straight-line runs made interruptible.
pub(super) fn rewrite(bytes: &[u8], shape: &Shape) -> Result<Vec<u8>, String> {
    let (shims, code) = needed(bytes)?;
    if !code {
        return Ok(bytes.to_vec());
    }
    let mut r = Rewriter::new(shape, shims)?;
    let mut module = wasm_encoder::Module::new();
    r.parse_core_module(&mut module, Parser::new(0), bytes).map_err(|e| format!("cannot be instrumented: {e}"))?;
    Ok(module.finish())
}

struct Rewriter {
    shims: Vec<Shim>,
    /// Function index of each shim.
    index: BTreeMap<Shim, u32>,
    /// Type index of each shim.
    types: Vec<u32>,
    /// The new types, in index order.
    new_types: Vec<Sig>,
    imported_funcs: u32,
}

impl Rewriter {
    fn new(shape: &Shape, shims: Vec<Shim>) -> Result<Rewriter, String> {
        let tables: Vec<ValType> = shape.tables.iter().map(|t| ref_val(*t)).collect::<Result<_, _>>()?;
        let mut new_types: Vec<Sig> = Vec::new();
        let mut types = Vec::new();
        let mut index = BTreeMap::new();
        for (k, s) in shims.iter().enumerate() {
            let sig = signature(*s, &tables)?;
            let t = match new_types.iter().position(|x| *x == sig) {
                Some(i) => i,
                None => {
                    new_types.push(sig);
                    new_types.len() - 1
                }
            };
            types.push(shape.types + t as u32);
            index.insert(*s, shape.imported_funcs + shape.defined_funcs + k as u32);
        }
        Ok(Rewriter { shims, index, types, new_types, imported_funcs: shape.imported_funcs })
    }
}

fn ref_val(t: wasmparser::RefType) -> Result<ValType, String> {
    if t == wasmparser::RefType::FUNCREF {
        Ok(ValType::FUNCREF)
    } else {
        Err(format!("has a table of {t}; only funcref tables are allowed"))
    }
}

fn signature(s: Shim, tables: &[ValType]) -> Result<Sig, String> {
    use ValType::I32;
    let table = |t: u32| tables.get(t as usize).copied().ok_or_else(|| format!("uses table {t}, which it lacks"));
    Ok(match s {
        Shim::MemGrow => Sig(vec![I32], vec![I32]),
        Shim::TableFill(t) => Sig(vec![I32, table(t)?, I32], vec![]),
        Shim::TableGrow(t) => Sig(vec![table(t)?, I32], vec![I32]),
        Shim::MemFill | Shim::MemCopy | Shim::MemInit(_) | Shim::TableCopy(..) | Shim::TableInit(..) => {
            Sig(vec![I32, I32, I32], vec![])
        }
    })
}

impl Reencode for Rewriter {
    type Error = String;

    fn parse_type_section(
        &mut self,
        types: &mut TypeSection,
        section: wasmparser::TypeSectionReader<'_>,
    ) -> Result<(), Error<String>> {
        utils::parse_type_section(self, types, section)?;
        for Sig(p, r) in &self.new_types {
            types.ty().function(p.iter().copied(), r.iter().copied());
        }
        Ok(())
    }

    fn parse_function_section(
        &mut self,
        functions: &mut FunctionSection,
        section: wasmparser::FunctionSectionReader<'_>,
    ) -> Result<(), Error<String>> {
        utils::parse_function_section(self, functions, section)?;
        for t in &self.types {
            functions.function(*t);
        }
        Ok(())
    }

    fn parse_code_section(
        &mut self,
        code: &mut CodeSection,
        section: wasmparser::CodeSectionReader<'_>,
    ) -> Result<(), Error<String>> {
        utils::parse_code_section(self, code, section)?;
        for s in self.shims.clone() {
            code.function(&shim_body(s));
        }
        Ok(())
    }

    fn parse_function_body(
        &mut self,
        code: &mut CodeSection,
        body: wasmparser::FunctionBody<'_>,
    ) -> Result<(), Error<String>> {
        let mut f = self.new_function_with_parsed_locals(&body)?;
        let mut ops = body.get_operators_reader()?;
        let mut run = Run::new();
        while !ops.eof() {
            let op = ops.read()?;
            if run.needs_check() {
                // An empty loop: wasmtime checks the epoch at every loop header.
                f.instructions().loop_(BlockType::Empty).end();
                run.checked();
            }
            match Shim::of(&op) {
                Some(s) => {
                    f.instructions().call(self.index[&s]);
                    run.checked();
                }
                None => {
                    let call = is_module_call(&op, self.imported_funcs);
                    run.step(&op, self.imported_funcs);
                    f.instruction(&self.instruction(op)?);
                    if call && !run.reaches_check(ops.clone(), self.imported_funcs) {
                        f.instructions().loop_(BlockType::Empty).end();
                        run.checked();
                    }
                }
            }
        }
        code.function(&f);
        Ok(())
    }
}

/// Whether `op` calls a function of the module (or may: `call_indirect`), whose return is not a
/// check.
fn is_module_call(op: &Operator<'_>, imported_funcs: u32) -> bool {
    match op {
        Operator::Call { function_index } => *function_index >= imported_funcs,
        Operator::CallIndirect { .. } => true,
        _ => false,
    }
}

/// "Not reachable": far below any length, and stays so when operators are added.
const UNREACHABLE: i64 = i64::MIN / 4;

/// A block being walked: what kind, and the longest path that branches to its end.
struct Frame {
    kind: Kind,
    /// Longest unchecked run of a branch to this frame's end (UNREACHABLE: none yet).
    to_end: i64,
    /// For `if`: the run at the `if` (its else arm starts there), and the run at the end of the
    /// then arm once `else` was seen.
    at_if: i64,
    then_end: Option<i64>,
}

#[derive(PartialEq)]
enum Kind {
    Block,
    Loop,
    If,
}

/// The forward pass: the longest run of operators since the last epoch check that can reach the
/// current operator.
struct Run {
    now: i64,
    frames: Vec<Frame>,
}

impl Run {
    fn new() -> Run {
        // The function body is an implicit block; its entry is a check.
        Run { now: 0, frames: vec![Frame { kind: Kind::Block, to_end: UNREACHABLE, at_if: 0, then_end: None }] }
    }

    fn needs_check(&self) -> bool {
        self.now >= MAX_RUN
    }

    fn checked(&mut self) {
        if self.now > UNREACHABLE {
            self.now = 0;
        }
    }

    /// After a call returns: a check once [`AFTER_CALL`] operators follow (sooner if the run was
    /// already that long).
    fn after_call(&mut self) {
        if self.now > UNREACHABLE {
            self.now = self.now.max(MAX_RUN - AFTER_CALL);
        }
    }

    /// Whether the operators of `next`, in a straight line, reach an epoch check (a loop header, a
    /// branch back to one, the entry of a function of the module) or leave the function within
    /// [`AFTER_CALL`] operators. Any other control flow ends the straight line: not reached.
    fn reaches_check(&self, mut next: wasmparser::OperatorsReader<'_>, imported_funcs: u32) -> bool {
        let is_loop = |depth: u32| {
            let at = self.frames.len().checked_sub(1 + depth as usize);
            at.and_then(|i| self.frames.get(i)).is_some_and(|f| f.kind == Kind::Loop)
        };
        for _ in 0..=AFTER_CALL {
            let Ok(op) = next.read() else { return false };
            match op {
                Operator::Loop { .. } | Operator::Return | Operator::Unreachable => return true,
                // The end of the function body is its return.
                Operator::End => return self.frames.len() == 1,
                Operator::Br { relative_depth } => return is_loop(relative_depth),
                Operator::Call { function_index } if function_index >= imported_funcs => return true,
                // A host function's return is no check, but it is not a module's either.
                Operator::Call { .. } => {}
                Operator::BrIf { relative_depth } if is_loop(relative_depth) => {}
                Operator::Block { .. }
                | Operator::If { .. }
                | Operator::Else
                | Operator::BrIf { .. }
                | Operator::BrTable { .. }
                | Operator::CallIndirect { .. }
                | Operator::ReturnCall { .. }
                | Operator::ReturnCallIndirect { .. } => return false,
                _ => {}
            }
        }
        false
    }

    fn branch(&mut self, depth: u32) {
        let now = self.now + 1;
        let at = self.frames.len().checked_sub(1 + depth as usize);
        if let Some(f) = at.and_then(|i| self.frames.get_mut(i)) {
            // A branch to a loop goes back to its header, which checks the epoch.
            if f.kind != Kind::Loop {
                f.to_end = f.to_end.max(now);
            }
        }
    }

    fn push(&mut self, kind: Kind) {
        let at_if = self.now;
        self.frames.push(Frame { kind, to_end: UNREACHABLE, at_if, then_end: None });
    }

    fn step(&mut self, op: &Operator<'_>, imported_funcs: u32) {
        match op {
            Operator::Block { .. } => self.push(Kind::Block),
            Operator::Loop { .. } => {
                self.push(Kind::Loop);
                // wasmtime checks the epoch at every loop header.
                self.checked();
            }
            Operator::If { .. } => {
                self.now += 1;
                self.push(Kind::If);
            }
            Operator::Else => {
                if let Some(f) = self.frames.last_mut() {
                    f.then_end = Some(self.now);
                    self.now = f.at_if;
                }
            }
            Operator::End => {
                if let Some(f) = self.frames.pop() {
                    let mut end = self.now.max(f.to_end);
                    if f.kind == Kind::If {
                        // Without `else`, the false branch goes from the `if` to its end.
                        end = end.max(f.then_end.unwrap_or(f.at_if));
                    }
                    self.now = end;
                }
            }
            Operator::Br { relative_depth } => {
                self.branch(*relative_depth);
                self.now = UNREACHABLE;
            }
            Operator::BrIf { relative_depth } => {
                self.branch(*relative_depth);
                self.now += 1;
            }
            Operator::BrTable { targets } => {
                for t in targets.targets().flatten() {
                    self.branch(t);
                }
                self.branch(targets.default());
                self.now = UNREACHABLE;
            }
            Operator::Return | Operator::Unreachable => self.now = UNREACHABLE,
            // A call of a function of the module: its entry checks the epoch, but its return does
            // not, so what follows it may only be a short stretch before the next check.
            Operator::Call { function_index } if *function_index >= imported_funcs => self.after_call(),
            // It may call a function of the module (or a host function: then it is not a check).
            Operator::CallIndirect { .. } => {
                self.now += 1;
                self.after_call();
            }
            _ => self.now += 1,
        }
    }
}
