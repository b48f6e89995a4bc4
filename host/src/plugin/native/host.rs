//! The host side of a native build's imports: each one the host function a module's import is,
//! called with the native build's own slices where a module's pointers would be resolved in its
//! memory. The length arguments the slices stand for are checked against them.

use crate::plugin::logs::MAX_LOG_BYTES;
use crate::plugin::ops::{area, decide, events, info, maps, packets};
use crate::plugin::state::HostState;
use wasmdp_abi::{err, map};

/// The imports of one call of a native instance, on its state.
pub(crate) struct NativeHost<'a>(pub &'a mut HostState);

/// `n` as a length, when it is the slice's.
fn is_len(n: i32, slice: &[u8]) -> bool {
    usize::try_from(n).is_ok_and(|n| n == slice.len())
}

impl NativeHost<'_> {
    /// Map `id`, when `key` (and `value`) are its sizes.
    fn table(
        &self,
        id: i32,
        key: usize,
        value: Option<usize>,
    ) -> Result<std::sync::Arc<crate::plugin::maps::Table>, i32> {
        let t = maps::table(self.0, id)?;
        let spec = t.spec();
        if key != spec.key_size as usize || value.is_some_and(|v| v != spec.value_size as usize) {
            return Err(err::BAD_MEMORY);
        }
        Ok(t)
    }
}

impl wasmdp_sdk::native::Host for NativeHost<'_> {
    fn burst_len(&mut self) -> i32 {
        packets::burst_len(self.0)
    }

    fn pkt_len(&mut self, idx: i32) -> i32 {
        packets::pkt_len(self.0, idx)
    }

    fn pkt_read(&mut self, idx: i32, off: i32, buf: &mut [u8], len: i32) -> i32 {
        let buf = is_len(len, buf).then_some(packets::Buf::Read(buf));
        packets::pkt_io(self.0, idx, off, len, buf)
    }

    fn pkt_write(&mut self, idx: i32, off: i32, data: &[u8], len: i32) -> i32 {
        let buf = is_len(len, data).then_some(packets::Buf::Write(data));
        packets::pkt_io(self.0, idx, off, len, buf)
    }

    fn pkt_copy(&mut self, dst_idx: i32, dst_off: i32, src_idx: i32, src_off: i32, len: i32) -> i32 {
        packets::pkt_copy(self.0, dst_idx, dst_off, src_idx, src_off, len)
    }

    fn run_engine(&mut self, engine: i32, start: i32, count: i32) -> i32 {
        decide::run_engine(self.0, engine, start, count)
    }

    fn macswap(&mut self, start: i32, count: i32) -> i32 {
        decide::macswap(self.0, start, count)
    }

    fn set_offloads(&mut self, idx: i32, flags: i64, tci: i32, outer: i32) -> i32 {
        decide::set_offloads(self.0, idx, flags, tci, outer)
    }

    fn drop_pkt(&mut self, idx: i32) -> i32 {
        decide::request(self.0, idx, None)
    }

    fn send_to(&mut self, idx: i32, port: i32) -> i32 {
        decide::send_to(self.0, idx, port)
    }

    fn set_sticky(&mut self, engine: i32, flags: i64, tci: i32, outer: i32, bursts: i32) -> i32 {
        decide::set_sticky(self.0, engine, flags, tci, outer, bursts)
    }

    fn clear_sticky(&mut self) -> i32 {
        decide::clear_sticky(self.0)
    }

    fn counter_register(&mut self, name: &str, _len: i32) -> i32 {
        info::counter_register(self.0, Some(name.as_bytes()))
    }

    fn counter_add(&mut self, id: i32, value: i64) -> i32 {
        info::counter_add(self.0, id, value)
    }

    fn param_get(&mut self, key: &str, _key_len: i32, out: &mut [u8], _out_cap: i32) -> i32 {
        let k = &key.as_bytes()[..key.len().min(info::MAX_PARAM_KEY)];
        info::param_get(self.0, k, key.len(), Some(out))
    }

    fn now_ns(&mut self) -> i64 {
        crate::plugin::counters::now_ns() as i64
    }

    fn random(&mut self) -> i64 {
        self.0.rng.u64(..) as i64
    }

    fn log(&mut self, level: i32, msg: &str, _len: i32) {
        if let Some(suppressed) = self.0.logs.allow() {
            let bytes = &msg.as_bytes()[..msg.len().min(MAX_LOG_BYTES)];
            info::log(self.0, level, bytes, msg.len(), suppressed);
        }
    }

    fn burst_area(&mut self, area: *mut [u8], max_pkts: i32, window: i32) -> i32 {
        let (ptr, len) = (area as *mut u8 as usize, area.len());
        let n = usize::try_from(max_pkts).unwrap_or(0);
        let shape = wasmdp_abi::area::parse_window(window as u32);
        // A native build has no linear memory to map a packet region into.
        if shape.is_some_and(|s| s.direct) {
            return err::BAD_RANGE;
        }
        let size = shape.map(|s| s.size(n));
        if size.is_some_and(|size| len != size) {
            return err::BAD_MEMORY;
        }
        area::burst_area(self.0, ptr, max_pkts, window, usize::MAX)
    }

    fn pkt_adjust(&mut self, idx: i32, head: i32, tail: i32) -> i32 {
        packets::pkt_adjust(self.0, idx, head, tail)
    }

    fn pkt_room(&mut self, idx: i32) -> i64 {
        packets::pkt_room(self.0, idx)
    }

    fn context(&mut self, out: &mut [u8], _cap: i32) -> i32 {
        info::context(self.0, Some(out))
    }

    fn map_declare(&mut self, name: &str, _name_len: i32, kind: i32, key_size: i32, value_size: i32, cap: i32) -> i32 {
        self.map_declare_ttl(name, _name_len, kind, key_size, value_size, cap, 0)
    }

    #[allow(clippy::too_many_arguments)] // the import's arity
    fn map_declare_ttl(
        &mut self,
        name: &str,
        _nl: i32,
        kind: i32,
        key_size: i32,
        value_size: i32,
        capacity: i32,
        ttl_ms: i64,
    ) -> i32 {
        let n = &name.as_bytes()[..name.len().min(map::MAX_NAME as usize)];
        let shape = maps::Shape { kind, ks: key_size, vs: value_size, cap: capacity, ttl_ms };
        maps::declare(self.0, n, name.len(), shape)
    }

    fn map_lookup(&mut self, id: i32, key: &[u8], value: &mut [u8]) -> i32 {
        self.table(id, key.len(), Some(value.len())).map_or_else(|e| e, |t| maps::lookup(&t, key, value))
    }

    fn map_update(&mut self, id: i32, key: &[u8], value: &[u8]) -> i32 {
        self.table(id, key.len(), Some(value.len())).map_or_else(|e| e, |t| maps::update(&t, key, value))
    }

    fn map_delete(&mut self, id: i32, key: &[u8]) -> i32 {
        self.table(id, key.len(), None).map_or_else(|e| e, |t| maps::delete(&t, key))
    }

    fn map_add(&mut self, id: i32, key: &[u8], word: i32, delta: i64) -> i32 {
        self.table(id, key.len(), None).map_or_else(|e| e, |t| maps::add(&t, key, word, delta))
    }

    fn map_next_key(&mut self, id: i32, cursor: &mut u64, key: &mut [u8]) -> i32 {
        self.table(id, key.len(), None).map_or_else(|e| e, |t| maps::next_key(&t, cursor, key))
    }

    fn map_lookup_batch(&mut self, id: i32, keys: &[u8], n: i32, values: &mut [u8], found: &mut [u8]) -> i32 {
        let t = match maps::table(self.0, id) {
            Ok(t) => t,
            Err(e) => return e,
        };
        maps::lookup_batch_slices(&t, keys, n, values, found)
    }

    fn map_update_batch(&mut self, id: i32, keys: &[u8], values: &[u8], n: i32) -> i32 {
        let t = match maps::table(self.0, id) {
            Ok(t) => t,
            Err(e) => return e,
        };
        maps::update_batch_slices(&t, keys, values, n)
    }

    fn gauge_register(&mut self, name: &str, _len: i32) -> i32 {
        info::gauge_register(self.0, Some(name.as_bytes()))
    }

    fn gauge_set(&mut self, id: i32, value: i64) -> i32 {
        self.0.counters.gauges.set(id, value)
    }

    fn event_register(&mut self, name: &str, _len: i32, layout: &str, _layout_len: i32, size: i32) -> i32 {
        events::event_register(self.0, name.as_bytes(), layout.as_bytes(), size)
    }

    fn event_emit(&mut self, id: i32, data: &[u8], len: i32) -> i32 {
        let bytes = usize::try_from(len).ok().and_then(|n| data.get(..n));
        events::event_emit(self.0, id, bytes)
    }
}
