#!/usr/bin/env python3
"""Frames for bench/vs-rte-bpf.sh, and the check of the rte_bpf programs' output against a
reference written apart from them (full checksums computed again, not incremental updates).

usage: check.py template CAPTURE.pcap OUT.pcap    first frame of wasmdp's capture -> OUT; prints it
       check.py frames TEMPLATE.pcap OUT.pcap     the check frames: the template and variants
       check.py verify PROGRAM IN.pcap OUT.pcap   OUT is what PROGRAM (macswap, dnat, acl, acl_pass)
                                                  should make of IN, in order; exit 1 if not
Reads pcap with micro- or nanosecond timestamps; standard library only.
"""
import struct
import sys

MATCH, MATCH_LEN, TO = bytes([198, 18, 0, 0]), 24, bytes([10, 9, 9, 9])
DENY = {"acl": 9, "acl_pass": 53}
VLAN = (0x8100, 0x88A8, 0x9100)


def read_pcap(path):
    d = open(path, "rb").read()
    magic = d[:4]
    if magic not in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        sys.exit(f"{path}: not a little-endian pcap")
    off, out = 24, []
    while off + 16 <= len(d):
        incl = struct.unpack_from("<I", d, off + 8)[0]
        out.append(d[off + 16:off + 16 + incl])
        off += 16 + incl
    return out


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 0, i, len(fr), len(fr)) + fr)


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ip_csum(ip):
    ip[10:12] = b"\0\0"
    ip[10:12] = struct.pack("!H", csum(bytes(ip)))


def l4_csum(ip, seg, proto):
    """The UDP/TCP checksum of `seg` (checksum field zeroed) in IPv4 header `ip`."""
    at = 6 if proto == 17 else 16
    seg = bytearray(seg)
    seg[at:at + 2] = b"\0\0"
    pseudo = bytes(ip[12:20]) + struct.pack("!BBH", 0, proto, len(seg))
    c = csum(pseudo + bytes(seg))
    return 0xFFFF if (c == 0 and proto == 17) else c


def parse(fr):
    """(l3 offset, ihl) of an IPv4 frame with its base header present, else None."""
    if len(fr) < 14:
        return None
    l3 = 12
    et = struct.unpack_from("!H", fr, l3)[0]
    for _ in range(2):
        if et not in VLAN:
            break
        l3 += 4
        if len(fr) < l3 + 2:
            return None
        et = struct.unpack_from("!H", fr, l3)[0]
    l3 += 2
    if et != 0x0800 or len(fr) < l3 + 20 or fr[l3] >> 4 != 4 or fr[l3] & 15 < 5:
        return None
    return l3, (fr[l3] & 15) * 4


def later_fragment(fr, l3):
    return struct.unpack_from("!H", fr, l3 + 6)[0] & 0x1FFF != 0


def expect(prog, fr):
    """What `prog` makes of frame `fr`: the frame out, or None when dropped."""
    fr = bytearray(fr)
    if prog == "macswap":
        if len(fr) >= 14:
            fr[0:6], fr[6:12] = fr[6:12], fr[0:6]
        return bytes(fr)
    p = parse(fr)
    if prog in DENY:
        if p is None or fr[p[0] + 9] != 17 or later_fragment(fr, p[0]) or len(fr) < sum(p) + 4:
            return bytes(fr)
        return None if struct.unpack_from("!H", fr, sum(p) + 2)[0] == DENY[prog] else bytes(fr)
    assert prog == "dnat"
    if p is None:
        return bytes(fr)
    l3, ihl = p
    mask = (0xFFFFFFFF << (32 - MATCH_LEN)) & 0xFFFFFFFF
    dst = struct.unpack_from("!I", fr, l3 + 16)[0]
    if dst & mask != struct.unpack("!I", MATCH)[0] & mask or len(fr) < l3 + ihl:
        return bytes(fr)
    proto = fr[l3 + 9]
    l4 = l3 + ihl
    fr[l3 + 16:l3 + 20] = TO
    if proto in (6, 17) and not later_fragment(fr, l3):
        if len(fr) < l4 + (8 if proto == 17 else 20):
            return None
        # The segment as the IPv4 total length gives it (the frame may have padding after it).
        total = struct.unpack_from("!H", fr, l3 + 2)[0]
        seg = fr[l4:l3 + total]
        at = l4 + (6 if proto == 17 else 16)
        if not (proto == 17 and fr[at:at + 2] == b"\0\0"):
            fr[at:at + 2] = struct.pack("!H", l4_csum(fr[l3:l4], seg, proto))
    ip = fr[l3:l4]
    ip_csum(ip)
    fr[l3:l4] = ip
    return bytes(fr)


def ipv4(eth, tags, proto, dst, l4, opts=b"", frag=0):
    """`eth` (12 MAC bytes), VLAN `tags` (TPIDs), IPv4 to `dst` carrying `l4` (checksum field 0)."""
    ihl = 5 + len(opts) // 4
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, ihl * 4 + len(l4), 0, frag, 64, proto, 0,
                               bytes([198, 18, 0, 1]), bytes(dst)) + opts)
    ip_csum(ip)
    l4 = bytearray(l4)
    if frag & 0x1FFF == 0:
        at = 6 if proto == 17 else 16
        l4[at:at + 2] = struct.pack("!H", l4_csum(ip, l4, proto))
    head = eth + b"".join(struct.pack("!HH", t, 100 + i) for i, t in enumerate(tags)) + b"\x08\x00"
    return bytes(head + ip + l4).ljust(60, b"\0")


def udp(sport, dport, payload):
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


def check_frames(t):
    """The template and the cases around it, each named."""
    eth, pay = t[:12], bytes(range(22))
    tcp = struct.pack("!HHIIBBHHH", 1000, 80, 1, 0, 0x50, 0x18, 8192, 0, 0) + pay
    zero = bytearray(ipv4(eth, (), 17, [198, 18, 0, 2], udp(9, 9, pay)))
    zero[40:42] = b"\0\0"  # UDP without checksum
    frag = ipv4(eth, (), 17, [198, 18, 0, 2], b"\x00\x09\x00\x09" + pay, frag=0x0010)
    return [
        ("template", t),
        ("one 802.1Q tag", ipv4(eth, (0x8100,), 17, [198, 18, 0, 2], udp(9, 9, pay))),
        ("802.1ad + 802.1Q", ipv4(eth, (0x88A8, 0x8100), 17, [198, 18, 0, 2], udp(9, 9, pay))),
        ("UDP checksum 0", bytes(zero)),
        ("TCP to :80", ipv4(eth, (), 6, [198, 18, 0, 7], tcp)),
        ("dst outside /24", ipv4(eth, (), 17, [198, 18, 1, 2], udp(9, 9, pay))),
        ("UDP to :53", ipv4(eth, (), 17, [198, 18, 0, 2], udp(9, 53, pay))),
        ("IPv4 options", ipv4(eth, (), 17, [198, 18, 0, 2], udp(9, 9, pay), opts=b"\x01\x01\x01\x00")),
        ("later fragment", frag),
        ("ARP", (eth + b"\x08\x06" + bytes(28)).ljust(60, b"\0")),
        ("IPv6", eth + b"\x86\xdd" + bytes([0x60, 0, 0, 0, 0, 8, 17, 64]) + bytes(32) + udp(9, 9, b"")),
        ("cut after the UDP ports", t[:38]),
        ("cut inside IPv4", t[:30]),
    ]


def main():
    cmd = sys.argv[1]
    if cmd == "template":
        frames = read_pcap(sys.argv[2])
        t = frames[0]
        write_pcap(sys.argv[3], [t])
        p = parse(t)
        dst = ".".join(map(str, t[p[0] + 16:p[0] + 20])) if p else "-"
        dport = struct.unpack_from("!H", t, sum(p) + 2)[0] if p and t[p[0] + 9] == 17 else "-"
        same = sum(f == t for f in frames)
        print(f"template: {len(t)} B, IPv4 dst {dst}, UDP dst port {dport} "
              f"({same} of the {len(frames)} frames captured are this one): {t.hex()}")
        if p is None or t[p[0] + 16:p[0] + 19] != MATCH[:3]:
            print("  note: the template's destination is not in 198.18.0.0/24: dnat leaves it alone")
    elif cmd == "frames":
        write_pcap(sys.argv[3], [f for _, f in check_frames(read_pcap(sys.argv[2])[0])])
    elif cmd == "verify":
        prog, inp, outp = sys.argv[2:5]
        frames = read_pcap(inp)
        names = [n for n, _ in check_frames(frames[0])]
        want = [(n, expect(prog, f)) for n, f in zip(names, frames)]
        got = read_pcap(outp)
        kept = [(n, w) for n, w in want if w is not None]
        dropped = [n for n, w in want if w is None]
        bad = [n for (n, w), g in zip(kept, got) if w != g]
        if len(got) != len(kept) or bad:
            print(f"{prog}: WRONG: {len(got)} frames out, {len(kept)} expected; differing: {bad}")
            for (n, w), g in zip(kept, got):
                if w != g:
                    print(f"  {n}:\n    want {w.hex()}\n    got  {g.hex()}")
            sys.exit(1)
        print(f"{prog}: ok: {len(got)} of {len(frames)} frames out as expected"
              f"{', dropped: ' + ', '.join(dropped) if dropped else ''}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
