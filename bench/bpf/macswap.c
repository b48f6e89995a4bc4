/*
 * macswap: swaps the Ethernet destination and source MAC addresses of every frame of at least 14
 * bytes; shorter frames are left alone. Every frame passes (returns 1).
 * The same per-packet work as testpmd's `macswap` forwarding mode, wasmdp's `macswap` engine and
 * its `wasm_macswap` plugin (which swaps the two addresses in each packet's 16-byte head with one
 * SIMD shuffle; frames under 14 bytes left alone).
 * Build: clang with the flags in common.h -c macswap.c
 * Load:  testpmd> bpf-load rx <port> 0 JM macswap.o
 */
#include "common.h"

uint64_t entry(struct rte_mbuf *mb)
{
	uint8_t *p = PKT(mb);

	if (LEN(mb) < 14)
		return 1;
	/* The 12 address bytes as one 64-bit and one 32-bit word (the frame starts 8-byte aligned in
	 * an mbuf), the two 48-bit addresses exchanged with shifts, as wasmdp's native build does. */
	uint64_t a = *(uint64_t *)p;          /* dst[0..6] | src[0..2] << 48 */
	uint64_t b = *(uint32_t *)(p + 8);    /* src[2..6] */
	uint64_t dst = a & 0xffffffffffffULL;
	uint64_t src = (a >> 48) | (b << 16);
	*(uint64_t *)p = src | (dst << 48);
	*(uint32_t *)(p + 8) = (uint32_t)(dst >> 16);
	return 1;
}
