//! Capture filters: pcap filter expressions (`pcap-filter(7)`, as tcpdump takes them), compiled to
//! classic BPF by libpcap's own compiler and run by libpcap's own interpreter, so that a filter
//! selects exactly what it selects in tcpdump.

/// A compiled filter, run by the workers on each packet of a captured port.
pub struct Filter {
    program: pcap::BpfProgram,
    text: String,
}

// SAFETY: `pcap_offline_filter`, the only call made through a shared reference, reads the program
// and the packet and keeps its state on its own stack; the program is written only when compiled
// (before it is shared) and freed by `Drop` (when no one holds it any more).
unsafe impl Sync for Filter {}

impl Filter {
    /// Compiles `expr` for Ethernet frames; the error is libpcap's
    /// message, naming what it could not parse.
    pub fn compile(expr: &str) -> Result<Filter, String> {
        let dead = pcap::Capture::dead(pcap::Linktype::ETHERNET).map_err(|e| format!("libpcap: {e}"))?;
        let program = dead.compile(expr, true).map_err(|e| format!("filter {expr:?}: {e}"))?;
        Ok(Filter { program, text: expr.to_string() })
    }

    /// Whether the whole frame `bytes` matches.
    #[inline]
    pub fn matches(&self, bytes: &[u8]) -> bool {
        self.program.filter(bytes)
    }

    /// The expression as given.
    pub fn text(&self) -> &str {
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiles_tcpdump_expressions_and_refuses_bad_ones_with_libpcaps_reason() {
        let f = Filter::compile("udp dst port 9").unwrap();
        let udp = |port: u16| {
            let mut v = Vec::new();
            let b = etherparse::PacketBuilder::ethernet2([2; 6], [4; 6]).ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64);
            b.udp(1000, port).write(&mut v, &[0; 18]).unwrap();
            v
        };
        assert!(f.matches(&udp(9)));
        assert!(!f.matches(&udp(10)));
        let e = Filter::compile("udp dst prot 9").err().unwrap();
        assert!(e.contains("udp dst prot 9") && e.contains("unknown host 'prot'"), "{e}");
    }
}
