//! Per-call deadlines counted in the plugin's own CPU time, not in wall-clock time.
//!
//! The epoch ticker ([`super::runtime::TICK`]) advances the engine's epoch on wall-clock time. Each
//! store's deadline is kept one tick ahead, so while wasm code runs, wasmtime calls [`Watch::on_epoch`]
//! about once a tick (at the next function entry or loop header, which the instrumentation of
//! `super::module` places at most a bounded number of operators apart). The first time it fires
//! during a call it notes the thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`); afterwards it
//! interrupts the call once the thread has spent the budget on it. A call preempted by the scheduler
//! spends no CPU while it waits, so a loaded machine does not turn a quick call into a timeout; a
//! call that computes for longer than its budget is cut after at most the budget plus two ticks of
//! CPU time (up to one tick passes before the first mark, and one between checks).
//!
//! Nothing here runs per call: the runner bumps a counter; the clock is read only when a call is
//! still running at a tick (one system call, about a microsecond, at most 4000 times a second of
//! plugin execution).

use wasmtime::UpdateDeadline;

/// What one store's deadline callback keeps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Watch {
    /// CPU nanoseconds a call may use.
    pub budget_ns: u64,
    /// Incremented before every call into the instance.
    call: u64,
    /// The call the CPU mark belongs to.
    marked: u64,
    /// Thread CPU time at the mark.
    mark_ns: u64,
}

impl Watch {
    /// A watch with a budget of `budget_ns` per call.
    pub fn new(budget_ns: u64) -> Watch {
        Watch { budget_ns, call: 1, marked: 0, mark_ns: 0 }
    }

    /// A new call starts: it gets a budget of its own.
    #[inline(always)]
    pub fn begin(&mut self) {
        self.call = self.call.wrapping_add(1);
    }

    /// The epoch passed the store's deadline while the call runs: continue for a tick, or stop it.
    pub fn on_epoch(&mut self) -> UpdateDeadline {
        let now = thread_cpu_ns();
        if self.marked != self.call {
            self.marked = self.call;
            self.mark_ns = now;
            return UpdateDeadline::Continue(1);
        }
        if now.saturating_sub(self.mark_ns) >= self.budget_ns {
            UpdateDeadline::Interrupt
        } else {
            UpdateDeadline::Continue(1)
        }
    }
}

/// CPU time of the calling thread, nanoseconds.
pub(crate) fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID exists on every Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin_cpu(ns: u64) {
        let start = thread_cpu_ns();
        while thread_cpu_ns() - start < ns {
            std::hint::spin_loop();
        }
    }

    #[test]
    fn a_call_is_cut_after_its_budget_of_cpu_time() {
        let mut w = Watch::new(2_000_000);
        w.begin();
        assert!(matches!(w.on_epoch(), UpdateDeadline::Continue(1)), "first tick: mark");
        spin_cpu(1_000_000);
        assert!(matches!(w.on_epoch(), UpdateDeadline::Continue(1)), "1 ms of a 2 ms budget");
        spin_cpu(1_100_000);
        assert!(matches!(w.on_epoch(), UpdateDeadline::Interrupt), "2.1 ms of a 2 ms budget");
    }

    #[test]
    fn time_not_running_does_not_count() {
        let mut w = Watch::new(2_000_000);
        w.begin();
        w.on_epoch();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(matches!(w.on_epoch(), UpdateDeadline::Continue(1)), "20 ms asleep is no CPU time");
    }

    #[test]
    fn each_call_gets_its_own_budget() {
        let mut w = Watch::new(1_000_000);
        w.begin();
        w.on_epoch();
        spin_cpu(900_000);
        w.begin();
        assert!(matches!(w.on_epoch(), UpdateDeadline::Continue(1)), "new call: new mark");
        spin_cpu(500_000);
        assert!(matches!(w.on_epoch(), UpdateDeadline::Continue(1)));
    }
}
