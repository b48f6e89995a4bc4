//! Slices walked four elements a turn, each turn's four reached from an address kept as an integer.
//!
//! In WebAssembly a load's constant offset (`i32.load offset=12`) costs nothing: wasmtime folds it
//! into the x86 address. LLVM puts a field's offset there only when it knows the addition cannot
//! wrap (an `inbounds nuw` address), and its loop strength reduction rewrites every address it
//! derives from a loop's induction variable into its own, without that knowledge: in a loop over
//! side-by-side heads each field read became an `i32.add` before its load (a 32-bit `lea` in
//! wasmtime's code), one more instruction per field and packet. A pointer made from an integer
//! ([`core::ptr::with_exposed_provenance`]) is opaque to that pass. Here the loop's variables are
//! addresses as integers, each turn makes one pointer of its four elements, and every field is read
//! from that pointer by ordinary indexing, at a constant offset. Nothing changes off WebAssembly
//! (the integer round trip is free), and the elements are the slice's own.

use core::marker::PhantomData;

/// Elements a loop turn of the SDK's walks over heads: two fours. WebAssembly checks the epoch
/// deadline at every loop header, and cranelift keeps the values live across that check's call
/// (never taken) in stack slots, stored and reloaded at every turn's end: a turn of eight pays
/// that, the check and the loop's own steps once in eight packets (BENCHMARKS.md). A turn of
/// sixteen was not unrolled by LLVM and cost more.
pub(crate) const EIGHT: usize = 8;

/// A slice's elements in fours, from its start: a turn's four are given out once each.
pub(crate) struct Fours<'s, T> {
    /// Address of the next four.
    at: usize,
    _slice: PhantomData<&'s mut [T]>,
}

impl<'s, T> Fours<'s, T> {
    /// The whole fours of `s` (`s.len() / 4` of them), to read.
    #[inline(always)]
    pub fn of(s: &'s [T]) -> Self {
        Fours { at: s.as_ptr().expose_provenance(), _slice: PhantomData }
    }

    /// The whole fours of `s`, to change.
    #[inline(always)]
    pub fn of_mut(s: &'s mut [T]) -> Self {
        Fours { at: s.as_mut_ptr().expose_provenance(), _slice: PhantomData }
    }

    /// The next four elements, to read.
    ///
    /// # Safety
    /// Fewer than `s.len() / 4` calls of `next` and `next_mut` before it, on a `Fours` made by
    /// [`of`](Fours::of) (or [`of_mut`](Fours::of_mut)) from `s`.
    #[inline(always)]
    pub unsafe fn next(&mut self) -> &'s [T; 4] {
        let p = core::ptr::with_exposed_provenance::<[T; 4]>(self.at);
        self.at += size_of::<[T; 4]>();
        // SAFETY: the caller's promise: four elements of `s` (its provenance exposed by `of`), not
        // given out before; `s` is borrowed for `'s`.
        unsafe { &*p }
    }

    /// The next four elements, to change.
    ///
    /// # Safety
    /// As [`next`](Fours::next), on a `Fours` made by [`of_mut`](Fours::of_mut).
    #[inline(always)]
    pub unsafe fn next_mut(&mut self) -> &'s mut [T; 4] {
        let p = core::ptr::with_exposed_provenance_mut::<[T; 4]>(self.at);
        self.at += size_of::<[T; 4]>();
        // SAFETY: as in `next`; `s` was borrowed mutably for `'s` and each four is given out once,
        // so the reference is the only one to these elements.
        unsafe { &mut *p }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_four_once_in_order() {
        let mut v: [u32; 10] = core::array::from_fn(|i| i as u32);
        let r: [u32; 10] = core::array::from_fn(|i| 100 + i as u32);
        let (mut w, mut q) = (Fours::of_mut(&mut v), Fours::of(&r));
        for _ in 0..10 / 4 {
            // SAFETY: two calls each, of 10 / 4.
            let (w4, q4) = unsafe { (w.next_mut(), q.next()) };
            for (a, b) in w4.iter_mut().zip(q4) {
                *a += b;
            }
        }
        assert_eq!(v, [100, 102, 104, 106, 108, 110, 112, 114, 8, 9]);
    }
}
