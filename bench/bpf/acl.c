/*
 * acl: drops (returns 0: in an rte_bpf RX callback the packet is then freed and removed from the
 * burst) every IPv4 UDP packet to destination port DENY_PORT (compile-time, default 9), not on
 * later fragments; everything else passes (returns 1). Parses Ethernet, up to two VLAN tags
 * (0x8100, 0x88a8, 0x9100), IPv4 with its IHL, the UDP destination port, each only after
 * checking `data_len` holds it; non-IPv4 frames and headers cut short pass.
 * wasmdp's `acl` plugin with `deny_udp_dst_port: 9` does the same per packet on the first 64
 * bytes of each packet (its window), giving the drop verdict and counting `denied`.
 * On wasmdp's template frame (UDP 9 -> 9) -DDENY_PORT=9 drops every frame, -DDENY_PORT=53 none.
 * Build: clang with the flags in common.h -DDENY_PORT=9 -c acl.c
 * Load:  testpmd> bpf-load rx <port> 0 JM acl.o
 */
#include "common.h"

#ifndef DENY_PORT
#define DENY_PORT 9
#endif

uint64_t entry(struct rte_mbuf *mb)
{
	uint8_t *p = PKT(mb);
	uint32_t len = LEN(mb);
	uint32_t l3 = ipv4_offset(p, len);
	uint8_t *ip = p + l3;

	if (l3 == 0 || ip[9] != 17 || IS_LATER_FRAGMENT(ip))
		return 1;
	uint32_t ihl = (ip[0] & 0xf) * 4;
	if (len < l3 + ihl + 4)
		return 1;
	return RAW16(ip + ihl, 2) != NET16(DENY_PORT);
}
