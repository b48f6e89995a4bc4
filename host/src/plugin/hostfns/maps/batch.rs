//! `map_lookup_batch` and `map_update_batch` from a module: the ranges of keys, values and found
//! flags checked against the plugin's memory, then the batch run in place (`ops::maps::batch`).

use super::super::{guest_span, Limit, C};
use super::table_and_memory;
use crate::plugin::maps::Table;
use crate::plugin::ops::maps::{lookup_batch_in, update_batch_in, MAX_BATCH};
use std::ops::Range;
use wasmdp_abi::err;

/// The ranges of a batch of `n` entries: keys, values, found bytes (None: out of the memory).
fn batch_ranges(t: &Table, n: i32, kp: i32, vp: i32, fp: Option<i32>, limit: &Limit) -> Result<[Range<usize>; 3], i32> {
    let n = usize::try_from(n).ok().filter(|&n| n <= MAX_BATCH).ok_or(err::BAD_RANGE)?;
    let (ks, vs) = (t.spec().key_size as usize, t.spec().value_size as usize);
    let keys = guest_span(kp, (n * ks) as i32, limit).ok_or(err::BAD_MEMORY)?;
    let values = guest_span(vp, (n * vs) as i32, limit).ok_or(err::BAD_MEMORY)?;
    let found = match fp {
        Some(fp) => guest_span(fp, n as i32, limit).ok_or(err::BAD_MEMORY)?,
        None => 0..0,
    };
    Ok([keys, values, found])
}

pub(super) fn lookup_batch(mut c: C<'_>, id: i32, kp: i32, n: i32, vp: i32, fp: i32) -> i32 {
    let (t, data, limit) = match table_and_memory(&mut c, id) {
        Ok(x) => x,
        Err(e) => return e,
    };
    let [keys, values, found] = match batch_ranges(t, n, kp, vp, Some(fp), &limit) {
        Ok(r) => r,
        Err(e) => return e,
    };
    lookup_batch_in(t, data, keys, values, found)
}

pub(super) fn update_batch(mut c: C<'_>, id: i32, kp: i32, vp: i32, n: i32) -> i32 {
    let (t, data, limit) = match table_and_memory(&mut c, id) {
        Ok(x) => x,
        Err(e) => return e,
    };
    let [keys, values, _] = match batch_ranges(t, n, kp, vp, None, &limit) {
        Ok(r) => r,
        Err(e) => return e,
    };
    update_batch_in(t, data, keys, values)
}
