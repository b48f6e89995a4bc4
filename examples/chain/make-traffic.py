#!/usr/bin/env python3
"""Writes the chain walkthrough's capture: UDP from 16 clients (10.0.0.1-16, port 40000+i) to
192.0.2.10:443, one packet each in turn, 64 rounds; every eighth round the clients also send a DNS
query (port 53, which the ACL denies). Standard library only."""
import struct, sys

def csum(b):
    if len(b) % 2:
        b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF

def frame(src, sport, dport, n):
    payload = struct.pack('!I', n) + bytes(14)
    udp_len = 8 + len(payload)
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + udp_len, n & 0xFFFF, 0, 64, 17, 0, src, bytes([192, 0, 2, 10]))
    ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
    pseudo = ip[12:20] + struct.pack('!BBH', 0, 17, udp_len)
    udp = struct.pack('!HHHH', sport, dport, udp_len, 0) + payload
    c = csum(pseudo + udp) or 0xFFFF
    udp = udp[:6] + struct.pack('!H', c) + udp[8:]
    return bytes.fromhex('020000000002' '020000000001' '0800') + ip + udp

out = open(sys.argv[1] if len(sys.argv) > 1 else 'traffic.pcap', 'wb')
out.write(struct.pack('<IHHiIII', 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
n = 0
for r in range(64):
    for i in range(1, 17):
        for dport in ([443, 53] if r % 8 == 0 else [443]):
            f = frame(bytes([10, 0, 0, i]), 40000 + i, dport, n)
            out.write(struct.pack('<IIII', 1, n, len(f), len(f)) + f)
            n += 1
