/*
 * Shared by the rte_bpf programs of bench/bpf (see bench/vs-rte-bpf.sh): the packet's first
 * segment from the rte_mbuf that testpmd's `bpf-load rx P Q JM prog.o` passes (flag M), and
 * helpers. rte_bpf loads the ELF's `.text` section as one program from its first instruction, so
 * each program is a single function: every helper here is forced in line, and there is no global
 * data. DPDK's verifier checks that reads stay inside the mbuf's data room (2176 bytes in
 * testpmd), not inside `data_len`: the programs check `data_len` themselves before reading a
 * header, as wasmdp's plugins check the bytes they were given.
 * Build flags (as bench/vs-rte-bpf.sh): clang -O2 -target bpf -D__x86_64__ -D_RTE_BYTEORDER_X86_H_
 *   -I/usr/include/x86_64-linux-gnu -I/usr/include/dpdk -I/usr/include/x86_64-linux-gnu/dpdk -c
 * (the host's glibc and DPDK 22.11 headers for the rte_mbuf layout; x86's rte_byteorder.h, inline
 * x86 assembly, kept out).
 */
#include <stdint.h>
#include <rte_config.h>
#include <rte_common.h>
#include <rte_mbuf_core.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the raw 16-bit loads below assume a little-endian target (rte_bpf's JIT: x86-64, arm64)"
#endif

#define INLINE static inline __attribute__((always_inline))

/* The first segment's data and its length. */
#define PKT(mb) ((uint8_t *)(mb)->buf_addr + (mb)->data_off)
#define LEN(mb) ((uint32_t)(mb)->data_len)

/* A 16-bit field at `p + off` as it is in memory (network order read little-endian): the frame
 * starts 2-byte aligned and every header field used here is at an even offset. */
#define RAW16(p, off) (*(uint16_t *)((p) + (off)))
/* A network-order 16-bit constant as RAW16 reads it. */
#define NET16(v) ((uint16_t)((((v) & 0xff) << 8) | ((v) >> 8)))

/* RFC 1624 eqn. 3, HC' = ~(~HC + ~m + m'), for a 32-bit field changing from m to m': the sum
 * ~m + m' of its 16-bit words m0,m1 -> n0,n1, computed once for both checksums, then applied to a
 * checksum `hc`. One's-complement sums do not depend on byte order: the words are used as loaded. */
INLINE uint32_t csum_delta32(uint16_t m0, uint16_t m1, uint16_t n0, uint16_t n1)
{
	return (uint32_t)(m0 ^ 0xffff) + (m1 ^ 0xffff) + n0 + n1;
}

INLINE uint16_t csum_apply(uint16_t hc, uint32_t delta)
{
	uint32_t s = (hc ^ 0xffff) + delta;

	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* The 802.1Q / 802.1ad / old QinQ tag types wasmdp's parsers skip. */
#define IS_VLAN(et) ((et) == NET16(0x8100) || (et) == NET16(0x88a8) || (et) == NET16(0x9100))

/* Finds the IPv4 header after Ethernet and up to two VLAN tags: its offset, or 0 when the frame
 * is not IPv4 (version 4, IHL >= 5) or its base header is not all in the first `len` bytes. */
INLINE uint32_t ipv4_offset(const uint8_t *p, uint32_t len)
{
	uint32_t l3 = 14;
	uint16_t et;

	if (len < 14)
		return 0;
	et = RAW16(p, 12);
	if (IS_VLAN(et)) {
		if (len < 18)
			return 0;
		et = RAW16(p, 16);
		l3 = 18;
		if (IS_VLAN(et)) {
			if (len < 22)
				return 0;
			et = RAW16(p, 20);
			l3 = 22;
		}
	}
	if (et != NET16(0x0800) || len < l3 + 20)
		return 0;
	if ((p[l3] >> 4) != 4 || (p[l3] & 0xf) < 5)
		return 0;
	return l3;
}

/* The IPv4 header's flags and fragment offset word has a non-zero offset (a later fragment). */
#define IS_LATER_FRAGMENT(ip) ((RAW16(ip, 6) & NET16(0x1fff)) != 0)

/* An IPv4 address a.b.c.d as a 32-bit load of it reads (little-endian). */
#define IP4(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
