//! A port's policy chain on one stream: the links' runners, run in order on each burst, and how a
//! reload turns one chain into the next while keeping the links it did not change.
//!
//! Per burst, link by link (docs/ABI.md, "Policy chains", has the table):
//! - what a link leaves in the burst goes on to the next link: packets it passed, packets an engine
//!   it ran transformed, and packets it sent to the stream's own TX port; each link sees the bytes
//!   and lengths the links before it left;
//! - a packet a link drops, or sends to another port, leaves the chain there (the drop is counted
//!   with that link, the send leaves through the other port's queue);
//! - a link that fails follows its own `on_failure`: `fail_open` and `reload` run the port's engine
//!   in its place and the chain goes on; `fail_closed` drops the burst there;
//! - a link after the first is not called with an empty burst (everything was dropped or sent
//!   before it); the first is called as a single policy always was.
//!
//! A one-link chain is exactly the single policy of before: same calls, same fallback.

mod counters;

pub use counters::LinkCounters;

use super::Runner;
use crate::engines::{EngineFn, FwdCtx};
use crate::mbuf::Burst;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// A stream's running chain (never empty: no policy is `None` where a chain is held).
pub struct Chain {
    links: Vec<Link>,
}

/// One link: its name (as the configuration gives it) and its runner.
struct Link {
    name: Arc<str>,
    runner: Runner,
}

/// Where a link of the next chain comes from.
pub enum LinkPlan {
    /// The link of this index in the running chain, with its instance, sticky decision, failure
    /// window and counters.
    Keep(usize),
    /// A new runner (a new or edited link), made off the worker.
    New(Box<Runner>),
}

/// What a reload makes of a stream's chain: its links in their new order. No links: no policy.
pub struct ChainPlan {
    /// Name and origin of each link, in order.
    pub links: Vec<(Arc<str>, LinkPlan)>,
}

impl Chain {
    /// A chain of one link named as its policy's configuration says.
    pub fn single(runner: Runner) -> Chain {
        let name = runner.plugin().cfg.link_name().into();
        Chain { links: vec![Link { name, runner }] }
    }

    /// A chain of these links, in order; `None` for none.
    pub fn of(links: Vec<(Arc<str>, Runner)>) -> Option<Chain> {
        (!links.is_empty())
            .then(|| Chain { links: links.into_iter().map(|(name, runner)| Link { name, runner }).collect() })
    }

    /// Runs the burst through the links in order; `native` is the port's engine (a failing link's
    /// stand-in under `fail_open` and `reload`).
    #[inline]
    pub fn on_burst(&mut self, ctx: &mut FwdCtx<'_>, burst: &mut Burst, native: EngineFn) {
        // The first link is called as a single policy always was, also with the empty burst of a
        // port whose engine makes packets (txonly): it may run that engine. One call site, so that
        // the runner's burst path is inlined here once.
        for (k, link) in self.links.iter_mut().enumerate() {
            if k != 0 && burst.is_empty() {
                return;
            }
            link.runner.on_burst(ctx, burst, native);
        }
    }

    /// A poll that received nothing: each link's tick still comes when it is due.
    /// [`Chain::on_burst`] for a round in which a trace follows packets: each link's call timed
    /// and its step recorded for every followed packet (out of line: only while a trace runs).
    #[cold]
    #[inline(never)]
    pub fn on_burst_traced(
        &mut self,
        ctx: &mut FwdCtx<'_>,
        burst: &mut Burst,
        native: EngineFn,
        tap: &mut crate::capture::StreamTap,
    ) {
        for (k, link) in self.links.iter_mut().enumerate() {
            if k != 0 && burst.is_empty() {
                break;
            }
            let (drops, sent, t0) = (ctx.drops.total(), ctx.redirected_out, std::time::Instant::now());
            link.runner.on_burst(ctx, burst, native);
            let ns = t0.elapsed().as_nanos() as u64;
            if let Some(f) = tap.following() {
                f.after_link(&link.name, burst, ns, ctx.drops.total() - drops, ctx.redirected_out - sent);
            }
        }
    }

    #[inline]
    pub fn idle(&mut self) {
        for link in &mut self.links {
            link.runner.idle();
        }
    }

    /// The links' names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.links.iter().map(|l| &*l.name)
    }

    /// The runners, in order.
    pub fn runners(&self) -> impl Iterator<Item = &Runner> {
        self.links.iter().map(|l| &l.runner)
    }

    /// The stream's pool for direct packet access, when an instance of a link asked for one (the
    /// stream's links share it: it is the stream's).
    pub fn direct_pool(&self) -> Option<&Arc<crate::mbuf::Pool>> {
        self.links.iter().find_map(|l| l.runner.direct_pool())
    }

    /// Before the chain leaves the worker: closes every link's packet region
    /// ([`Runner::leave`]).
    pub fn leave(&mut self) {
        self.links.iter_mut().for_each(|l| l.runner.leave());
    }

    /// Turns the running chain into what `plan` describes, between two bursts: kept links move over
    /// with their state, new ones come in. Returns the new chain (`None`: no policy) and the runners
    /// left over, their packet regions closed, to be dropped off the worker.
    pub fn rebuild(old: Option<Chain>, plan: ChainPlan) -> (Option<Chain>, Vec<Runner>) {
        let mut old: Vec<Option<Link>> = old.map_or_else(Vec::new, |c| c.links.into_iter().map(Some).collect());
        let mut links = Vec::with_capacity(plan.links.len());
        for (name, from) in plan.links {
            match from {
                LinkPlan::Keep(i) => match old.get_mut(i).and_then(Option::take) {
                    Some(l) => links.push(Link { name, runner: l.runner }),
                    // Not reachable from a plan made against this chain; a link cannot come from
                    // nowhere, so it is left out rather than invented.
                    None => {
                        tracing::error!(link = %name, "reload: kept link {i} is not in the running chain; left out")
                    }
                },
                LinkPlan::New(r) => links.push(Link { name, runner: *r }),
            }
        }
        let mut gone: Vec<Runner> = old.into_iter().flatten().map(|l| l.runner).collect();
        for r in &mut gone {
            r.leave();
            // An edited link's new runner counts into the same counters: they stay attached.
            let c = r.counters();
            if !links.iter().any(|l| Arc::ptr_eq(&l.runner.counters(), &c)) {
                c.attached.store(false, Relaxed);
            }
        }
        let chain = (!links.is_empty()).then_some(Chain { links });
        (chain, gone)
    }
}

impl ChainPlan {
    /// The plan that removes every link.
    pub fn none() -> ChainPlan {
        ChainPlan { links: Vec::new() }
    }

    /// `newer`, made against the chain this plan leads to, applied on top of this plan (both waiting
    /// in a stream's mailbox, the worker having taken neither): a link `newer` keeps is what this plan
    /// put at that place. Returns the composed plan and the runners this plan made that `newer` does
    /// not keep (to be dropped by the caller, off the worker).
    pub fn then(self, newer: ChainPlan) -> (ChainPlan, Vec<Runner>) {
        let mut mine: Vec<Option<LinkPlan>> = self.links.into_iter().map(|(_, p)| Some(p)).collect();
        let mut links = Vec::with_capacity(newer.links.len());
        for (name, from) in newer.links {
            let from = match from {
                LinkPlan::Keep(i) => match mine.get_mut(i).and_then(Option::take) {
                    Some(p) => p,
                    None => continue,
                },
                new => new,
            };
            links.push((name, from));
        }
        let unused = mine
            .into_iter()
            .flatten()
            .filter_map(|p| match p {
                LinkPlan::New(r) => Some(*r),
                LinkPlan::Keep(_) => None,
            })
            .collect();
        (ChainPlan { links }, unused)
    }
}
