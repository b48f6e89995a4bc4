//! Entry points for the fuzz targets of `fuzz/` (coverage-guided, libFuzzer) and for the corpus
//! replay test: each takes arbitrary bytes and must neither panic, hang, nor break an invariant
//! (bytes not lost, lengths kept, buffers returned, streams balanced).
#![doc(hidden)]

use crate::config;
use crate::engines;
use crate::lcore::{Retry, Stream, StreamParts};
use crate::mbuf::{Burst, Pool, PoolConfig};
use crate::plugin::{Plugin, PluginCounters, Runner, Runtime};
use crate::ports::{open_all, Inject};
use crate::simd::Simd;
use crate::stats::StreamInfo;
use crate::wire;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The YAML loader and every check of `config::validate`.
pub fn config(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = config::parse(text, "fuzz");
    }
}

/// The pcap/pcapng loader: whatever it keeps lies inside its buffer and within the length limits.
pub fn capture(data: &[u8]) {
    let Ok(cap) = crate::ports::load_capture(data, 2048) else { return };
    for r in &cap.records {
        assert!((14..=2048).contains(&(r.len as usize)), "{r:?}");
        assert!(r.off + r.len as usize <= cap.data.len());
    }
}

/// The wire parser, 5-tuple swap, checksum fills and reply builders on arbitrary frames.
pub fn wire(data: &[u8]) {
    let h = wire::parse(data);
    assert!(usize::from(h.l2_len) + usize::from(h.l3_len) + usize::from(h.l4_len) <= data.len().max(14) + 60);
    let mut f = data.to_vec();
    wire::swap_five_tuple(&mut f);
    assert_eq!(f.len(), data.len());
    wire::swap_five_tuple(&mut f);
    assert_eq!(f, data, "5tswap is an involution");
    let h = wire::parse(&f);
    wire::fill_ipv4_cksum(&mut f, &h);
    wire::fill_l4_cksum(&mut f, &h);
    assert_eq!(f.len(), data.len());
    let mac = [2, 0, 0, 0, 0, 9];
    for reply in [0, 1, 2] {
        let mut g = data.to_vec();
        let h = wire::parse(&g);
        let n = match reply {
            0 => wire::arp_reply(&mut g, &h, mac, &[[10, 0, 0, 1]]),
            1 => wire::icmp4_echo_reply(&mut g, &h, mac, &[[10, 0, 0, 1]]),
            _ => wire::icmp6_reply(&mut g, &h, mac, &[[0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]]),
        };
        assert!(n.is_none_or(|n| n <= g.len()));
    }
    tunnels(data);
}

/// The decapsulation checks on arbitrary frames: the fast path agrees with the full check, and an
/// accepted inner frame lies within the frame.
fn tunnels(data: &[u8]) {
    use wire::tunnel::{check, Expect, Kind, Matcher};
    let locals: [std::net::IpAddr; 2] = [[10, 0, 0, 1].into(), [0xfe80, 0, 0, 0, 0, 0, 0, 1].into()];
    for kind in Kind::ALL {
        for local in locals {
            let e = Expect {
                kind,
                local,
                dst_port: kind.default_port(),
                vni: None,
                zero_csum_v6: data.len().is_multiple_of(2),
            };
            let full = check(data, &e);
            assert_eq!(Matcher::new(e).check(data), full, "fast path and full check disagree");
            if let Ok(f) = full {
                assert!(f.outer_len + f.inner_len <= data.len() && f.inner_len >= wire::ETH_HLEN, "{f:?}");
            }
        }
    }
}

/// Bytes of one operation of the host-call interpreter: an opcode and five `i32` arguments.
const OP: usize = 21;

/// The host-call sequence driver: `data` is frames for one burst (a count, then a length byte and
/// the bytes of each), then operations; a plugin calls the host functions those operations name,
/// with their arguments, during one burst of a stream between two ring ports. Afterwards every
/// packet is accounted for and every buffer is back in the pool. Returns the stream's counters.
pub fn hostcalls(data: &[u8]) -> Option<crate::stats::Counts> {
    let (frames, ops) = split(data);
    let h = harness();
    let mut h = h.lock().unwrap_or_else(|e| e.into_inner());
    h.run(&frames, ops)
}

fn split(data: &[u8]) -> (Vec<Vec<u8>>, &[u8]) {
    let (&n, mut rest) = data.split_first().unwrap_or((&0, &[]));
    let mut frames = Vec::new();
    for _ in 0..n % 65 {
        let Some((&len, r)) = rest.split_first() else { break };
        let len = (usize::from(len) + 14).min(r.len());
        frames.push(r[..len].to_vec());
        rest = &r[len..];
    }
    (frames, rest)
}

struct Harness {
    pool: Arc<Pool>,
    plugin: Arc<Plugin>,
}

fn harness() -> &'static Mutex<Harness> {
    static H: OnceLock<Mutex<Harness>> = OnceLock::new();
    H.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("wasmdp-fuzz-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("interpreter.wasm");
        std::fs::write(&path, interpreter()).expect("writing the interpreter module");
        let yaml = format!(
            "ports:\n  - name: a\n    driver: null\n    policy: {{plugin: {}, limits: {{deadline_us: 100000}}}}\n",
            path.display()
        );
        let cfg = config::parse(&yaml, "fuzz").expect("the harness config");
        let pol = cfg.ports[0].policy.first().cloned().expect("a policy");
        let runtime = Runtime::with_cache(None).expect("a runtime");
        let plugin = Plugin::load(&runtime, &pol).expect("the interpreter module");
        let pool = Pool::new(PoolConfig { size: 1024, cache_size: 16, ..Default::default() }).expect("a pool");
        Mutex::new(Harness { pool, plugin })
    })
}

impl Harness {
    fn run(&mut self, frames: &[Vec<u8>], ops: &[u8]) -> Option<crate::stats::Counts> {
        let yaml =
            "ports:\n  - {name: a, driver: ring, ring: {peer: b}}\n  - {name: b, driver: ring, ring: {peer: a}}\n";
        let cfg = config::parse(yaml, "fuzz").expect("the ring pair");
        let mut ports = open_all(&cfg).expect("ring ports");
        let simd = Simd::detect();
        let inject = Arc::new(Inject::new(4));
        let injects: Arc<[Option<Arc<Inject>>]> = Arc::from(vec![Some(inject.clone()), Some(inject.clone())]);
        let counters = Arc::new(PluginCounters::default());
        let env = Arc::new(crate::plugin::StreamEnv::alone(injects));
        let mut runner = Runner::new(self.plugin.clone(), env, simd, counters.clone()).ok()?;
        let mut program = ((ops.len() / OP) as u32).to_le_bytes().to_vec();
        program.extend_from_slice(&ops[..ops.len() / OP * OP]);
        runner.poke(0, &program);
        let engine = engines::lookup("io").expect("io");
        let mut feed = ports[1].txqs[0].take().expect("b tx");
        let mut out = ports[1].rxqs[0].take().expect("b rx");
        let a = &mut ports[0];
        let info = StreamInfo { rx_port: 0, rx_queue: 0, tx_port: 0, tx_queue: 0, engine: "io", lcore: None };
        let mut stream = Stream::new(StreamParts {
            info,
            rxq: a.rxqs[0].take().expect("a rx"),
            txq: a.txqs[0].take().expect("a tx"),
            run: engine.run.get(simd),
            needs_rx: true,
            burst_size: 64,
            retry: Retry { count: 0, delay: Duration::ZERO },
            offloads: crate::offload::Caps { software: true, macsec: false },
            tx: a.tx,
            tx_mac: a.mac,
            peer_mac: a.peer_mac,
            template: a.template.clone(),
            seed_bursts: 0,
            policy: Some(crate::plugin::Chain::single(runner)),
            inject: Some(inject.clone()),
            echo: Default::default(),
            tunnels: Default::default(),
            prefetch_flow: true,
            tap: crate::capture::StreamTap::none(),
        });
        let mut cache = self.pool.cache();
        let mut burst = Burst::new();
        for f in frames {
            let mut p = cache.alloc().expect("a buffer");
            let _ = p.copy_from(f);
            burst.push(p);
        }
        feed.tx_burst(&mut cache, &mut burst, &mut crate::ports::TxRefused::default());
        cache.free_burst(&mut burst);
        stream.poll(&mut cache);
        // What a sent to port a's own inject queue goes out with the next poll.
        stream.poll(&mut cache);
        out.rx_burst(&mut cache, &mut burst, 512);
        cache.free_burst(&mut burst);
        let c = stream.counters().snapshot();
        assert_eq!(
            c.rx_packets + c.generated + c.redirected_in,
            c.tx_packets + c.drops.total() + c.redirected_out,
            "{c:?}"
        );
        stream.drain(&mut cache);
        out.drain(&mut cache);
        inject.drain(&mut cache);
        drop(stream);
        drop(cache);
        assert_eq!(self.pool.available(), self.pool.capacity(), "buffers leaked");
        Some(c)
    }
}

/// The host imports the interpreter calls, with their parameter types (`true`: i64) and whether
/// they return a value.
const CALLS: &[(&str, &[bool], bool)] = &[
    ("burst_len", &[], true),
    ("pkt_len", &[false], true),
    ("pkt_read", &[false; 4], true),
    ("pkt_write", &[false; 4], true),
    ("pkt_copy", &[false; 5], true),
    ("run_engine", &[false; 3], true),
    ("macswap", &[false; 2], true),
    ("set_offloads", &[false, true, false, false], true),
    ("drop_pkt", &[false], true),
    ("send_to", &[false; 2], true),
    ("set_sticky", &[false, true, false, false, false], true),
    ("clear_sticky", &[], true),
    ("counter_add", &[false, true], true),
    ("param_get", &[false; 4], true),
    ("log", &[false; 3], false),
    ("now_ns", &[], true),
];

/// A plugin whose `on_burst` runs the program at address 0 of its memory: a count, then `OP`-byte
/// operations (opcode, five little-endian `i32`s), each a call of `CALLS[opcode % CALLS.len()]`.
/// An `i64` argument is the `i32` argument shifted into the high half ORed with the next one.
fn interpreter() -> Vec<u8> {
    use wasm_encoder::{
        BlockType, CodeSection, EntityType, ExportKind, ExportSection, Function, FunctionSection, ImportSection,
        MemArg, MemorySection, MemoryType, Module, TypeSection, ValType,
    };
    let mut types = TypeSection::new();
    let mut imports = ImportSection::new();
    for (k, (name, params, ret)) in CALLS.iter().enumerate() {
        let p: Vec<ValType> = params.iter().map(|&w| if w { ValType::I64 } else { ValType::I32 }).collect();
        let r: Vec<ValType> = match (*ret, *name) {
            (false, _) => vec![],
            (true, "now_ns") => vec![ValType::I64],
            (true, _) => vec![ValType::I32],
        };
        types.ty().function(p, r);
        imports.import("wasmdp", name, EntityType::Function(k as u32));
    }
    let n = CALLS.len() as u32;
    types.ty().function([], [ValType::I32]); // n: abi_version
    types.ty().function([ValType::I32, ValType::I32], [ValType::I32]); // n+1: init, on_burst
    let mut funcs = FunctionSection::new();
    funcs.function(n).function(n + 1).function(n + 1);
    let mut memory = MemorySection::new();
    memory.memory(MemoryType { minimum: 1, maximum: Some(1), memory64: false, shared: false, page_size_log2: None });
    let mut exports = ExportSection::new();
    exports.export("memory", ExportKind::Memory, 0);
    exports.export("wasmdp_abi_version", ExportKind::Func, n);
    exports.export("wasmdp_init", ExportKind::Func, n + 1);
    exports.export("wasmdp_on_burst", ExportKind::Func, n + 2);
    let mut version = Function::new([]);
    version.instructions().i32_const(0x10000).end();
    let mut init = Function::new([]);
    init.instructions().i32_const(0).end();
    // Locals: 2 count, 3 p (address of the current op).
    let mut run = Function::new([(2, ValType::I32)]);
    let mut i = run.instructions();
    let arg = |i: &mut wasm_encoder::InstructionSink<'_>, k: u64| {
        i.local_get(3).i32_load(MemArg { offset: 1 + 4 * k, align: 0, memory_index: 0 });
    };
    i.i32_const(0).i32_load(MemArg { offset: 0, align: 2, memory_index: 0 }).local_set(2);
    i.i32_const(4).local_set(3);
    i.block(BlockType::Empty).loop_(BlockType::Empty);
    // while count > 0
    i.local_get(2).i32_eqz().br_if(1);
    for _ in 0..n {
        i.block(BlockType::Empty);
    }
    i.local_get(3).i32_load8_u(MemArg { offset: 0, align: 0, memory_index: 0 }).i32_const(n as i32).i32_rem_u();
    i.br_table((0..n).collect::<Vec<_>>(), n - 1);
    for (k, (_, params, ret)) in CALLS.iter().enumerate() {
        i.end();
        for (a, &wide) in params.iter().enumerate() {
            arg(&mut i, a as u64);
            if wide {
                i.i64_extend_i32_u().i64_const(32).i64_shl();
                arg(&mut i, a as u64 + 1);
                i.i64_extend_i32_u().i64_or();
            }
        }
        i.call(k as u32);
        if *ret {
            i.drop();
        }
        // Next op: p += OP, count -= 1, continue.
        i.local_get(3).i32_const(OP as i32).i32_add().local_set(3);
        i.local_get(2).i32_const(1).i32_sub().local_set(2);
        i.br(n - 1 - k as u32);
    }
    i.end().end();
    i.i32_const(0).end();
    let mut code = CodeSection::new();
    code.function(&version).function(&init).function(&run);
    let mut m = Module::new();
    m.section(&types).section(&imports).section(&funcs).section(&memory).section(&exports).section(&code);
    m.finish()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_interpreter_calls_the_host() {
        // Two frames; then: drop_pkt(1), run_engine(macswap, 0, 2), send_to(0, 0), pkt_read(5, ...).
        let frame = |b: u8| {
            let mut f = vec![b; 60];
            f[12] = 0x08;
            f
        };
        let mut data = vec![2u8, 46];
        data.extend(frame(1));
        data.push(46);
        data.extend(frame(2));
        for (op, args) in [(8u8, [1i32, 0, 0, 0, 0]), (5, [2, 0, 2, 0, 0]), (9, [0, 0, 0, 0, 0]), (2, [5, 0, 0, 4, 0])]
        {
            data.push(op);
            args.iter().for_each(|a| data.extend(a.to_le_bytes()));
        }
        let c = super::hostcalls(&data).unwrap();
        assert_eq!((c.rx_packets, c.drops.policy, c.redirected_out, c.redirected_in), (2, 1, 0, 0), "{c:?}");
        assert_eq!(c.tx_packets, 1, "the packet sent to its own port leaves with its burst");
        super::hostcalls(&[]);
        super::hostcalls(&[200, 1, 2, 3]);
    }
}
