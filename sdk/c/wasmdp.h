/* The wasmdp plugin ABI 1.1 for C: imports, constants and the layouts of the burst area and
 * the context. GENERATED from the wasmdp-abi crate (sdk/abi) by
 * `WASMDP_BLESS=1 cargo test -p wasmdp-abi --test generated`: do not edit. The prose is
 * docs/ABI.md; wasmdp_helpers.h is the hand-written layer on top. wasm32, little-endian. */
#ifndef WASMDP_H
#define WASMDP_H

#include <stddef.h>
#include <stdint.h>

/* The ABI version a module returns from wasmdp_abi_version. */
#define WASMDP_ABI_MAJOR 1
#define WASMDP_ABI_MINOR 1
#define WASMDP_ABI_VERSION 0x10001

/* Limits. */
#define WASMDP_MAX_BURST 512
#define WASMDP_ALL_PACKETS (-1)
#define WASMDP_MAX_COUNTERS 16

/* Engine ids (run_engine, set_sticky, the area's engine and ENGINE verdicts). */
#define WASMDP_ENGINE_IO 0
#define WASMDP_ENGINE_MAC 1
#define WASMDP_ENGINE_MACSWAP 2
#define WASMDP_ENGINE_FIVETSWAP 3
#define WASMDP_ENGINE_COPY 4
#define WASMDP_ENGINE_RXONLY 5
#define WASMDP_ENGINE_VXLAN_ENCAP 6
#define WASMDP_ENGINE_VXLAN_DECAP 7
#define WASMDP_ENGINE_GENEVE_ENCAP 8
#define WASMDP_ENGINE_GENEVE_DECAP 9
#define WASMDP_ENGINE_COUNT 10

/* TX offload flags (ol_flags bits). */
#define WASMDP_FLAG_TX_VLAN 0x10000000000ULL
#define WASMDP_FLAG_TX_QINQ 0x20000000000ULL
#define WASMDP_FLAG_TX_MACSEC 0x40000000000ULL
#define WASMDP_FLAG_TX_IP_CKSUM 0x80000000000ULL
#define WASMDP_FLAG_TX_UDP_CKSUM 0x100000000000ULL
#define WASMDP_FLAG_TX_TCP_CKSUM 0x200000000000ULL
#define WASMDP_FLAG_ALLOWED 0x3f0000000000ULL

/* Error codes (negative results). */
#define WASMDP_ERR_BAD_INDEX (-1)
#define WASMDP_ERR_BAD_RANGE (-2)
#define WASMDP_ERR_BAD_MEMORY (-3)
#define WASMDP_ERR_BAD_ENGINE (-4)
#define WASMDP_ERR_BAD_PORT (-5)
#define WASMDP_ERR_BAD_FLAGS (-6)
#define WASMDP_ERR_NOT_FOUND (-7)
#define WASMDP_ERR_TOO_SMALL (-8)
#define WASMDP_ERR_NO_BURST (-9)
#define WASMDP_ERR_GONE (-10)
#define WASMDP_ERR_FULL (-11)
#define WASMDP_ERR_NO_ROOM (-12)
#define WASMDP_ERR_NOT_INIT (-13)

/* Log levels. */
#define WASMDP_LEVEL_ERROR 1
#define WASMDP_LEVEL_WARN 2
#define WASMDP_LEVEL_INFO 3
#define WASMDP_LEVEL_DEBUG 4

/* wasmdp_on_burst's engine verdict: WASMDP_RUN_ENGINE | id. */
#define WASMDP_RUN_ENGINE 0x10000

/* The burst area: sizes and burst_area's window flags. */
#define WASMDP_AREA_HEADER 64
#define WASMDP_AREA_DESC 32
#define WASMDP_AREA_MAX_WINDOW 1024
#define WASMDP_AREA_WINDOW_BYTES 0xffff
#define WASMDP_AREA_FLOW_HASH 0x10000
#define WASMDP_AREA_HEADS 0x20000
#define WASMDP_AREA_DIRECT 0x40000
#define WASMDP_AREA_DROPS 0x80000
#define WASMDP_AREA_DIRECT_HEAD 8
#define WASMDP_AREA_LEN_BYTES 4

/* Descriptor verdicts. */
#define WASMDP_VERDICT_PASS 0
#define WASMDP_VERDICT_DROP 1
#define WASMDP_VERDICT_SEND 2
#define WASMDP_VERDICT_ENGINE 3

/* Descriptor RX flags. */
#define WASMDP_RX_VLAN 256
#define WASMDP_RX_TUNNEL 512

/* The context: sizes and port flags. */
#define WASMDP_CONTEXT_HEADER 16
#define WASMDP_CONTEXT_PORT 16
#define WASMDP_CONTEXT_SENDABLE 1
#define WASMDP_CONTEXT_MAX_PORTS 256

/* Map kinds and limits. */
#define WASMDP_MAP_HASH 0
#define WASMDP_MAP_ARRAY 1
#define WASMDP_MAP_PERCPU_HASH 2
#define WASMDP_MAP_PERCPU_ARRAY 3
#define WASMDP_MAP_LRU_HASH 4
#define WASMDP_MAP_LPM_TRIE 5
#define WASMDP_MAP_NEXT_KEY_SLOTS 256
#define WASMDP_MAP_MAX_LPM_DATA 16
#define WASMDP_MAP_MAX_TTL_MS 0x757b12c00ULL
#define WASMDP_MAP_MAX_KEY 64
#define WASMDP_MAP_MAX_VALUE 1024
#define WASMDP_MAP_MAX_CAPACITY 0x1000000
#define WASMDP_MAP_MAX_NAME 64

/* Engine names by id, as configs and params spell them (WASMDP_ENGINE_COUNT of them). */
#define WASMDP_ENGINE_NAMES { "io", "mac", "macswap", "5tswap", "copy", "rxonly", "vxlan_encap", "vxlan_decap", "geneve_encap", "geneve_decap" }

/* Burst area header (area::hdr, 64 bytes). */
typedef struct wasmdp_area_header {
    /* in: Packets in the burst. */
    uint32_t len;
    /* in: The RX port (index in `ports:`). */
    uint16_t port;
    /* in: The RX queue. */
    uint16_t queue;
    /* in: The stream's TX port. */
    uint16_t tx_port;
    /* in: Bytes per window. */
    uint16_t window;
    /* out: Engine id run natively on every packet whose verdict is `PASS` (-1: none). */
    int32_t engine;
    /* out: Nonzero when the plugin wrote any descriptor's out fields (heads: any window); 0 lets
     * the host skip reading them (all `PASS`, nothing to write back). */
    uint32_t changed;
    uint8_t _pad20[4];
    /* out: TX offload flags (`flags::ALLOWED`) for every packet that is transmitted. */
    uint64_t offloads;
    /* out: Inner VLAN TCI for `TX_VLAN`/`TX_QINQ`. */
    uint16_t vlan_tci;
    /* out: Outer VLAN TCI for `TX_QINQ`. */
    uint16_t vlan_outer;
    uint8_t _pad36[4];
    /* in: The host's monotonic clock (nanoseconds, as `now_ns`) when the call began, to within the
     * host's epoch tick (250 us): read once per burst, not per call. */
    uint64_t now_ns;
    uint8_t _pad48[16];
} wasmdp_area_header;
_Static_assert(sizeof(wasmdp_area_header) == 64, "wasmdp_area_header size");
_Static_assert(offsetof(wasmdp_area_header, len) == 0, "wasmdp_area_header.len");
_Static_assert(offsetof(wasmdp_area_header, port) == 4, "wasmdp_area_header.port");
_Static_assert(offsetof(wasmdp_area_header, queue) == 6, "wasmdp_area_header.queue");
_Static_assert(offsetof(wasmdp_area_header, tx_port) == 8, "wasmdp_area_header.tx_port");
_Static_assert(offsetof(wasmdp_area_header, window) == 10, "wasmdp_area_header.window");
_Static_assert(offsetof(wasmdp_area_header, engine) == 12, "wasmdp_area_header.engine");
_Static_assert(offsetof(wasmdp_area_header, changed) == 16, "wasmdp_area_header.changed");
_Static_assert(offsetof(wasmdp_area_header, offloads) == 24, "wasmdp_area_header.offloads");
_Static_assert(offsetof(wasmdp_area_header, vlan_tci) == 32, "wasmdp_area_header.vlan_tci");
_Static_assert(offsetof(wasmdp_area_header, vlan_outer) == 34, "wasmdp_area_header.vlan_outer");
_Static_assert(offsetof(wasmdp_area_header, now_ns) == 40, "wasmdp_area_header.now_ns");

/* Descriptor (areas with windows) (area::desc, 32 bytes). */
typedef struct wasmdp_desc {
    /* in: Packet length. */
    uint32_t len;
    /* in: Bytes of the window that hold packet bytes (`min(len, window)`). */
    uint16_t win;
    /* in: Input port. */
    uint16_t port;
    /* in: With `FLOW_HASH` registered, the host's `hash::flow_hash` of the packet; else the RX
     * port's hash (0: none). */
    uint32_t hash;
    /* in: RX flags (`rx::VLAN`, `rx::TUNNEL`). */
    uint32_t rx_flags;
    /* out: The verdict (`verdict::`). */
    uint8_t verdict;
    uint8_t _pad17[1];
    /* out: The verdict's argument: the port for `SEND`, the engine id for `ENGINE`. */
    uint16_t arg;
    /* out: Length change at the front: `n > 0` prepends `n` bytes, `n < 0` strips `-n`. */
    int16_t head;
    /* out: Length change at the tail: `n > 0` appends `n` bytes, `n < 0` trims `-n`. */
    int16_t tail;
    /* out: Window bytes `0..dirty` to copy into the packet, after the `HEAD` and `TAIL` changes:
     * window byte 0 is then the new first byte. At most the window (0 with `DIRECT`). */
    uint16_t dirty;
    /* in: Bytes that can be prepended (`HEAD` at most this). */
    uint16_t headroom;
    /* in: Bytes that can be appended (`TAIL` at most this). */
    uint16_t tailroom;
    uint8_t _pad30[2];
} wasmdp_desc;
_Static_assert(sizeof(wasmdp_desc) == 32, "wasmdp_desc size");
_Static_assert(offsetof(wasmdp_desc, len) == 0, "wasmdp_desc.len");
_Static_assert(offsetof(wasmdp_desc, win) == 4, "wasmdp_desc.win");
_Static_assert(offsetof(wasmdp_desc, port) == 6, "wasmdp_desc.port");
_Static_assert(offsetof(wasmdp_desc, hash) == 8, "wasmdp_desc.hash");
_Static_assert(offsetof(wasmdp_desc, rx_flags) == 12, "wasmdp_desc.rx_flags");
_Static_assert(offsetof(wasmdp_desc, verdict) == 16, "wasmdp_desc.verdict");
_Static_assert(offsetof(wasmdp_desc, arg) == 18, "wasmdp_desc.arg");
_Static_assert(offsetof(wasmdp_desc, head) == 20, "wasmdp_desc.head");
_Static_assert(offsetof(wasmdp_desc, tail) == 22, "wasmdp_desc.tail");
_Static_assert(offsetof(wasmdp_desc, dirty) == 24, "wasmdp_desc.dirty");
_Static_assert(offsetof(wasmdp_desc, headroom) == 26, "wasmdp_desc.headroom");
_Static_assert(offsetof(wasmdp_desc, tailroom) == 28, "wasmdp_desc.tailroom");

/* Descriptor (areas with `DIRECT`) (area::desc, 32 bytes). */
typedef struct wasmdp_direct_desc {
    /* in: Packet length. */
    uint32_t len;
    /* in: With `DIRECT` (in place of `WIN` and `PORT`): offset in the plugin's memory of the
     * packet's first byte. Its `HEADROOM` bytes before it and `LEN + TAILROOM` bytes from it are
     * the buffer's: bytes written in front of it become the packet's with a positive `HEAD`, bytes
     * written after its end with a positive `TAIL`. */
    uint32_t data;
    /* in: With `FLOW_HASH` registered, the host's `hash::flow_hash` of the packet; else the RX
     * port's hash (0: none). */
    uint32_t hash;
    /* in: RX flags (`rx::VLAN`, `rx::TUNNEL`). */
    uint32_t rx_flags;
    /* out: The verdict (`verdict::`). */
    uint8_t verdict;
    uint8_t _pad17[1];
    /* out: The verdict's argument: the port for `SEND`, the engine id for `ENGINE`. */
    uint16_t arg;
    /* out: Length change at the front: `n > 0` prepends `n` bytes, `n < 0` strips `-n`. */
    int16_t head;
    /* out: Length change at the tail: `n > 0` appends `n` bytes, `n < 0` trims `-n`. */
    int16_t tail;
    /* out: Window bytes `0..dirty` to copy into the packet, after the `HEAD` and `TAIL` changes:
     * window byte 0 is then the new first byte. At most the window (0 with `DIRECT`). */
    uint16_t dirty;
    /* in: Bytes that can be prepended (`HEAD` at most this). */
    uint16_t headroom;
    /* in: Bytes that can be appended (`TAIL` at most this). */
    uint16_t tailroom;
    /* in: With `DIRECT`: input port. */
    uint16_t direct_port;
} wasmdp_direct_desc;
_Static_assert(sizeof(wasmdp_direct_desc) == 32, "wasmdp_direct_desc size");
_Static_assert(offsetof(wasmdp_direct_desc, len) == 0, "wasmdp_direct_desc.len");
_Static_assert(offsetof(wasmdp_direct_desc, data) == 4, "wasmdp_direct_desc.data");
_Static_assert(offsetof(wasmdp_direct_desc, hash) == 8, "wasmdp_direct_desc.hash");
_Static_assert(offsetof(wasmdp_direct_desc, rx_flags) == 12, "wasmdp_direct_desc.rx_flags");
_Static_assert(offsetof(wasmdp_direct_desc, verdict) == 16, "wasmdp_direct_desc.verdict");
_Static_assert(offsetof(wasmdp_direct_desc, arg) == 18, "wasmdp_direct_desc.arg");
_Static_assert(offsetof(wasmdp_direct_desc, head) == 20, "wasmdp_direct_desc.head");
_Static_assert(offsetof(wasmdp_direct_desc, tail) == 22, "wasmdp_direct_desc.tail");
_Static_assert(offsetof(wasmdp_direct_desc, dirty) == 24, "wasmdp_direct_desc.dirty");
_Static_assert(offsetof(wasmdp_direct_desc, headroom) == 26, "wasmdp_direct_desc.headroom");
_Static_assert(offsetof(wasmdp_direct_desc, tailroom) == 28, "wasmdp_direct_desc.tailroom");
_Static_assert(offsetof(wasmdp_direct_desc, direct_port) == 30, "wasmdp_direct_desc.direct_port");

/* Direct head (areas with `DIRECT | HEADS`) (area::direct_head, 8 bytes). */
typedef struct wasmdp_direct_head {
    /* in: The packet's length. */
    uint16_t len;
    /* in: Bytes from its first byte to its buffer's end (its length plus its tailroom): how many
     * may be read or written from `DATA` (past the length, they are not the packet's). */
    uint16_t end;
    /* in: Offset in the plugin's memory of its first byte. */
    uint32_t data;
} wasmdp_direct_head;
_Static_assert(sizeof(wasmdp_direct_head) == 8, "wasmdp_direct_head size");
_Static_assert(offsetof(wasmdp_direct_head, len) == 0, "wasmdp_direct_head.len");
_Static_assert(offsetof(wasmdp_direct_head, end) == 2, "wasmdp_direct_head.end");
_Static_assert(offsetof(wasmdp_direct_head, data) == 4, "wasmdp_direct_head.data");

/* Context header (context, 16 bytes). */
typedef struct wasmdp_context_header {
    /* in: The RX port. */
    uint16_t rx_port;
    /* in: The RX queue (the instance). */
    uint16_t queue;
    /* in: The stream's TX port. */
    uint16_t tx_port;
    /* in: Number of ports. */
    uint16_t ports;
    /* in: The worker core (0xFFFF: not pinned). */
    uint16_t lcore;
    uint8_t _pad10[6];
} wasmdp_context_header;
_Static_assert(sizeof(wasmdp_context_header) == 16, "wasmdp_context_header size");
_Static_assert(offsetof(wasmdp_context_header, rx_port) == 0, "wasmdp_context_header.rx_port");
_Static_assert(offsetof(wasmdp_context_header, queue) == 2, "wasmdp_context_header.queue");
_Static_assert(offsetof(wasmdp_context_header, tx_port) == 4, "wasmdp_context_header.tx_port");
_Static_assert(offsetof(wasmdp_context_header, ports) == 6, "wasmdp_context_header.ports");
_Static_assert(offsetof(wasmdp_context_header, lcore) == 8, "wasmdp_context_header.lcore");

/* Context port entry (context::port, 16 bytes). */
typedef struct wasmdp_context_port {
    /* in: Its MAC. */
    uint8_t mac[6];
    /* in: Its peer MAC. */
    uint8_t peer_mac[6];
    /* in: Flags (`SENDABLE`). */
    uint16_t flags;
    uint8_t _pad14[2];
} wasmdp_context_port;
_Static_assert(sizeof(wasmdp_context_port) == 16, "wasmdp_context_port size");
_Static_assert(offsetof(wasmdp_context_port, mac) == 0, "wasmdp_context_port.mac");
_Static_assert(offsetof(wasmdp_context_port, peer_mac) == 6, "wasmdp_context_port.peer_mac");
_Static_assert(offsetof(wasmdp_context_port, flags) == 12, "wasmdp_context_port.flags");

/* The exports: the module defines them (with WASMDP_EXPORT of wasmdp_helpers.h, or
 * __attribute__((export_name(...)))); declared here so that a definition of another type does not
 * compile. The module also exports its memory as "memory". */
/* wasmdp_abi_version (required; called at load, before init): `ABI_MAJOR << 16 | ABI_MINOR`; must
 * not call imports. */
int32_t wasmdp_abi_version(void);

/* wasmdp_init (required; called once per instance): 0 accepts the configuration; anything else
 * refuses it. */
int32_t wasmdp_init(int32_t port, int32_t instance);

/* wasmdp_on_burst (required; called per burst): Decide for packets `0..burst_len`; 0 is success,
 * `RUN_ENGINE | id` (1.1) success with an engine to run, anything else a plugin failure. */
int32_t wasmdp_on_burst(int32_t port, int32_t burst_len);

/* wasmdp_tick (optional; called about every `tick_ms`): Periodic work (end a sticky decision, age
 * state); optional. */
void wasmdp_tick(int64_t now_ns);

/* The host functions (module "wasmdp"). Non-negative results are values, negative ones WASMDP_ERR_
 * codes (nothing changed). Pointers are into the plugin's own memory. Since: the ABI minor version
 * that added it (a module declaring an older one is refused at load). */
/* burst_len (1.0, burst): Packets in the current burst (the same number as `wasmdp_on_burst`'s
 * argument). */
__attribute__((import_module("wasmdp"), import_name("burst_len")))
int32_t wasmdp_burst_len(void);

/* pkt_len (1.0, burst): The length of packet `idx` in bytes. */
__attribute__((import_module("wasmdp"), import_name("pkt_len")))
int32_t wasmdp_pkt_len(int32_t idx);

/* pkt_read (1.0, burst): Copies packet bytes `off..off+len` to the plugin's memory at `ptr` (native
 * SIMD memcpy); returns `len`. */
__attribute__((import_module("wasmdp"), import_name("pkt_read")))
int32_t wasmdp_pkt_read(int32_t idx, int32_t off, void *ptr, int32_t len);

/* pkt_write (1.0, burst): Copies the `len` bytes at `ptr` into the packet at `off`; never grows the
 * packet; returns `len`. */
__attribute__((import_module("wasmdp"), import_name("pkt_write")))
int32_t wasmdp_pkt_write(int32_t idx, int32_t off, const void *ptr, int32_t len);

/* pkt_copy (1.0, burst): Copies `len` bytes between two packets of the burst, or within one
 * (overlap behaves like `memmove`); returns `len`. */
__attribute__((import_module("wasmdp"), import_name("pkt_copy")))
int32_t wasmdp_pkt_copy(int32_t dst_idx, int32_t dst_off, int32_t src_idx, int32_t src_off, int32_t len);

/* run_engine (1.0, burst): Runs native engine `engine` (`engine::`) on packets
 * `start..start+count`; returns `count`. */
__attribute__((import_module("wasmdp"), import_name("run_engine")))
int32_t wasmdp_run_engine(int32_t engine, int32_t start, int32_t count);

/* macswap (1.0, burst): The native SIMD MAC swap on packets `start..start+count`: bytes only, no
 * offload marking; returns `count`. */
__attribute__((import_module("wasmdp"), import_name("macswap")))
int32_t wasmdp_macswap(int32_t start, int32_t count);

/* set_offloads (1.0, burst): Adds TX offload `flags` (`flags::ALLOWED`) to packet `idx`, or to
 * every packet with `ALL_PACKETS` (-1); `vlan_tci` is stored with `TX_VLAN`/`TX_QINQ`,
 * `vlan_tci_outer` with `TX_QINQ`. Returns 0. */
__attribute__((import_module("wasmdp"), import_name("set_offloads")))
int32_t wasmdp_set_offloads(int32_t idx, int64_t flags, int32_t vlan_tci, int32_t vlan_tci_outer);

/* drop_pkt (1.0, burst): Drops packet `idx` when the call returns (counted as a `policy` drop).
 * Returns 0. */
__attribute__((import_module("wasmdp"), import_name("drop_pkt")))
int32_t wasmdp_drop_pkt(int32_t idx);

/* send_to (1.0, burst): Transmits packet `idx` on port `port` (index in `ports:`) instead of the
 * stream's TX port. Returns 0. */
__attribute__((import_module("wasmdp"), import_name("send_to")))
int32_t wasmdp_send_to(int32_t idx, int32_t port);

/* set_sticky (1.0, any): For the next `bursts` bursts (-1: until `clear_sticky`), runs `engine`
 * with these offloads natively instead of calling `wasmdp_on_burst`. Returns 0. */
__attribute__((import_module("wasmdp"), import_name("set_sticky")))
int32_t wasmdp_set_sticky(int32_t engine, int64_t flags, int32_t vlan_tci, int32_t vlan_tci_outer, int32_t bursts);

/* clear_sticky (1.0, any): Ends the sticky decision in force (0 also when there is none). */
__attribute__((import_module("wasmdp"), import_name("clear_sticky")))
int32_t wasmdp_clear_sticky(void);

/* counter_register (1.0, init): Registers a counter named by the `name_len` bytes at `name_ptr`
 * (UTF-8); returns its id. At most `MAX_COUNTERS`. */
__attribute__((import_module("wasmdp"), import_name("counter_register")))
int32_t wasmdp_counter_register(const char *name_ptr, int32_t name_len);

/* counter_add (1.0, any): Adds `value` (0 or more) to counter `id`. Returns 0. */
__attribute__((import_module("wasmdp"), import_name("counter_add")))
int32_t wasmdp_counter_add(int32_t id, int64_t value);

/* param_get (1.0, any): Copies the `params:` value of the key at `key_ptr` (as text) to `out_ptr`;
 * returns its length, `NOT_FOUND`, or `TOO_SMALL` (nothing copied) when longer than `out_cap`. */
__attribute__((import_module("wasmdp"), import_name("param_get")))
int32_t wasmdp_param_get(const char *key_ptr, int32_t key_len, void *out_ptr, int32_t out_cap);

/* now_ns (1.0, any): The host's monotonic clock in nanoseconds. */
__attribute__((import_module("wasmdp"), import_name("now_ns")))
int64_t wasmdp_now_ns(void);

/* log (1.0, any): Logs the `len` bytes at `ptr` (UTF-8) at `level` (`level::`) through the host's
 * tracing, tagged with the plugin and port. */
__attribute__((import_module("wasmdp"), import_name("log")))
void wasmdp_log(int32_t level, const char *ptr, int32_t len);

/* burst_area (1.1, init): Registers the burst area at `ptr`: a header, `max_pkts` descriptors (or
 * lengths, or direct heads) and `max_pkts` windows of `window`'s low 16 bits, shaped by its flags
 * (`area::`). Once per instance. Returns 0. */
__attribute__((import_module("wasmdp"), import_name("burst_area")))
int32_t wasmdp_burst_area(void *ptr, int32_t max_pkts, int32_t window);

/* pkt_adjust (1.1, burst): Changes the length of packet `idx` now: `head > 0` prepends that many
 * bytes (from the headroom; content unspecified until written), `head < 0` strips from the front,
 * `tail > 0` appends (from the tailroom), `tail < 0` trims. Returns the new length; `NO_ROOM`
 * (nothing changed) when it does not fit or would leave less than 14 bytes. */
__attribute__((import_module("wasmdp"), import_name("pkt_adjust")))
int32_t wasmdp_pkt_adjust(int32_t idx, int32_t head, int32_t tail);

/* pkt_room (1.1, burst): `headroom << 32 | tailroom` of packet `idx`. */
__attribute__((import_module("wasmdp"), import_name("pkt_room")))
int64_t wasmdp_pkt_room(int32_t idx);

/* context (1.1, any): Copies the context (`context::`) to `ptr`; returns its size (`TOO_SMALL`,
 * nothing written, when `cap` is smaller). */
__attribute__((import_module("wasmdp"), import_name("context")))
int32_t wasmdp_context(void *ptr, int32_t cap);

/* map_declare (1.1, init): Declares a map (`map::` kinds) of `capacity` entries of `key_size` and
 * `value_size` bytes, named by the `name_len` bytes at `name_ptr`; returns its id. */
__attribute__((import_module("wasmdp"), import_name("map_declare")))
int32_t wasmdp_map_declare(const char *name_ptr, int32_t name_len, int32_t kind, int32_t key_size, int32_t value_size, int32_t capacity);

/* map_declare_ttl (1.1, init): `map_declare` of a hash kind whose entries expire `ttl_ms`
 * milliseconds after their last use (lookup, update, add); 0 is no expiry, at most
 * `map::MAX_TTL_MS`. */
__attribute__((import_module("wasmdp"), import_name("map_declare_ttl")))
int32_t wasmdp_map_declare_ttl(const char *name_ptr, int32_t name_len, int32_t kind, int32_t key_size, int32_t value_size, int32_t capacity, int64_t ttl_ms);

/* map_lookup (1.1, any): Copies the value of the key at `key_ptr` (the map's key size) to
 * `value_ptr` (its value size); 0 or `NOT_FOUND`. The two ranges may overlap: the key is read whole
 * before the value is written. */
__attribute__((import_module("wasmdp"), import_name("map_lookup")))
int32_t wasmdp_map_lookup(int32_t id, const void *key_ptr, void *value_ptr);

/* map_update (1.1, any): Inserts or replaces the key at `key_ptr` with the value at `value_ptr`; 0
 * or `FULL`. */
__attribute__((import_module("wasmdp"), import_name("map_update")))
int32_t wasmdp_map_update(int32_t id, const void *key_ptr, const void *value_ptr);

/* map_delete (1.1, any): Removes the key at `key_ptr` (an array entry is zeroed); 0 or `NOT_FOUND`.
 */
__attribute__((import_module("wasmdp"), import_name("map_delete")))
int32_t wasmdp_map_delete(int32_t id, const void *key_ptr);

/* map_add (1.1, any): Atomically adds `delta` to the little-endian `u64` at word `word` (bytes
 * `8*word..8*word+8`) of the key's value, inserting a zeroed value first when the key is absent; 0
 * or `FULL`. */
__attribute__((import_module("wasmdp"), import_name("map_add")))
int32_t wasmdp_map_add(int32_t id, const void *key_ptr, int32_t word, int64_t delta);

/* map_lookup_batch (1.1, any): Looks up `n` (at most 4096) keys laid end to end at `keys_ptr`;
 * writes each value where found at `values_ptr` and a byte 1/0 per key at `found_ptr`; returns how
 * many were found. */
__attribute__((import_module("wasmdp"), import_name("map_lookup_batch")))
int32_t wasmdp_map_lookup_batch(int32_t id, const void *keys_ptr, int32_t n, void *values_ptr, void *found_ptr);

/* map_update_batch (1.1, any): Inserts or replaces `n` entries (keys at `keys_ptr`, values at
 * `values_ptr`); returns how many were written before the map was full (`n` when all). */
__attribute__((import_module("wasmdp"), import_name("map_update_batch")))
int32_t wasmdp_map_update_batch(int32_t id, const void *keys_ptr, const void *values_ptr, int32_t n);

/* map_next_key (1.1, any): The next key of a walk over the map: the `u64` cursor at `cursor_ptr`
 * starts at 0 and is moved on; each call reads at most `map::NEXT_KEY_SLOTS` slots. 1: a key was
 * written at `key_ptr`; 0: none in this window, call again; `NOT_FOUND`: the walk is over. */
__attribute__((import_module("wasmdp"), import_name("map_next_key")))
int32_t wasmdp_map_next_key(int32_t id, uint64_t *cursor_ptr, void *key_ptr);

/* gauge_register (1.1, init): Registers a gauge (a level shown in the stats) named by the
 * `name_len` bytes at `name_ptr`; returns its id. At most 16. */
__attribute__((import_module("wasmdp"), import_name("gauge_register")))
int32_t wasmdp_gauge_register(const char *name_ptr, int32_t name_len);

/* gauge_set (1.1, any): Sets gauge `id` to `value`. Returns 0. */
__attribute__((import_module("wasmdp"), import_name("gauge_set")))
int32_t wasmdp_gauge_set(int32_t id, int64_t value);

/* event_register (1.1, init): Registers a kind of event named by the `name_len` bytes at `name_ptr`
 * (1-64 of `[A-Za-z0-9_]`) whose records are `size` bytes (1..=256) laid out as the layout text at
 * `layout_ptr` (`NAME:TYPE ...`, the map layouts' types, adding up to `size`); returns its id;
 * `BAD_RANGE` (the reason logged) otherwise; `FULL` past 64 kinds a port. */
__attribute__((import_module("wasmdp"), import_name("event_register")))
int32_t wasmdp_event_register(const char *name_ptr, int32_t name_len, const char *layout_ptr, int32_t layout_len, int32_t size);

/* event_emit (1.1, any): Appends the `len` bytes at `ptr` (the kind's size) to the port's event
 * ring; 0, or `FULL` when the ring is full (the event is lost and counted). Never waits. */
__attribute__((import_module("wasmdp"), import_name("event_emit")))
int32_t wasmdp_event_emit(int32_t id, const void *ptr, int32_t len);

/* random (1.1, any): A uniformly random `u64` (as `i64` bits) from the instance's own generator,
 * seeded from the operating system when the instance is made (not for cryptography): for sampling
 * and for picking backends. */
__attribute__((import_module("wasmdp"), import_name("random")))
int64_t wasmdp_random(void);

#endif /* WASMDP_H */
