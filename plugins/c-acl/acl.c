/* `acl` in C: the Rust example plugins/acl, rule for rule, on the same burst area (windows of the
 * first 64 bytes, read only). Params (all optional; a packet matching any configured rule is
 * dropped and counted in `denied`):
 *
 *   deny_udp_dst_port  IPv4 UDP packets to this destination port (not on non-first fragments)
 *   deny_src_ip        IPv4 packets from this source address (dotted quad)
 *   deny_proto         IPv4 packets of this IP protocol (0..=255)
 *   engine             engine for the packets that pass (default io)
 *
 * Per packet: Ethernet, up to two VLAN tags (0x8100, 0x88a8, 0x9100), IPv4, UDP. Non-IPv4 packets
 * and headers cut short never match. No host call per packet. Built by scripts/build-plugins.sh. */
#include "wasmdp_helpers.h"

#define WINDOW 64

WASMDP_WINDOWS_AREA(area, WINDOW);

static struct {
    int udp_dst_port_set, src_ip_set, proto_set;
    uint16_t udp_dst_port;
    uint8_t src_ip[4];
    uint8_t proto;
} rules;
/* The rules as words for the test of an untagged IPv4 packet without options at fixed offsets:
 * each a value no packet's field takes when its rule is not set (the Rust example's `Words`). */
static struct {
    uint32_t proto, port;
    uint64_t src;
} words;
static int32_t engine = WASMDP_ENGINE_IO;
static int32_t denied = -1;

WASMDP_ABI_EXPORT()

/* A number param of at most `max`: 1 and *out set, 0 when absent, -1 when refused (logged). */
static int number_param(const char *key, uint64_t max, const char *what, uint64_t *out) {
    char v[33];
    int32_t n = wasmdp_param(key, v, sizeof v);
    if (n == WASMDP_ERR_NOT_FOUND) return 0;
    if (n < 0 || !wasmdp_parse_uint(v, max, out)) {
        wasmdp_refuse_param(key, n < 0 ? "(too long)" : v, what);
        return -1;
    }
    return 1;
}

WASMDP_EXPORT("wasmdp_init") int32_t wasmdp_init(int32_t port, int32_t instance) {
    (void)port, (void)instance;
    int32_t rc = WASMDP_REGISTER_WINDOWS(area, 0);
    if (rc < 0) {
        wasmdp_log_str(WASMDP_LEVEL_ERROR, "the burst area was refused");
        return rc;
    }
    char v[33];
    int32_t n = wasmdp_param("deny_src_ip", v, sizeof v);
    if (n >= 0) {
        if (!wasmdp_parse_ipv4(v, rules.src_ip)) {
            wasmdp_refuse_param("deny_src_ip", v, "an IPv4 address");
            return 1;
        }
        rules.src_ip_set = 1;
    } else if (n != WASMDP_ERR_NOT_FOUND) {
        wasmdp_refuse_param("deny_src_ip", "(too long)", "an IPv4 address");
        return 1;
    }
    uint64_t x;
    int got = number_param("deny_udp_dst_port", 65535, "a number 0..=65535", &x);
    if (got < 0) return 1;
    rules.udp_dst_port_set = got, rules.udp_dst_port = (uint16_t)x;
    got = number_param("deny_proto", 255, "a number 0..=255", &x);
    if (got < 0) return 1;
    rules.proto_set = got, rules.proto = (uint8_t)x;
    if (!rules.udp_dst_port_set && !rules.src_ip_set && !rules.proto_set)
        wasmdp_log_str(WASMDP_LEVEL_WARN, "acl: no deny rule: every packet passes");
    n = wasmdp_param("engine", v, sizeof v);
    if (n >= 0) {
        engine = wasmdp_engine_id(v);
        if (engine < 0) {
            wasmdp_refuse_param("engine", v,
                                "io|mac|macswap|5tswap|copy|drop|vxlan_encap|vxlan_decap|geneve_encap|geneve_decap");
            return 1;
        }
    } else if (n != WASMDP_ERR_NOT_FOUND) {
        wasmdp_refuse_param("engine", "(too long)", "an engine name");
        return 1;
    }
    uint32_t src;
    __builtin_memcpy(&src, rules.src_ip, 4);
    words.proto = rules.proto_set ? rules.proto : UINT32_MAX;
    words.src = rules.src_ip_set ? (uint64_t)src : UINT64_MAX;
    /* The port as the packet holds it, read as a little-endian u16: no byte swap per packet. */
    words.port = rules.udp_dst_port_set ? __builtin_bswap16(rules.udp_dst_port) : UINT32_MAX;
    denied = wasmdp_counter("denied");
    return denied < 0 ? denied : 0;
}

/* Whether the `len` bytes of a frame's start at `h` match a rule. */
static inline int deny(const uint8_t *h, uint32_t len) {
    if (len < 14) return 0;
    uint32_t off = 12;
    uint16_t ethertype = wasmdp_be16(h + off);
    for (int t = 0; t < 2; t++) {
        if (ethertype != 0x8100 && ethertype != 0x88a8 && ethertype != 0x9100) break;
        off += 4;
        if (off + 2 > len) return 0;
        ethertype = wasmdp_be16(h + off);
    }
    if (ethertype != 0x0800 || len - (off + 2) < 20) return 0;
    const uint8_t *ip = h + off + 2;
    uint32_t ip_len = len - (off + 2), ihl = (uint32_t)(ip[0] & 0x0f) * 4;
    if (ip[0] >> 4 != 4 || ihl < 20) return 0;
    uint8_t proto = ip[9];
    if (rules.proto_set && proto == rules.proto) return 1;
    if (rules.src_ip_set && ip[12] == rules.src_ip[0] && ip[13] == rules.src_ip[1] && ip[14] == rules.src_ip[2] &&
        ip[15] == rules.src_ip[3])
        return 1;
    return rules.udp_dst_port_set && proto == 17 && (wasmdp_be16(ip + 6) & 0x1fff) == 0 && ihl + 4 <= ip_len &&
           wasmdp_be16(ip + ihl + 2) == rules.udp_dst_port;
}

/* 1 when the rules deny the packet of the `len` bytes at `h`, 0 when they pass it, -1 when it is
 * not an untagged IPv4 packet without options (for `deny`): three compares of words read at fixed
 * offsets, the fragment offset and the port as they lie. */
static inline int test_fixed(const uint8_t *h, uint32_t len) {
    uint32_t l2, l3, src;
    uint16_t port;
    if (len < 38) return -1;
    /* Bytes 12..16 (EtherType, version and header length) and 20..24 (flags and fragment offset,
     * TTL, protocol) one load each, in memory order (WebAssembly is little-endian). */
    __builtin_memcpy(&l2, h + 12, 4);
    if ((l2 & 0xffffff) != 0x450008) return -1;
    __builtin_memcpy(&l3, h + 20, 4);
    __builtin_memcpy(&src, h + 26, 4);
    __builtin_memcpy(&port, h + 36, 2);
    /* UDP and a first fragment in one compare. */
    uint32_t udp_port = (l3 & 0xff00ff1f) == (17u << 24) ? port : UINT32_MAX - 1;
    return (l3 >> 24) == words.proto || (uint64_t)src == words.src || udp_port == words.port;
}

/* The packets `test_fixed` left, tested by `deny`: how many it drops. Out of the loop, so that the
 * loop makes no call (values live across a call stay in stack slots in wasmtime's code). */
__attribute__((noinline, cold)) static int64_t deny_others(uint32_t n) {
    int64_t dropped = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (test_fixed(area.win[i], area.desc[i].win) < 0 && deny(area.win[i], area.desc[i].win)) {
            wasmdp_drop(&area.hdr, &area.desc[i]);
            dropped++;
        }
    }
    return dropped;
}

WASMDP_EXPORT("wasmdp_on_burst") int32_t wasmdp_on_burst(int32_t port, int32_t burst_len) {
    (void)port, (void)burst_len;
    wasmdp_pass_with(&area.hdr, engine);
    uint32_t n = area.hdr.len < WASMDP_MAX_BURST ? area.hdr.len : WASMDP_MAX_BURST;
    int64_t dropped = 0;
    int others = 0;
    /* Four packets a loop turn: each turn passes one epoch check in wasmtime's code, after which the
     * values the loop carries are reloaded from the stack (as the Rust SDK's `for_each` does). */
#pragma clang loop unroll_count(4)
    for (uint32_t i = 0; i < n; i++) {
        int t = test_fixed(area.win[i], area.desc[i].win);
        if (t > 0) {
            wasmdp_drop(&area.hdr, &area.desc[i]);
            dropped++;
        }
        others |= t < 0;
    }
    if (others) dropped += deny_others(n);
    wasmdp_counter_add(denied, dropped);
    return 0;
}
