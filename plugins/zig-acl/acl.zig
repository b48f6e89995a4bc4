//! `acl` in Zig: the Rust example plugins/acl, rule for rule, on the same burst area (windows of
//! the first 64 bytes, read only), through the generated module sdk/zig/wasmdp.zig. Params, all
//! optional (a packet matching any configured rule is dropped and counted in `denied`):
//! `deny_udp_dst_port`, `deny_src_ip`, `deny_proto`, `engine` (default io). Built by
//! scripts/build-plugins.sh.

const std = @import("std");
const w = @import("wasmdp");

const WINDOW = 64;

const Area = extern struct {
    hdr: w.AreaHeader,
    desc: [w.MAX_BURST]w.Desc,
    win: [w.MAX_BURST][WINDOW]u8,
};
comptime {
    if (@sizeOf(Area) != w.AREA_HEADER + w.MAX_BURST * (w.AREA_DESC + WINDOW)) @compileError("area size");
}

var area: Area align(8) = std.mem.zeroes(Area);

const Rules = struct {
    udp_dst_port: ?u16 = null,
    src_ip: ?[4]u8 = null,
    proto: ?u8 = null,
};
var rules: Rules = .{};

/// The rules as words for the test of an untagged IPv4 packet without options at fixed offsets:
/// each a value no packet's field takes when its rule is not set (the Rust example's `Words`).
const Words = struct {
    proto: u32 = std.math.maxInt(u32),
    src: u64 = std.math.maxInt(u64),
    port: u32 = std.math.maxInt(u32),
};
var words: Words = .{};
var engine: i32 = w.ENGINE_IO;
var denied: i32 = -1;

export fn wasmdp_abi_version() i32 {
    return w.ABI_VERSION;
}

fn log(level: i32, msg: []const u8) void {
    w.log(level, msg.ptr, @intCast(msg.len));
}

/// Logs "param `key`: `value` is not what", as the Rust SDK's refusal does.
fn refuse(key: []const u8, value: []const u8, what: []const u8) i32 {
    var buf: [192]u8 = undefined;
    const msg = std.fmt.bufPrint(&buf, "param `{s}`: `{s}` is not {s}", .{ key, value, what }) catch &buf;
    log(w.LEVEL_ERROR, msg);
    return 1;
}

const Param = union(enum) { absent, too_long, value: []const u8 };

/// The `params:` value of `key`, spaces around it trimmed.
fn param(key: []const u8, buf: []u8) Param {
    const n = w.param_get(key.ptr, @intCast(key.len), buf.ptr, @intCast(buf.len));
    if (n == w.ERR_NOT_FOUND) return .absent;
    if (n < 0) return .too_long;
    return .{ .value = std.mem.trim(u8, buf[0..@intCast(n)], " \t") };
}

/// A decimal or 0x-hexadecimal number of at most `max`.
fn parseUint(s: []const u8, max: u64) ?u64 {
    const hex = std.mem.startsWith(u8, s, "0x") or std.mem.startsWith(u8, s, "0X");
    const digits = if (hex) s[2..] else s;
    if (digits.len == 0) return null;
    var v: u64 = 0;
    const base: u64 = if (hex) 16 else 10;
    for (digits) |c| {
        const d: u64 = switch (c) {
            '0'...'9' => c - '0',
            'a'...'f' => if (hex) c - 'a' + 10 else return null,
            'A'...'F' => if (hex) c - 'A' + 10 else return null,
            else => return null,
        };
        if (v > (max - d) / base) return null;
        v = v * base + d;
    }
    return v;
}

fn parseIpv4(s: []const u8) ?[4]u8 {
    var out: [4]u8 = undefined;
    var parts = std.mem.splitScalar(u8, s, '.');
    for (&out) |*b| {
        const part = parts.next() orelse return null;
        if (part.len == 0 or part.len > 3) return null;
        for (part) |c| if (c < '0' or c > '9') return null;
        b.* = @intCast(parseUint(part, 255) orelse return null);
    }
    return if (parts.next() == null) out else null;
}

fn engineId(name: []const u8) ?i32 {
    if (std.mem.eql(u8, name, "drop")) return w.ENGINE_RXONLY;
    for (w.ENGINE_NAMES, 0..) |n, i| if (std.mem.eql(u8, name, n)) return @intCast(i);
    return null;
}

fn numberParam(key: []const u8, max: u64, what: []const u8, out: *?u64) bool {
    var buf: [33]u8 = undefined;
    switch (param(key, &buf)) {
        .absent => out.* = null,
        .too_long => return refuse(key, "(too long)", what) == 0,
        .value => |v| out.* = parseUint(v, max) orelse return refuse(key, v, what) == 0,
    }
    return true;
}

export fn wasmdp_init(port: i32, instance: i32) i32 {
    _ = port;
    _ = instance;
    const rc = w.burst_area(@ptrCast(&area), w.MAX_BURST, WINDOW);
    if (rc < 0) {
        log(w.LEVEL_ERROR, "the burst area was refused");
        return rc;
    }
    var buf: [33]u8 = undefined;
    switch (param("deny_src_ip", &buf)) {
        .absent => {},
        .too_long => return refuse("deny_src_ip", "(too long)", "an IPv4 address"),
        .value => |v| rules.src_ip = parseIpv4(v) orelse return refuse("deny_src_ip", v, "an IPv4 address"),
    }
    var n: ?u64 = null;
    if (!numberParam("deny_udp_dst_port", 65535, "a number 0..=65535", &n)) return 1;
    if (n) |p| rules.udp_dst_port = @intCast(p);
    if (!numberParam("deny_proto", 255, "a number 0..=255", &n)) return 1;
    if (n) |p| rules.proto = @intCast(p);
    if (rules.udp_dst_port == null and rules.src_ip == null and rules.proto == null) {
        log(w.LEVEL_WARN, "acl: no deny rule: every packet passes");
    }
    switch (param("engine", &buf)) {
        .absent => {},
        .too_long => return refuse("engine", "(too long)", "an engine name"),
        .value => |v| engine = engineId(v) orelse
            return refuse("engine", v, "io|mac|macswap|5tswap|copy|drop|vxlan_encap|vxlan_decap|geneve_encap|geneve_decap"),
    }
    if (rules.proto) |p| words.proto = p;
    if (rules.src_ip) |a| words.src = std.mem.readInt(u32, &a, .little);
    // The port as the packet holds it, read as a little-endian u16: no byte swap per packet.
    if (rules.udp_dst_port) |p| words.port = @byteSwap(p);
    const name = "denied";
    denied = w.counter_register(name, name.len);
    return if (denied < 0) denied else 0;
}

fn be16(b: []const u8, at: usize) u16 {
    return @as(u16, b[at]) << 8 | b[at + 1];
}

/// Whether a frame starting with `h` matches a rule.
fn deny(r: Rules, h: []const u8) bool {
    if (h.len < 14) return false;
    var off: usize = 12;
    var ethertype = be16(h, off);
    for (0..2) |_| {
        if (ethertype != 0x8100 and ethertype != 0x88a8 and ethertype != 0x9100) break;
        off += 4;
        if (off + 2 > h.len) return false;
        ethertype = be16(h, off);
    }
    if (ethertype != 0x0800 or h.len - (off + 2) < 20) return false;
    const ip = h[off + 2 ..];
    const ihl = @as(usize, ip[0] & 0x0f) * 4;
    if (ip[0] >> 4 != 4 or ihl < 20) return false;
    const proto = ip[9];
    if (r.proto) |p| if (p == proto) return true;
    if (r.src_ip) |s| if (std.mem.eql(u8, &s, ip[12..16])) return true;
    const port = r.udp_dst_port orelse return false;
    return proto == 17 and be16(ip, 6) & 0x1fff == 0 and ihl + 4 <= ip.len and be16(ip, ihl + 2) == port;
}

/// Whether the rules deny the packet whose first bytes are `h`, if it is an untagged IPv4 packet
/// without options (three compares of words read at fixed offsets, the fragment offset and the port
/// as they lie); null for any other packet, which `deny` tests.
inline fn testFixed(h: []const u8) ?bool {
    // Bytes 12..16 (EtherType, version and header length) and 20..24 (flags and fragment offset,
    // TTL, protocol) one load each, in memory order; UDP and a first fragment in one compare.
    if (h.len < 38 or std.mem.readInt(u32, h[12..16], .little) & 0xffffff != 0x450008) return null;
    const l3 = std.mem.readInt(u32, h[20..24], .little);
    const src: u64 = std.mem.readInt(u32, h[26..30], .little);
    const port: u32 = if (l3 & 0xff00ff1f == 17 << 24) std.mem.readInt(u16, h[36..38], .little) else std.math.maxInt(u32) - 1;
    return l3 >> 24 == words.proto or src == words.src or port == words.port;
}

/// The packets `testFixed` left, tested by `deny`: how many it drops. Out of the loop, so that the
/// loop makes no call (values live across a call stay in stack slots in wasmtime's code).
noinline fn denyOthers(n: usize) i64 {
    @branchHint(.cold);
    var dropped: i64 = 0;
    for (0..n) |i| {
        const h = area.win[i][0..area.desc[i].win];
        if (testFixed(h) == null and deny(rules, h)) {
            area.desc[i].verdict = w.VERDICT_DROP;
            area.hdr.changed = 1;
            dropped += 1;
        }
    }
    return dropped;
}

/// Packet `i` tested by `testFixed`: dropped and counted when denied; `others` set when it was
/// not tested.
inline fn one(i: usize, dropped: *i64, others: *bool) void {
    if (testFixed(area.win[i][0..area.desc[i].win])) |deny_it| {
        if (deny_it) {
            area.desc[i].verdict = w.VERDICT_DROP;
            area.hdr.changed = 1;
            dropped.* += 1;
        }
    } else others.* = true;
}

export fn wasmdp_on_burst(port: i32, burst_len: i32) i32 {
    _ = port;
    _ = burst_len;
    area.hdr.engine = engine;
    const n = @min(area.hdr.len, w.MAX_BURST);
    var dropped: i64 = 0;
    var others = false;
    // Four packets a loop turn: each turn passes one epoch check in wasmtime's code, after which the
    // values the loop carries are reloaded from the stack (as the Rust SDK's `for_each` does).
    var i: usize = 0;
    while (n - i >= 4) : (i += 4) {
        inline for (0..4) |k| one(i + k, &dropped, &others);
    }
    while (i < n) : (i += 1) one(i, &dropped, &others);
    if (others) dropped += denyOthers(n);
    _ = w.counter_add(denied, dropped);
    return 0;
}
