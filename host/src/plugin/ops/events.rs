//! Plugin events (1.1): `event_register`, `event_emit` on the port's ring (`crate::plugin::events`).

use crate::plugin::state::HostState;
use wasmdp_abi::err;

/// Registers a kind of event (init only): its id among the instance's kinds.
pub(crate) fn event_register(st: &mut HostState, name: &[u8], layout: &[u8], size: i32) -> i32 {
    if !st.in_init {
        return err::NOT_INIT;
    }
    let (Ok(name), Ok(layout)) = (std::str::from_utf8(name), std::str::from_utf8(layout)) else {
        return err::BAD_RANGE;
    };
    if st.events.len() >= crate::plugin::events::MAX_KINDS {
        return err::FULL;
    }
    match st.env.events.register(&st.plugin, name, layout) {
        Ok((kind, bytes)) if bytes == size as usize => {
            st.events.push((kind, bytes as u16));
            (st.events.len() - 1) as i32
        }
        Ok((_, bytes)) => {
            tracing::warn!(plugin = %st.label, "event_register: event `{name}`: its fields take {bytes} bytes; its records are declared {size}");
            err::BAD_RANGE
        }
        Err(why) if why.contains("kinds of event already") => {
            tracing::warn!(plugin = %st.label, "event_register: {why}");
            err::FULL
        }
        Err(why) => {
            tracing::warn!(plugin = %st.label, "event_register: {why}");
            err::BAD_RANGE
        }
    }
}

/// Appends an event of the instance's kind `id`: 0, or `FULL` (lost, counted).
pub(crate) fn event_emit(st: &HostState, id: i32, bytes: Option<&[u8]>) -> i32 {
    let Some(&(kind, size)) = usize::try_from(id).ok().and_then(|i| st.events.get(i)) else {
        return err::BAD_RANGE;
    };
    let Some(bytes) = bytes else { return err::BAD_MEMORY };
    if bytes.len() != usize::from(size) {
        return err::BAD_RANGE;
    }
    if st.env.events.emit(kind, st.env.queue, bytes) {
        0
    } else {
        err::FULL
    }
}
