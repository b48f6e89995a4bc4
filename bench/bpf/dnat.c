/*
 * dnat (with data_len checks): IPv4 destination NAT. A frame that is IPv4 (after Ethernet and up
 * to two VLAN tags) with its destination in MATCH/MATCH_LEN (default 198.18.0.0/24) gets the
 * destination TO (default 10.9.9.9), its IPv4 header checksum and, on a whole packet or a first
 * fragment, its UDP or TCP checksum updated incrementally (RFC 1624; a UDP checksum of 0 stays 0,
 * one computing to 0 is written 0xffff). Later fragments get the address and IPv4 checksum only.
 * A matching UDP/TCP packet whose checksum field is past `data_len` is dropped (returns 0) rather
 * than sent with a wrong checksum; everything else passes (returns 1). Every header is read only
 * after `data_len` was checked to hold it: the honest variant, as DPDK's verifier checks only
 * the mbuf's data room.
 * wasmdp's `dnat` plugin (params `match: 198.18.0.0/24, to: 10.9.9.9`) does the same per packet
 * on the bytes the host places in its window (128 B), dropping and counting as `too_deep` a
 * matching packet whose L4 header is not in the window.
 * Build: clang with the flags in common.h -c dnat.c [-DMATCH='IP4(198,18,0,0)' -DMATCH_LEN=24 -DTO='IP4(10,9,9,9)']
 * Load:  testpmd> bpf-load rx <port> 0 JM dnat.o
 */
#include "common.h"

#ifndef MATCH
#define MATCH IP4(198, 18, 0, 0)
#endif
#ifndef MATCH_LEN
#define MATCH_LEN 24
#endif
#ifndef TO
#define TO IP4(10, 9, 9, 9)
#endif
/* The prefix mask in memory order (MATCH_LEN 1..32). */
#define MASK __builtin_bswap32(0xffffffffu << (32 - MATCH_LEN))
#define TO0 ((uint16_t)(TO))
#define TO1 ((uint16_t)((TO) >> 16))

uint64_t entry(struct rte_mbuf *mb)
{
	uint8_t *p = PKT(mb);
	uint32_t len = LEN(mb);
	uint32_t l3 = ipv4_offset(p, len);
	uint8_t *ip = p + l3;

	if (l3 == 0)
		return 1;
	uint16_t d0 = RAW16(ip, 16), d1 = RAW16(ip, 18);
	if ((((uint32_t)d1 << 16 | d0) & MASK) != (MATCH & MASK))
		return 1;
	uint32_t ihl = (ip[0] & 0xf) * 4;
	if (len < l3 + ihl)
		return 1; /* options cut short: not a header to rewrite */
	uint8_t proto = ip[9];
	uint32_t delta = csum_delta32(d0, d1, TO0, TO1);
	if ((proto == 17 || proto == 6) && !IS_LATER_FRAGMENT(ip)) {
		uint8_t *l4 = ip + ihl;
		if (proto == 17) {
			if (len < l3 + ihl + 8)
				return 0;
			uint16_t c = RAW16(l4, 6);
			if (c != 0) {
				c = csum_apply(c, delta);
				RAW16(l4, 6) = c ? c : 0xffff;
			}
		} else {
			if (len < l3 + ihl + 20)
				return 0;
			RAW16(l4, 16) = csum_apply(RAW16(l4, 16), delta);
		}
	}
	RAW16(ip, 10) = csum_apply(RAW16(ip, 10), delta);
	RAW16(ip, 16) = TO0;
	RAW16(ip, 18) = TO1;
	return 1;
}
