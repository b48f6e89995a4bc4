//! The XDP program, assembled here: the frames the port's `af_xdp.pass` list names go on to the
//! kernel (`XDP_PASS`), every other frame of a bound queue to that queue's socket
//! (`bpf_redirect_map` on the XSKMAP, `XDP_PASS` when the queue has no socket of ours). No clang,
//! no libbpf: a few dozen instructions at most, each packet read behind the bounds check the
//! verifier asks for.
//!
//! ```text
//! r6 = r1                                  ; ctx
//! r2 = ctx->data; r3 = ctx->data_end
//! if r2 + 14 > r3 goto redirect            ; no Ethernet header: ours, to count and drop
//! r5 = EtherType (as loaded: network order in a little-endian u16)
//! ...one block per rule: goto pass on a match, fall through to the next rule otherwise...
//! redirect: r2 = ctx->rx_queue_index; r1 = XSKMAP; r3 = miss; call bpf_redirect_map; exit
//! pass:     r0 = XDP_PASS; exit
//! ```

use crate::config::XdpPass;

/// `XDP_PASS`.
pub(super) const XDP_PASS: i32 = 2;
const HELPER_REDIRECT_MAP: i32 = 51;
/// `ld_imm64`'s source register when the immediate is a map's file descriptor.
const BPF_PSEUDO_MAP_FD: u8 = 1;

const LDX_W: u8 = 0x61; // BPF_LDX | BPF_MEM | BPF_W
const LDX_H: u8 = 0x69; // BPF_LDX | BPF_MEM | BPF_H
const LDX_B: u8 = 0x71; // BPF_LDX | BPF_MEM | BPF_B
const LD_IMM64: u8 = 0x18; // BPF_LD | BPF_IMM | BPF_DW
const MOV64_K: u8 = 0xb7; // BPF_ALU64 | BPF_MOV | BPF_K
const MOV64_X: u8 = 0xbf; // BPF_ALU64 | BPF_MOV | BPF_X
const ADD64_K: u8 = 0x07; // BPF_ALU64 | BPF_ADD | BPF_K
const JA: u8 = 0x05; // BPF_JMP | BPF_JA
const JEQ_K: u8 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JNE_K: u8 = 0x55; // BPF_JMP | BPF_JNE | BPF_K
const JGT_K: u8 = 0x25; // BPF_JMP | BPF_JGT | BPF_K
const JLT_K: u8 = 0xa5; // BPF_JMP | BPF_JLT | BPF_K
const JGT_X: u8 = 0x2d; // BPF_JMP | BPF_JGT | BPF_X
const JNE32_K: u8 = 0x56; // BPF_JMP32 | BPF_JNE | BPF_K: the low 32 bits only
const CALL: u8 = 0x85; // BPF_JMP | BPF_CALL
const EXIT: u8 = 0x95; // BPF_JMP | BPF_EXIT

/// offsetof(struct xdp_md, data), (.., data_end), (.., rx_queue_index).
const DATA: i16 = 0;
const DATA_END: i16 = 4;
const RX_QUEUE_INDEX: i16 = 16;

/// One eBPF instruction.
pub(super) fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> u64 {
    let mut b = [0u8; 8];
    b[0] = code;
    b[1] = (src << 4) | dst;
    b[2..4].copy_from_slice(&off.to_le_bytes());
    b[4..8].copy_from_slice(&imm.to_le_bytes());
    u64::from_le_bytes(b)
}

/// A place jumps go to.
#[derive(Clone, Copy)]
struct Label(usize);

/// Instructions with jumps to labels, resolved at the end.
#[derive(Default)]
struct Asm {
    code: Vec<u64>,
    /// (instruction index, label) of each jump.
    jumps: Vec<(usize, Label)>,
    /// Where each label is (None until bound).
    at: Vec<Option<usize>>,
}

impl Asm {
    fn op(&mut self, code: u8, dst: u8, src: u8, off: i16, imm: i32) {
        self.code.push(insn(code, dst, src, off, imm));
    }
    fn label(&mut self) -> Label {
        self.at.push(None);
        Label(self.at.len() - 1)
    }
    fn bind(&mut self, l: Label) {
        self.at[l.0] = Some(self.code.len());
    }
    fn jump(&mut self, code: u8, dst: u8, src: u8, imm: i32, to: Label) {
        self.jumps.push((self.code.len(), to));
        self.op(code, dst, src, 0, imm);
    }
    /// `if data + len > data_end goto to`, in r4 (the verifier's packet bounds check).
    fn need(&mut self, len: i32, to: Label) {
        self.op(MOV64_X, 4, 2, 0, 0);
        self.op(ADD64_K, 4, 0, 0, len);
        self.jump(JGT_X, 4, 3, 0, to);
    }
    fn finish(mut self) -> Vec<u64> {
        for (i, l) in std::mem::take(&mut self.jumps) {
            let target = self.at[l.0].expect("every label is bound");
            let off = i16::try_from(target as isize - i as isize - 1).expect("short program");
            let mut b = self.code[i].to_le_bytes();
            b[2..4].copy_from_slice(&off.to_le_bytes());
            self.code[i] = u64::from_le_bytes(b);
        }
        self.code
    }
}

/// A 16-bit value as a little-endian load of its network-order bytes gives it.
fn wire16(v: u16) -> i32 {
    i32::from(u16::from_le_bytes(v.to_be_bytes()))
}

/// Four bytes as a little-endian `u32` load gives them, as the `i32` immediate of a 32-bit compare.
fn wire32(b: [u8; 4]) -> i32 {
    i32::from_le_bytes(b)
}

/// The program for the socket map `map_fd`: the frames `pass` names go to the kernel, the rest to
/// the socket of their queue, or `miss` when the queue has none (`XDP_PASS`; the tests use
/// another value to tell the two apart). `mac` is the port's, for `not_our_mac`.
pub(super) fn build(map_fd: i32, pass: &[XdpPass], mac: [u8; 6], miss: i32) -> Vec<u64> {
    let mut a = Asm::default();
    let (to_kernel, redirect) = (a.label(), a.label());
    if !pass.is_empty() {
        a.op(MOV64_X, 6, 1, 0, 0);
        a.op(LDX_W, 2, 6, DATA, 0);
        a.op(LDX_W, 3, 6, DATA_END, 0);
        a.need(14, redirect);
        a.op(LDX_H, 5, 2, 12, 0);
        for rule in pass {
            let next = a.label();
            match *rule {
                XdpPass::Arp => a.jump(JEQ_K, 5, 0, wire16(0x0806), to_kernel),
                XdpPass::Ethertype(t) => a.jump(JEQ_K, 5, 0, wire16(t.0), to_kernel),
                XdpPass::Ipv4Dst(ip) => {
                    a.jump(JNE_K, 5, 0, wire16(0x0800), next);
                    a.need(34, next);
                    a.op(LDX_W, 7, 2, 30, 0);
                    a.jump(JNE32_K, 7, 0, wire32(ip.octets()), next);
                    a.jump(JA, 0, 0, 0, to_kernel);
                }
                XdpPass::Ndp => {
                    // IPv6, next header ICMPv6 (58) right after the fixed header, type 133..=137
                    // (router and neighbour solicitations and advertisements, redirects).
                    a.jump(JNE_K, 5, 0, wire16(0x86dd), next);
                    a.need(14 + 40 + 1, next);
                    a.op(LDX_B, 7, 2, 14 + 6, 0);
                    a.jump(JNE_K, 7, 0, 58, next);
                    a.op(LDX_B, 7, 2, 14 + 40, 0);
                    a.jump(JLT_K, 7, 0, 133, next);
                    a.jump(JGT_K, 7, 0, 137, next);
                    a.jump(JA, 0, 0, 0, to_kernel);
                }
                XdpPass::NotOurMac => {
                    a.op(LDX_W, 7, 2, 0, 0);
                    a.jump(JNE32_K, 7, 0, wire32([mac[0], mac[1], mac[2], mac[3]]), to_kernel);
                    a.op(LDX_H, 7, 2, 4, 0);
                    a.jump(JNE_K, 7, 0, i32::from(u16::from_le_bytes([mac[4], mac[5]])), to_kernel);
                }
            }
            a.bind(next);
        }
        a.bind(redirect);
        a.op(LDX_W, 2, 6, RX_QUEUE_INDEX, 0);
    } else {
        a.bind(redirect);
        a.op(LDX_W, 2, 1, RX_QUEUE_INDEX, 0);
    }
    a.op(LD_IMM64, 1, BPF_PSEUDO_MAP_FD, 0, map_fd);
    a.op(0, 0, 0, 0, 0);
    a.op(MOV64_K, 3, 0, 0, miss);
    a.op(CALL, 0, 0, 0, HELPER_REDIRECT_MAP);
    a.op(EXIT, 0, 0, 0, 0);
    // (Only with rules: the verifier refuses unreachable instructions.)
    if !pass.is_empty() {
        a.bind(to_kernel);
        a.op(MOV64_K, 0, 0, 0, XDP_PASS);
        a.op(EXIT, 0, 0, 0, 0);
    }
    a.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_are_encoded_as_the_kernel_reads_them() {
        // r2 = *(u32 *)(r1 + 16): opcode 0x61, dst 2 in the low nibble, src 1 in the high one.
        assert_eq!(insn(0x61, 2, 1, 16, 0).to_le_bytes(), [0x61, 0x12, 16, 0, 0, 0, 0, 0]);
        // call 51
        assert_eq!(insn(0x85, 0, 0, 0, 51).to_le_bytes(), [0x85, 0, 0, 0, 51, 0, 0, 0]);
    }

    #[test]
    fn without_a_pass_list_it_is_the_six_instruction_redirect() {
        let p = build(7, &[], [0; 6], XDP_PASS);
        assert_eq!(p.len(), 6);
        assert_eq!(p[0], insn(LDX_W, 2, 1, RX_QUEUE_INDEX, 0));
        assert_eq!(p[1], insn(LD_IMM64, 1, BPF_PSEUDO_MAP_FD, 0, 7));
    }

    #[test]
    fn jumps_land_on_their_labels() {
        let p = build(7, &[XdpPass::Arp, XdpPass::Ndp], [0; 6], XDP_PASS);
        let pass_at = p.len() - 2;
        assert_eq!(p[pass_at], insn(MOV64_K, 0, 0, 0, XDP_PASS));
        // The ARP rule's jump (after 4 set-up and 3 bounds-check instructions) reaches it.
        let arp = 7;
        let off = i16::from_le_bytes(p[arp].to_le_bytes()[2..4].try_into().unwrap());
        assert_eq!(arp as isize + 1 + off as isize, pass_at as isize);
    }
}
