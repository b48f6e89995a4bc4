//! Every file of the tcpdump test corpus (`shared/pcaps/tcpdump-tests/`) replayed through every
//! engine to a null port, without threads: the pcap RX queue and a stream are driven directly. No
//! panic; the non-Ethernet captures (LINKTYPE_IPV4.pcap, LINKTYPE_RAW_ipv6.pcap, and pcapng files of
//! Linux SLL, HDLC, PPP, ... interfaces) are refused with a clear message; every packet is accounted for
//! and each file delivers exactly the records an independent reading of it (`common::pcap`, by hand)
//! finds replayable.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use wasmdp::engines;
use wasmdp::lcore::{Retry, Stream, StreamParts};
use wasmdp::mbuf::{Pool, PoolConfig};
use wasmdp::ports::open_all;
use wasmdp::simd::Simd;
use wasmdp::stats::StreamInfo;

const ENGINES: [&str; 6] = ["io", "mac", "macswap", "5tswap", "copy", "rxonly"];
const DATA_ROOM: usize = 2048;

/// What a plain reading of a file finds.
#[derive(Default)]
struct Expected {
    /// Records of 14..=DATA_ROOM bytes.
    fits: u64,
    /// Every packet record (and one cut short at the end of a pcap file).
    all: u64,
    /// The link type of a pcap file, or of a pcapng packet's interface, when it is not Ethernet.
    not_ethernet: Option<u32>,
    /// The reading stopped at an error before the end of the file.
    irregular: bool,
}

fn expected(bytes: &[u8]) -> Expected {
    let p = common::pcap::packets(bytes);
    let is_pcap = p.header_link.is_some();
    let mut links = p.header_link.into_iter().chain(p.records.iter().filter_map(|r| r.0));
    Expected {
        fits: p.records.iter().filter(|r| (14..=DATA_ROOM).contains(&r.1)).count() as u64,
        all: p.records.len() as u64 + (is_pcap && p.irregular) as u64,
        not_ethernet: links.find(|&l| l != common::pcap::ETHERNET),
        // A packet naming an interface that does not exist is irregular too.
        irregular: p.irregular || p.records.iter().any(|r| r.0.is_none()),
    }
}

/// Packets tcpdump reads from `file`, when tcpdump is installed.
fn tcpdump_count(file: &Path) -> Option<u64> {
    let o = std::process::Command::new("tcpdump").arg("-r").arg(file).args(["-nn", "-q"]).output().ok()?;
    let text = String::from_utf8_lossy(&o.stdout);
    // One line per packet, starting with its time of day.
    let n = text.lines().filter(|l| l.as_bytes().get(2) == Some(&b':') && l.as_bytes()[0].is_ascii_digit()).count();
    Some(n as u64)
}

fn corpus() -> Option<Vec<PathBuf>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/pcaps/tcpdump-tests");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
        .collect();
    files.sort();
    Some(files)
}

#[test]
fn every_corpus_file_through_every_engine_is_accounted_for() {
    let Some(files) = corpus() else {
        common::skip("pcap corpus", "../shared/pcaps/tcpdump-tests/ is absent", common::Skip::Optional);
        return;
    };
    assert!(!files.is_empty());
    let t0 = Instant::now();
    let pool = Pool::new(PoolConfig { size: 512, cache_size: 32, ..Default::default() }).unwrap();
    assert_eq!(pool.config().data_room as usize, DATA_ROOM);
    let simd = Simd::detect();
    let (mut replayed, mut skipped, mut refused, mut irregular) = (0u64, 0u64, Vec::new(), Vec::new());
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(file).unwrap();
        let x = expected(&bytes);
        let mut want = x.fits;
        if x.irregular {
            // The plain reading stops at something malformed (the driver skips a corrupt block by its
            // length, and reads headers whose options do not parse without them).
            match tcpdump_count(file) {
                Some(n) => want = n,
                None => println!("{name}: no tcpdump to count its packets; checking accounting only"),
            }
        }
        for (k, engine) in ENGINES.iter().enumerate() {
            let yaml = format!(
                "engine: {engine}\nstreams:\n  - {{rx: in, tx: out}}\nports:\n  - {{name: in, driver: pcap, pcap: {{rx: \"{}\"}}}}\n  - {{name: out, driver: null}}\n",
                file.display()
            );
            let cfg = wasmdp::config::parse(&yaml, "test").unwrap_or_else(|e| panic!("{name}: {e:#}"));
            let mut ports = match open_all(&cfg) {
                Ok(p) => p,
                Err(e) => {
                    let e = format!("{e:#}");
                    assert!(
                        e.contains(&name) && e.contains("only Ethernet (1) can be replayed"),
                        "{name}: refused for another reason: {e}"
                    );
                    let l = x.not_ethernet.unwrap_or_else(|| panic!("{name}: an Ethernet capture refused: {e}"));
                    assert!(e.contains(&format!("({l}): only Ethernet")), "{name}: {e}");
                    if k == 0 {
                        refused.push(format!("{name}: {e}"));
                    }
                    continue;
                }
            };
            assert!(x.not_ethernet.is_none(), "{name}: a {:?} capture was accepted", x.not_ethernet);
            let eng = engines::lookup(engine).unwrap();
            let out = &ports[1];
            let (offloads, tx, tx_mac, peer_mac, template) =
                (out.driver.caps(), out.tx, out.mac, out.peer_mac, out.template.clone());
            let txq = ports[1].txqs[0].take().unwrap();
            let rxq = ports[0].rxqs[0].take().unwrap();
            let info = StreamInfo { rx_port: 0, rx_queue: 0, tx_port: 1, tx_queue: 0, engine: eng.name, lcore: None };
            let mut s = Stream::new(StreamParts {
                info,
                rxq,
                txq,
                run: eng.run.get(simd),
                needs_rx: true,
                burst_size: 32,
                retry: Retry { count: 0, delay: Duration::ZERO },
                offloads,
                tx,
                tx_mac,
                peer_mac,
                template,
                seed_bursts: 0,
                policy: None,
                inject: None,
                echo: Default::default(),
                tunnels: Default::default(),
                prefetch_flow: true,
                tap: wasmdp::capture::StreamTap::none(),
            });
            let mut cache = pool.cache();
            let mut last = u64::MAX;
            loop {
                s.poll(&mut cache);
                let rx = s.counters().snapshot().rx_packets;
                if rx == last {
                    break;
                }
                last = rx;
            }
            let in_flight = s.drain(&mut cache);
            let c = s.counters().snapshot();
            assert_eq!(in_flight, 0, "{name} / {engine}");
            assert_eq!(
                c.rx_packets + c.generated + c.redirected_in,
                c.tx_packets + c.drops.total() + c.redirected_out,
                "{name} / {engine}: {c:?}"
            );
            if *engine == "rxonly" {
                assert_eq!(c.drops.engine, c.rx_packets, "{name} / {engine}: {c:?}");
            } else {
                assert_eq!(c.tx_packets, c.rx_packets, "{name} / {engine}: {c:?}");
            }
            drop(s);
            drop(ports);
            drop(cache);
            assert_eq!(pool.available(), pool.capacity(), "{name} / {engine}: buffers leaked");
            if !x.irregular || want != x.fits {
                assert_eq!(last, want, "{name} / {engine}: received {last}, the file has {want} replayable records");
            }
            if k == 0 {
                replayed += last;
                skipped += x.all.saturating_sub(last);
                if x.irregular {
                    irregular.push(format!("{name}: {last} replayed, tcpdump reads {want}"));
                }
            }
        }
    }
    println!(
        "{} files x {} engines in {:?}: {replayed} records replayed per engine, {skipped} skipped; {} refused (not Ethernet): {refused:#?}; irregular: {irregular:#?}",
        files.len(),
        ENGINES.len(),
        t0.elapsed(),
        refused.len()
    );
    for f in ["LINKTYPE_IPV4.pcap", "LINKTYPE_RAW_ipv6.pcap"] {
        assert!(refused.iter().any(|r| r.starts_with(f)), "{f} not refused: {refused:#?}");
    }
    assert!(replayed > 1000, "only {replayed} records replayed");
}
