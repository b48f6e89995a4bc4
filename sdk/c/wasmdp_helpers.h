/* A small header-only layer over wasmdp.h (generated) for policies in C, and in Zig through
 * @cImport: exports, the burst area, verdicts, packet bytes, params, counters, logs and maps.
 * Everything is static inline; nothing allocates. wasm32 only:
 *
 *   clang --target=wasm32 -O2 -ffreestanding -nostdlib -Wl,--no-entry -I sdk/c -o p.wasm p.c
 *
 * See docs/ABI.md, "Writing a policy in C". */
#ifndef WASMDP_HELPERS_H
#define WASMDP_HELPERS_H

#include "wasmdp.h"

#define WASMDP_EXPORT(name) __attribute__((export_name(name)))

/* Defines the wasmdp_abi_version export: this header's ABI version. */
#define WASMDP_ABI_EXPORT()                                                                        \
    WASMDP_EXPORT("wasmdp_abi_version") int32_t wasmdp_abi_version(void) { return WASMDP_ABI_VERSION; }

/* A burst area of windows for up to WASMDP_MAX_BURST packets of `WINDOW` bytes each, 8-byte
 * aligned: the header, the descriptors, the windows, as docs/ABI.md lays them out. */
#define WASMDP_WINDOWS_AREA(NAME, WINDOW)                                                          \
    static struct {                                                                                \
        wasmdp_area_header hdr;                                                                    \
        wasmdp_desc desc[WASMDP_MAX_BURST];                                                        \
        uint8_t win[WASMDP_MAX_BURST][WINDOW];                                                     \
    } __attribute__((aligned(8))) NAME;                                                            \
    _Static_assert(sizeof(NAME) == WASMDP_AREA_HEADER + WASMDP_MAX_BURST * (WASMDP_AREA_DESC + (WINDOW)), \
                   "the area's size")

/* Registers an area of WASMDP_WINDOWS_AREA (from wasmdp_init): 0, or an error code. */
#define WASMDP_REGISTER_WINDOWS(AREA, FLAGS)                                                       \
    wasmdp_burst_area(&(AREA), WASMDP_MAX_BURST, (int32_t)(sizeof((AREA).win[0]) | (FLAGS)))

/* ---- bytes ---- */

static inline uint32_t wasmdp_strlen(const char *s) {
    uint32_t n = 0;
    while (s[n]) n++;
    return n;
}

static inline int wasmdp_streq(const char *a, uint32_t a_len, const char *b) {
    uint32_t i = 0;
    for (; i < a_len; i++)
        if (b[i] != a[i]) return 0;
    return b[i] == 0;
}

/* A big-endian (network order) u16 at `p`. */
static inline uint16_t wasmdp_be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

/* ---- the burst area's header and verdicts ---- */

/* Runs `engine` natively on every packet left PASS (-1: none). */
static inline void wasmdp_pass_with(wasmdp_area_header *h, int32_t engine) { h->engine = engine; }

/* Sets a descriptor's verdict and argument, and marks the descriptors as written. */
static inline void wasmdp_verdict(wasmdp_area_header *h, wasmdp_desc *d, uint8_t verdict, uint16_t arg) {
    d->verdict = verdict;
    d->arg = arg;
    h->changed = 1;
}

static inline void wasmdp_drop(wasmdp_area_header *h, wasmdp_desc *d) {
    wasmdp_verdict(h, d, WASMDP_VERDICT_DROP, 0);
}

static inline void wasmdp_send(wasmdp_area_header *h, wasmdp_desc *d, uint16_t port) {
    wasmdp_verdict(h, d, WASMDP_VERDICT_SEND, port);
}

/* ---- logs ---- */

static inline void wasmdp_log_str(int32_t level, const char *msg) {
    wasmdp_log(level, msg, (int32_t)wasmdp_strlen(msg));
}

/* ---- counters ---- */

/* Registers a counter (from wasmdp_init): its id, or an error code. */
static inline int32_t wasmdp_counter(const char *name) {
    return wasmdp_counter_register(name, (int32_t)wasmdp_strlen(name));
}

/* ---- params ---- */

/* The `params:` value of `key` into `out` (NUL-terminated, at most `cap - 1` bytes), spaces around
 * it trimmed: its length, WASMDP_ERR_NOT_FOUND when absent, WASMDP_ERR_TOO_SMALL when longer. */
static inline int32_t wasmdp_param(const char *key, char *out, uint32_t cap) {
    if (cap == 0) return WASMDP_ERR_TOO_SMALL;
    int32_t n = wasmdp_param_get(key, (int32_t)wasmdp_strlen(key), out, (int32_t)cap - 1);
    if (n < 0) return n;
    int32_t start = 0;
    while (start < n && (out[start] == ' ' || out[start] == '\t')) start++;
    while (n > start && (out[n - 1] == ' ' || out[n - 1] == '\t')) n--;
    for (int32_t i = start; i < n; i++) out[i - start] = out[i];
    out[n - start] = 0;
    return n - start;
}

/* Logs "param `key`: `value` is not what" as an error: what a refusing init reports. */
static inline void wasmdp_refuse_param(const char *key, const char *value, const char *what) {
    char msg[192];
    uint32_t n = 0;
    const char *parts[] = {"param `", key, "`: `", value, "` is not ", what};
    for (uint32_t p = 0; p < sizeof parts / sizeof parts[0]; p++)
        for (const char *c = parts[p]; *c && n < sizeof msg; c++) msg[n++] = *c;
    wasmdp_log(WASMDP_LEVEL_ERROR, msg, (int32_t)n);
}

/* A decimal or 0x-hexadecimal number of at most `max`: 1 and *out set, 0 when not one. */
static inline int wasmdp_parse_uint(const char *s, uint64_t max, uint64_t *out) {
    uint32_t base = 10, i = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, i = 2;
    if (!s[i]) return 0;
    uint64_t v = 0;
    for (; s[i]; i++) {
        char c = s[i];
        uint32_t d = c >= '0' && c <= '9' ? (uint32_t)(c - '0')
                   : base == 16 && c >= 'a' && c <= 'f' ? (uint32_t)(c - 'a' + 10)
                   : base == 16 && c >= 'A' && c <= 'F' ? (uint32_t)(c - 'A' + 10)
                   : 99;
        if (d >= base || v > (max - d) / base) return 0;
        v = v * base + d;
    }
    *out = v;
    return 1;
}

/* A dotted-quad IPv4 address: 1 and out set, 0 when not one. */
static inline int wasmdp_parse_ipv4(const char *s, uint8_t out[4]) {
    for (int b = 0; b < 4; b++) {
        uint32_t v = 0, digits = 0;
        while (*s >= '0' && *s <= '9' && digits < 3) v = v * 10 + (uint32_t)(*s++ - '0'), digits++;
        if (digits == 0 || v > 255) return 0;
        out[b] = (uint8_t)v;
        if (b < 3 && *s++ != '.') return 0;
    }
    return *s == 0;
}

/* An engine name (WASMDP_ENGINE_NAMES, or `drop` for rxonly): its id, or -1. */
static inline int32_t wasmdp_engine_id(const char *name) {
    static const char *const names[WASMDP_ENGINE_COUNT] = WASMDP_ENGINE_NAMES;
    uint32_t len = wasmdp_strlen(name);
    if (wasmdp_streq(name, len, "drop")) return WASMDP_ENGINE_RXONLY;
    for (int32_t i = 0; i < WASMDP_ENGINE_COUNT; i++)
        if (wasmdp_streq(name, len, names[i])) return i;
    return -1;
}

/* ---- maps ---- */

/* Declares a map (from wasmdp_init): its id, or an error code. */
static inline int32_t wasmdp_map(const char *name, int32_t kind, int32_t key_size, int32_t value_size,
                                 int32_t capacity) {
    return wasmdp_map_declare(name, (int32_t)wasmdp_strlen(name), kind, key_size, value_size, capacity);
}

#endif /* WASMDP_HELPERS_H */
