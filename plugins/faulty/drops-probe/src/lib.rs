//! `drops-probe` (test plugin): the SDK's verdicts on direct heads with drops (in WebAssembly; copied
//! heads natively and in the mock host), walked as param `walk` says: `for` (a packet a loop turn),
//! `fold` (`for_each`, four a turn) or `nth` (`nth(1)`: every second packet from the second). Each
//! packet walked is dropped when its first byte is odd; otherwise its second byte becomes 0xAB,
//! written in place. Packets not walked are left alone.
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::{refuse, AreaSpec, Burst, Error, Params, Policy, Refusal, Verdict};

/// How the burst is walked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    For,
    Fold,
    Nth,
}

/// The policy.
pub struct DropsProbe {
    walk: Walk,
}

/// One packet walked.
fn probe((bytes, v): (&mut [u8], Verdict<'_>)) {
    match bytes {
        [first, ..] if *first & 1 == 1 => v.drop(),
        [_, second, ..] => *second = 0xAB,
        _ => {}
    }
}

impl Policy for DropsProbe {
    const AREA: AreaSpec = AreaSpec::DirectHeadsWithDrops(16);

    fn init(_port: u32, params: &Params) -> Result<Self, Refusal> {
        let mut buf = [0u8; 8];
        let walk = match params.try_get("walk", &mut buf) {
            Ok(Some("for")) => Walk::For,
            Ok(Some("fold")) => Walk::Fold,
            Ok(Some("nth")) => Walk::Nth,
            _ => return Err(refuse!("param `walk`: give `for`, `fold` or `nth`")),
        };
        Ok(DropsProbe { walk })
    }

    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
        let mut heads = burst.heads::<16>()?;
        let mut packets = heads.verdicts_mut()?;
        match self.walk {
            Walk::For => {
                for p in packets {
                    probe(p);
                }
            }
            Walk::Fold => packets.for_each(probe),
            Walk::Nth => {
                while let Some(p) = packets.nth(1) {
                    probe(p);
                }
            }
        }
        Ok(())
    }
}

wasmdp_sdk::export_policy!(DropsProbe);

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;
    use wasmdp_sdk::mock;

    /// Natively (copied heads with drops, in the mock host) each walk drops and writes what it says.
    #[test]
    fn each_walk_drops_and_writes_its_packets() {
        let frames: Vec<Vec<u8>> = (0..9u8).map(|i| (0..60u8).map(|b| if b == 0 { i } else { b }).collect()).collect();
        let refs: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
        for walk in ["for", "fold", "nth"] {
            mock::reset();
            mock::set_param("walk", walk);
            mock::set_area(DropsProbe::AREA);
            let mut p = DropsProbe::init(0, &Params::host()).unwrap();
            mock::begin_burst(&refs);
            p.on_burst(&mut Burst::current().unwrap()).unwrap();
            let out = mock::end_burst();
            let dropped: Vec<bool> = out.iter().map(|p| p.dropped).collect();
            assert_eq!(dropped, (0..9).map(|i| i % 2 == 1).collect::<Vec<_>>(), "{walk}");
            for (i, p) in out.iter().enumerate().filter(|(_, p)| !p.dropped) {
                // The walks that visit the even packets write them; `nth(1)` visits only the odd.
                assert_eq!(p.data[1] == 0xAB, walk != "nth", "{walk}: packet {i}");
            }
        }
    }
}
