//! The pcapng blocks a capture writes (serialized by `pcap-parser`): a section header, one
//! interface per direction of the captured port (nanosecond timestamps), one enhanced packet block
//! per record with its direction in `epb_flags` and its queue and fate as a comment, and at the
//! end one statistics block per interface (packets seen, accepted by the filter, lost to overruns).

use super::{Dir, Record, Session};
use pcap_parser::pcapng::{
    EnhancedPacketBlock, InterfaceDescriptionBlock, InterfaceStatisticsBlock, OptionCode, PcapNGOption,
    SectionHeaderBlock,
};
use pcap_parser::{Linktype, ToVec};
use std::borrow::Cow;
use std::sync::atomic::Ordering::Relaxed;

/// `epb_flags` (RFC pcapng, option 2 of an enhanced packet block): bits 0-1 the direction.
const EPB_FLAGS: OptionCode = OptionCode(2);
const INBOUND: u32 = 1;
const OUTBOUND: u32 = 2;

fn option(code: OptionCode, value: Vec<u8>) -> PcapNGOption<'static> {
    PcapNGOption { code, len: value.len() as u16, value: Cow::Owned(value) }
}

fn bytes(mut b: impl ToVec) -> Vec<u8> {
    // Serializing into a Vec cannot run out of room; the lengths are fixed up first.
    b.to_vec().unwrap_or_default()
}

/// The section header and the two interfaces (0: what `port` received, 1: what it transmitted).
pub fn header(port: &str, snaplen: usize) -> Vec<u8> {
    let shb = SectionHeaderBlock {
        block_type: 0,
        block_len1: 0,
        bom: 0,
        major_version: 1,
        minor_version: 0,
        section_len: -1,
        options: vec![option(OptionCode::ShbUserAppl, format!("wasmdp {}", env!("CARGO_PKG_VERSION")).into_bytes())],
        block_len2: 0,
    };
    let mut out = bytes(shb);
    for (dir, what) in [(Dir::Rx, "received"), (Dir::Tx, "handed to transmit")] {
        let idb = InterfaceDescriptionBlock {
            block_type: 0,
            block_len1: 0,
            linktype: Linktype::ETHERNET,
            reserved: 0,
            snaplen: snaplen as u32,
            options: vec![
                option(OptionCode::IfName, format!("{port}-{}", dir.name()).into_bytes()),
                option(OptionCode::IfDescription, format!("wasmdp port {port}: packets {what}").into_bytes()),
            ],
            block_len2: 0,
            if_tsresol: 9,
            if_tsoffset: 0,
        };
        out.extend(bytes(idb));
    }
    out
}

/// One packet.
pub fn packet(r: &Record) -> Vec<u8> {
    let dir = if r.fate == super::Fate::Received { INBOUND } else { OUTBOUND };
    let epb = EnhancedPacketBlock {
        block_type: 0,
        block_len1: 0,
        if_id: r.interface,
        ts_high: (r.ts_ns >> 32) as u32,
        ts_low: r.ts_ns as u32,
        caplen: r.bytes.len() as u32,
        origlen: r.orig_len,
        data: &r.bytes,
        options: vec![
            option(EPB_FLAGS, dir.to_le_bytes().to_vec()),
            option(OptionCode::Comment, r.fate.comment(r.queue).into_bytes()),
        ],
        block_len2: 0,
    };
    bytes(epb)
}

/// The statistics of both interfaces at `ts_ns`.
pub fn statistics(s: &Session, ts_ns: u64) -> Vec<u8> {
    let mut out = Vec::new();
    for dir in [Dir::Rx, Dir::Tx] {
        let d = dir as usize;
        let isb = InterfaceStatisticsBlock {
            block_type: 0,
            block_len1: 0,
            if_id: d as u32,
            ts_high: (ts_ns >> 32) as u32,
            ts_low: ts_ns as u32,
            options: vec![
                option(OptionCode::IsbIfRecv, s.seen[d].load(Relaxed).to_le_bytes().to_vec()),
                option(OptionCode::IsbIfDrop, s.overruns[d].load(Relaxed).to_le_bytes().to_vec()),
                option(OptionCode::IsbFilterAccept, s.accepted[d].load(Relaxed).to_le_bytes().to_vec()),
            ],
            block_len2: 0,
        };
        out.extend(bytes(isb));
    }
    out
}

/// What a statistics block of [`statistics`] says: packets seen, accepted by the filter, lost to
/// overruns (0 for an option it lacks).
pub fn read_statistics(isb: &InterfaceStatisticsBlock) -> [u64; 3] {
    let mut out = [0; 3];
    for o in &isb.options {
        let i = match o.code {
            OptionCode::IsbIfRecv => 0,
            OptionCode::IsbFilterAccept => 1,
            OptionCode::IsbIfDrop => 2,
            _ => continue,
        };
        if let Ok(v) = <[u8; 8]>::try_from(&o.value[..]) {
            out[i] = u64::from_le_bytes(v);
        }
    }
    out
}
