// `acl` in AssemblyScript: the Rust example plugins/acl, rule for rule, on the same burst area
// (windows of the first 64 bytes, read only), through the generated module
// sdk/assemblyscript/wasmdp.ts. Params, all optional (a packet matching any configured rule is
// dropped and counted in `denied`): `deny_udp_dst_port`, `deny_src_ip`, `deny_proto`, `engine`
// (default io). Built with the stub runtime: nothing here allocates, so no garbage collector runs,
// and nothing is ever allocated per burst (scripts/build-plugins.sh).
import * as w from "../../sdk/assemblyscript/wasmdp";

const WINDOW: u32 = 64;
const AREA_BYTES: u32 = w.AREA_HEADER + w.MAX_BURST * (w.AREA_DESC + WINDOW);
const area: usize = memory.data(AREA_BYTES, 8);
const DESCS: usize = area + w.AREA_HEADER;
const WINDOWS: usize = DESCS + w.MAX_BURST * w.AREA_DESC;

// Scratch for params and messages (init only).
const BUF_CAP: u32 = 33;
const buf: usize = memory.data(BUF_CAP);
const MSG_CAP: u32 = 192;
const msg: usize = memory.data(MSG_CAP);

let portSet = false;
let port: u16 = 0;
let srcSet = false;
let src: u32 = 0; // the address's bytes in memory order (as loaded from a window)
let protoSet = false;
let proto: u8 = 0;
// The rules as words for the test of an untagged IPv4 packet without options at fixed offsets:
// each a value no packet's field takes when its rule is not set (the Rust example's `Words`).
let wordProto: u32 = u32.MAX_VALUE;
let wordSrc: u64 = u64.MAX_VALUE;
let wordPort: u32 = u32.MAX_VALUE;
let engine: i32 = w.ENGINE_IO;
let denied: i32 = -1;

export function wasmdp_abi_version(): i32 {
  return w.ABI_VERSION;
}

// A string literal's UTF-16 code units as bytes at `at` (ASCII), up to `cap`: the bytes written.
function putStr(at: usize, used: u32, cap: u32, s: string): u32 {
  for (let i = 0; i < s.length && used < cap; i++) store<u8>(at + used++, <u8>s.charCodeAt(i));
  return used;
}

function logStr(level: i32, s: string): void {
  w.log(level, msg, putStr(msg, 0, MSG_CAP, s));
}

// Logs "param `key`: `value` is not what", value the `n` bytes at `buf` (or `alt`).
function refuse(key: string, n: i32, alt: string, what: string): i32 {
  let used = putStr(msg, 0, MSG_CAP, "param `");
  used = putStr(msg, used, MSG_CAP, key);
  used = putStr(msg, used, MSG_CAP, "`: `");
  if (n < 0) used = putStr(msg, used, MSG_CAP, alt);
  else for (let i = 0; i < n && used < MSG_CAP; i++) store<u8>(msg + used++, load<u8>(buf + i));
  used = putStr(msg, used, MSG_CAP, "` is not ");
  used = putStr(msg, used, MSG_CAP, what);
  w.log(w.LEVEL_ERROR, msg, used);
  return 1;
}

// The `params:` value of `key` at `buf`, spaces around it trimmed: its length, or an error code.
function param(key: string): i32 {
  const k = putStr(msg, 0, MSG_CAP, key);
  let n = w.param_get(msg, k, buf, BUF_CAP - 1);
  if (n < 0) return n;
  let start = 0;
  while (start < n && (load<u8>(buf + start) == 32 || load<u8>(buf + start) == 9)) start++;
  while (n > start && (load<u8>(buf + n - 1) == 32 || load<u8>(buf + n - 1) == 9)) n--;
  for (let i = start; i < n; i++) store<u8>(buf + i - start, load<u8>(buf + i));
  return n - start;
}

// The `n` bytes at `at` as a decimal or 0x-hexadecimal number of at most `max`; -1 when not one.
function parseUint(at: usize, n: i32, max: i64): i64 {
  let i = 0;
  let base: i64 = 10;
  if (n >= 2 && load<u8>(at) == 48 && (load<u8>(at + 1) | 0x20) == 120) {
    base = 16;
    i = 2;
  }
  if (i == n) return -1;
  let v: i64 = 0;
  for (; i < n; i++) {
    const c = <i64>load<u8>(at + i);
    let d: i64 = 99;
    if (c >= 48 && c <= 57) d = c - 48;
    else if (base == 16 && (c | 0x20) >= 97 && (c | 0x20) <= 102) d = (c | 0x20) - 87;
    if (d >= base || v > (max - d) / base) return -1;
    v = v * base + d;
  }
  return v;
}

// The `n` bytes at `buf` as a dotted quad (bytes in memory order), or -1.
function parseIpv4(n: i32): i64 {
  let out: i64 = 0;
  let i = 0;
  for (let b = 0; b < 4; b++) {
    let start = i;
    while (i < n && load<u8>(buf + i) != 46) i++;
    if (i - start == 0 || i - start > 3) return -1;
    const v = parseUint(buf + start, i - start, 255);
    if (v < 0) return -1;
    out |= v << (8 * b);
    if (b < 3) {
      if (i >= n) return -1;
      i++;
    }
  }
  return i == n ? out : -1;
}

function bufIs(n: i32, s: string): bool {
  if (n != s.length) return false;
  for (let i = 0; i < n; i++) if (load<u8>(buf + i) != <u8>s.charCodeAt(i)) return false;
  return true;
}

const NAMES = "io|mac|macswap|5tswap|copy|drop|vxlan_encap|vxlan_decap|geneve_encap|geneve_decap";

function engineId(n: i32): i32 {
  if (bufIs(n, "drop") || bufIs(n, "rxonly")) return w.ENGINE_RXONLY;
  const ids: i32[] = [0, 1, 2, 3, 4, 6, 7, 8, 9];
  const names = ["io", "mac", "macswap", "5tswap", "copy", "vxlan_encap", "vxlan_decap", "geneve_encap", "geneve_decap"];
  for (let i = 0; i < names.length; i++) if (bufIs(n, names[i])) return ids[i];
  return -1;
}

export function wasmdp_init(_port: i32, _instance: i32): i32 {
  const rc = w.burst_area(area, w.MAX_BURST, WINDOW);
  if (rc < 0) {
    logStr(w.LEVEL_ERROR, "the burst area was refused");
    return rc;
  }
  let n = param("deny_src_ip");
  if (n >= 0) {
    const ip = parseIpv4(n);
    if (ip < 0) return refuse("deny_src_ip", n, "", "an IPv4 address");
    srcSet = true;
    src = <u32>ip;
  } else if (n != w.ERR_NOT_FOUND) return refuse("deny_src_ip", -1, "(too long)", "an IPv4 address");
  n = param("deny_udp_dst_port");
  if (n >= 0) {
    const v = parseUint(buf, n, 65535);
    if (v < 0) return refuse("deny_udp_dst_port", n, "", "a number 0..=65535");
    portSet = true;
    port = <u16>v;
  } else if (n != w.ERR_NOT_FOUND) return refuse("deny_udp_dst_port", -1, "(too long)", "a number 0..=65535");
  n = param("deny_proto");
  if (n >= 0) {
    const v = parseUint(buf, n, 255);
    if (v < 0) return refuse("deny_proto", n, "", "a number 0..=255");
    protoSet = true;
    proto = <u8>v;
  } else if (n != w.ERR_NOT_FOUND) return refuse("deny_proto", -1, "(too long)", "a number 0..=255");
  if (!portSet && !srcSet && !protoSet) logStr(w.LEVEL_WARN, "acl: no deny rule: every packet passes");
  n = param("engine");
  if (n >= 0) {
    engine = engineId(n);
    if (engine < 0) return refuse("engine", n, "", NAMES);
  } else if (n != w.ERR_NOT_FOUND) return refuse("engine", -1, "(too long)", "an engine name");
  if (protoSet) wordProto = proto;
  if (srcSet) wordSrc = src;
  // The port as the packet holds it, read as a little-endian u16: no byte swap per packet.
  if (portSet) wordPort = bswap<u16>(port);
  const k = putStr(msg, 0, MSG_CAP, "denied");
  denied = w.counter_register(msg, k);
  return denied < 0 ? denied : 0;
}

// @ts-ignore: decorator
@inline function be16(at: usize): u32 {
  return (<u32>load<u8>(at) << 8) | load<u8>(at + 1);
}

// Whether the `len` bytes of a frame's start at `h` match a rule.
// @ts-ignore: decorator
@inline function deny(h: usize, len: u32): bool {
  if (len < 14) return false;
  let off: u32 = 12;
  let ethertype = be16(h + off);
  for (let t = 0; t < 2; t++) {
    if (ethertype != 0x8100 && ethertype != 0x88a8 && ethertype != 0x9100) break;
    off += 4;
    if (off + 2 > len) return false;
    ethertype = be16(h + off);
  }
  if (ethertype != 0x0800 || len - (off + 2) < 20) return false;
  const ip = h + off + 2;
  const ipLen = len - (off + 2);
  const v = load<u8>(ip);
  const ihl = (<u32>v & 0x0f) * 4;
  if (v >> 4 != 4 || ihl < 20) return false;
  const p = load<u8>(ip + 9);
  if (protoSet && p == proto) return true;
  if (srcSet && load<u32>(ip + 12) == src) return true;
  return portSet && p == 17 && (be16(ip + 6) & 0x1fff) == 0 && ihl + 4 <= ipLen && be16(ip + ihl + 2) == port;
}

// 1 when the rules deny the packet of the `len` bytes at `h`, 0 when they pass it, -1 when it is
// not an untagged IPv4 packet without options (for `deny`): three compares of words read at fixed
// offsets, the fragment offset and the port as they lie.
// @ts-ignore: decorator
@inline function testFixed(h: usize, len: u32): i32 {
  if (len < 38 || (load<u32>(h + 12) & 0xFFFFFF) != 0x450008) return -1;
  // Bytes 20..24 (flags and fragment offset, TTL, protocol) one load: UDP and a first fragment in
  // one compare.
  const l3 = load<u32>(h + 20);
  const udpPort: u32 = (l3 & 0xff00ff1f) == (17 << 24) ? <u32>load<u16>(h + 36) : u32.MAX_VALUE - 1;
  return i32((l3 >> 24) == wordProto || <u64>load<u32>(h + 26) == wordSrc || udpPort == wordPort);
}

// The packets `testFixed` left, tested by `deny`: how many it drops. Out of the loop, so that the
// loop makes no call (values live across a call stay in stack slots in wasmtime's code).
function denyOthers(n: u32): i64 {
  let dropped: i64 = 0;
  for (let i: u32 = 0; i < n; i++) {
    const d = DESCS + i * w.AREA_DESC;
    const h = WINDOWS + i * WINDOW;
    const len = load<u16>(d + w.DESC_WIN);
    if (testFixed(h, len) < 0 && deny(h, len)) {
      store<u8>(d + w.DESC_VERDICT, <u8>w.VERDICT_DROP);
      store<u32>(area + w.AREA_HEADER_CHANGED, 1);
      dropped++;
    }
  }
  return dropped;
}

// Packet `i` tested by `testFixed` and dropped when denied: 1 dropped, 0 passed, -1 not tested.
// @ts-ignore: decorator
@inline function one(i: u32): i32 {
  const d = DESCS + i * w.AREA_DESC;
  const t = testFixed(WINDOWS + i * WINDOW, load<u16>(d + w.DESC_WIN));
  if (t > 0) {
    store<u8>(d + w.DESC_VERDICT, <u8>w.VERDICT_DROP);
    store<u32>(area + w.AREA_HEADER_CHANGED, 1);
  }
  return t;
}

export function wasmdp_on_burst(_port: i32, _burstLen: i32): i32 {
  store<i32>(area + w.AREA_HEADER_ENGINE, engine);
  const n = min(load<u32>(area + w.AREA_HEADER_LEN), w.MAX_BURST);
  let dropped: i64 = 0;
  let others = false;
  // Four packets a loop turn: each turn passes one epoch check in wasmtime's code, after which the
  // values the loop carries are reloaded from the stack (as the Rust SDK's `for_each` does).
  let i: u32 = 0;
  for (; n - i >= 4; i += 4) {
    const t0 = one(i), t1 = one(i + 1), t2 = one(i + 2), t3 = one(i + 3);
    // Each test to a number first: the sum of two `bool`s is a `bool` in AssemblyScript.
    dropped += <i64>(<i32>(t0 > 0) + <i32>(t1 > 0) + <i32>(t2 > 0) + <i32>(t3 > 0));
    others = others || (t0 | t1 | t2 | t3) < 0;
  }
  for (; i < n; i++) {
    const t = one(i);
    dropped += <i64>(<i32>(t > 0));
    others = others || t < 0;
  }
  if (others) dropped += denyOthers(n);
  w.counter_add(denied, dropped);
  return 0;
}
