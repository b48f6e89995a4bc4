//! Network namespaces joined by veth pairs to wasmdp ports in the root namespace, and wasmdp run as
//! a child process on them: what the live-interface tests share. Needs root (CAP_NET_ADMIN,
//! CAP_SYS_ADMIN for namespaces); without them a test skips with a printed reason, which under CI is
//! a failure. Traffic stays inside the namespaces; everything is deleted when dropped.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn sh(args: &[&str]) -> std::process::Output {
    Command::new(args[0]).args(&args[1..]).output().unwrap_or_else(|e| panic!("{}: {e}", args.join(" ")))
}

pub fn run_ok(args: &[&str]) -> Result<(), String> {
    let o = sh(args);
    if o.status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed: {}", args.join(" "), String::from_utf8_lossy(&o.stderr).trim()))
    }
}

/// Namespaces and veth pairs of one test; Drop deletes them (a failing test cleans up too).
pub struct Net {
    pub tag: String,
    pub subnet: u32,
    pub namespaces: Vec<String>,
    pub links: Vec<String>,
    /// RX and TX queues of each veth end.
    pub queues: u32,
}

impl Drop for Net {
    fn drop(&mut self) {
        for l in &self.links {
            let _ = Command::new("ip").args(["link", "del", l]).stderr(Stdio::null()).status();
        }
        for n in &self.namespaces {
            let _ = Command::new("ip").args(["netns", "del", n]).stderr(Stdio::null()).status();
        }
    }
}

impl Net {
    /// Names and subnets unique in this process, whatever tests run at once: names `w<pid>_<n>..`
    /// (at most 11 characters, so a test may add 3 and stay within an interface name's 15), subnet
    /// 10.77.<n>.0/24 (inside the test's own namespaces, so other processes' tests cannot clash).
    pub fn new() -> Net {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        assert!(n < 100, "more than 99 networks in one test binary");
        let tag = format!("w{}_{n}", std::process::id());
        Net { tag, subnet: n, namespaces: vec![], links: vec![], queues: 1 }
    }

    pub fn ip(&self, host: u32) -> String {
        format!("10.77.{}.{host}", self.subnet)
    }

    /// A namespace `<tag><side>` holding veth `<tag><side>n` with address 10.77.x.host, whose other
    /// end `<tag><side>` stays up in the root namespace (no address). Returns (namespace, inside
    /// veth, root veth).
    pub fn side(&mut self, side: char, host: u32) -> Result<(String, String, String), String> {
        let addr = format!("{}/24", self.ip(host));
        self.side_with(side, &addr)
    }

    /// [`Net::side`] with the address (CIDR, IPv4 or IPv6) given.
    pub fn side_with(&mut self, side: char, addr: &str) -> Result<(String, String, String), String> {
        let ns = format!("{}{side}", self.tag);
        let outer = format!("{}{side}", self.tag);
        let inner = format!("{}{side}n", self.tag);
        assert!(inner.len() <= 15, "{inner}: interface names are at most 15 characters");
        run_ok(&["ip", "netns", "add", &ns])?;
        self.namespaces.push(ns.clone());
        let q = self.queues.to_string();
        let qs = ["numtxqueues", &q, "numrxqueues", &q];
        run_ok(&[&["ip", "link", "add", &outer][..], &qs, &["type", "veth", "peer", "name", &inner], &qs].concat())?;
        self.links.push(outer.clone());
        run_ok(&["ip", "link", "set", &inner, "netns", &ns])?;
        let v6 = addr.contains(':');
        let dad: &[&str] = if v6 { &["nodad"] } else { &[] };
        run_ok(&[&["ip", "-n", &ns, "addr", "add", addr, "dev", &inner][..], dad].concat())?;
        run_ok(&["ip", "-n", &ns, "link", "set", &inner, "up"])?;
        run_ok(&["ip", "-n", &ns, "link", "set", "lo", "up"])?;
        // No IPv6 chatter from the root-side end.
        let _ = sh(&["sysctl", "-q", "-w", &format!("net.ipv6.conf.{outer}.disable_ipv6=1")]);
        run_ok(&["ip", "link", "set", &outer, "up"])?;
        Ok((ns, inner, outer))
    }
}

/// Creates what the test needs, or prints why the test is skipped and returns None.
pub fn setup<T>(name: &str, f: impl FnOnce() -> Result<T, String>) -> Option<T> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        super::skip(name, "needs root to create network namespaces and veth pairs", super::Skip::Required);
        return None;
    }
    match f() {
        Ok(v) => Some(v),
        Err(e) => {
            super::skip(name, &format!("cannot create namespaces / veth pairs: {e}"), super::Skip::Required);
            None
        }
    }
}

/// wasmdp running as a child on a config; `stop` sends SIGINT and returns its --stats-json.
pub struct Wasmdp {
    pub child: Option<Child>,
    pub dir: PathBuf,
}

impl Wasmdp {
    pub fn start(name: &str, yaml: &str) -> Wasmdp {
        let dir = std::env::temp_dir().join(format!("wasmdp-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = dir.join("config.yaml");
        std::fs::write(&cfg, yaml).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_wasmdp"))
            .args(["run", cfg.to_str().unwrap(), "--stats-period", "0", "--no-reload", "--stats-json"])
            .arg(dir.join("stats.json"))
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
            .spawn()
            .expect("spawning wasmdp");
        let mut w = Wasmdp { child: Some(child), dir };
        // Give it time to open the ports and start polling; fail early if it exits.
        let until = Instant::now() + Duration::from_millis(1500);
        while Instant::now() < until {
            if let Some(st) = w.child.as_mut().unwrap().try_wait().unwrap() {
                let err = std::fs::read_to_string(w.dir.join("stderr")).unwrap_or_default();
                w.child = None;
                panic!("wasmdp exited at start ({st}):\n{err}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        w
    }

    pub fn stop(mut self) -> serde_json::Value {
        let mut child = self.child.take().unwrap();
        // SAFETY: signalling our own child process by its id.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        let st = child.wait().unwrap();
        let err = std::fs::read_to_string(self.dir.join("stderr")).unwrap_or_default();
        assert!(st.success(), "wasmdp failed ({st}):\n{err}");
        let text = std::fs::read_to_string(self.dir.join("stats.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }
}

impl Drop for Wasmdp {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn port<'a>(j: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    j["ports"].as_array().unwrap().iter().find(|p| p["name"] == name).unwrap_or_else(|| panic!("port {name} in {j}"))
}

pub fn u(v: &serde_json::Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"))
}

pub fn ping(ns: &str, dst: &str) -> std::process::Output {
    sh(&["ip", "netns", "exec", ns, "ping", "-c", "3", "-W", "1", "-w", "10", dst])
}

pub fn assert_ok(what: &str, o: &std::process::Output, wasmdp_err: &str) {
    assert!(
        o.status.success(),
        "{what} failed:\n{}{}\nwasmdp:\n{wasmdp_err}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

pub fn check_accounting(j: &serde_json::Value) {
    assert_eq!(j["leaked_buffers"], 0, "{j}");
    for s in j["streams"].as_array().unwrap() {
        assert_eq!(
            u(s, "rx_packets") + u(s, "generated") + s["redirected_in"].as_u64().unwrap_or(0),
            u(s, "tx_packets") + u(s, "dropped") + s["redirected_out"].as_u64().unwrap_or(0),
            "stream {s}"
        );
    }
}

/// Sends `frames` out of `dev` in namespace `ns` (a raw AF_PACKET socket in python3, which
/// setup.sh installs): frames as they are, tags and wrong checksums included.
pub fn send_raw(ns: &str, dev: &str, frames: &[Vec<u8>]) {
    let hex: Vec<String> = frames.iter().map(|f| f.iter().map(|b| format!("{b:02x}")).collect()).collect();
    let code = "import socket,sys,time\ns=socket.socket(socket.AF_PACKET,socket.SOCK_RAW)\ns.bind((sys.argv[1],0))\nfor h in sys.argv[2:]:\n    s.send(bytes.fromhex(h)); time.sleep(0.01)\n";
    let mut args = vec!["ip", "netns", "exec", ns, "python3", "-c", code, dev];
    args.extend(hex.iter().map(String::as_str));
    run_ok(&args).unwrap();
}

/// A UDP/IPv4 frame from a to b, with `tags` (TPID, TCI) after the MACs, both checksums zero.
pub fn udp_frame(net: &Net, tags: &[(u16, u16)], payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 0xbb, 0x02, 0, 0, 0, 0, 0xaa];
    for (tpid, tci) in tags {
        f.extend(tpid.to_be_bytes());
        f.extend(tci.to_be_bytes());
    }
    f.extend([0x08, 0x00]);
    let total = (20 + 8 + payload.len()) as u16;
    let [t0, t1] = total.to_be_bytes();
    f.extend([0x45, 0, t0, t1, 0, 1, 0x40, 0, 64, 17, 0, 0]);
    f.extend([10, 77, net.subnet as u8, 1, 10, 77, net.subnet as u8, 2]);
    f.extend(4000u16.to_be_bytes());
    f.extend(5000u16.to_be_bytes());
    f.extend(((8 + payload.len()) as u16).to_be_bytes());
    f.extend([0, 0]);
    f.extend_from_slice(payload);
    f
}

/// Runs `code` with python3 in namespace `ns`; returns its output.
pub fn python(ns: &str, code: &str, args: &[&str]) -> std::process::Output {
    let mut a = vec!["ip", "netns", "exec", ns, "python3", "-c", code];
    a.extend_from_slice(args);
    sh(&a)
}

/// Sends `frame` `n` times as fast as python3 can out of `dev` in namespace `ns`.
pub fn send_repeated(ns: &str, dev: &str, frame: &[u8], n: u64) {
    let code = "import socket,sys\ns=socket.socket(socket.AF_PACKET,socket.SOCK_RAW)\ns.bind((sys.argv[1],0))\nf=bytes.fromhex(sys.argv[2])\nfor _ in range(int(sys.argv[3])): s.send(f)\n";
    let hex: String = frame.iter().map(|b| format!("{b:02x}")).collect();
    let o = python(ns, code, &[dev, &hex, &n.to_string()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Gives namespace side `a` 16 more source addresses (16 flows for the queues to share).
pub fn add_sources(net: &Net, a: &(String, String, String)) {
    for i in 0..16 {
        run_ok(&["ip", "-n", &a.0, "addr", "add", &format!("{}/24", net.ip(100 + i)), "dev", &a.1]).unwrap();
    }
}

/// Pings host 2 from each of the sources [`add_sources`] added; `wasmdp_err` for failures.
pub fn ping_from_sources(net: &Net, a: &(String, String, String), wasmdp_err: &str) {
    for i in 0..16 {
        let src = net.ip(100 + i);
        let o = sh(&["ip", "netns", "exec", &a.0, "ping", "-c", "2", "-i", "0.2", "-W", "1", "-I", &src, &net.ip(2)]);
        assert_ok(&format!("ping from {src}"), &o, wasmdp_err);
    }
}

/// `rx_packets` of each stream receiving on port `name`, checked to be two, both non-zero.
pub fn assert_both_queues_received(j: &serde_json::Value, name: &str) {
    let per_queue: Vec<u64> =
        j["streams"].as_array().unwrap().iter().filter(|s| s["rx_port"] == name).map(|s| u(s, "rx_packets")).collect();
    assert_eq!(per_queue.len(), 2);
    assert!(per_queue.iter().all(|&n| n > 0), "both queues of port {name} received: {per_queue:?}");
}

/// With wasmdp stopped (SIGSTOP), sends `n` UDP frames into side `a`, then lets wasmdp run again
/// for `settle`: what the port's ring could not hold is lost meanwhile.
pub fn flood_while_stopped(w: &Wasmdp, net: &Net, a: &(String, String, String), n: u64, settle: Duration) {
    let pid = w.child.as_ref().unwrap().id() as libc::pid_t;
    // SAFETY: signalling our own child process by its id.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    send_repeated(&a.0, &a.1, &udp_frame(net, &[], &[0x5a; 100]), n);
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    std::thread::sleep(settle);
}

/// `rx_packets` and `rx_missed` of port `name`, and the run's `in_flight`.
pub fn received_missed_in_flight(j: &serde_json::Value, name: &str) -> (u64, u64, u64) {
    let p = port(j, name);
    (u(p, "rx_packets"), u(p, "rx_missed"), u(&j["totals"], "in_flight"))
}

fn retransmits(ns: &str) -> u64 {
    let o = sh(&["ip", "netns", "exec", ns, "cat", "/proc/net/snmp"]);
    let text = String::from_utf8_lossy(&o.stdout);
    let mut tcp = text.lines().filter(|l| l.starts_with("Tcp:"));
    let (names, values) = (tcp.next().unwrap_or(""), tcp.next().unwrap_or(""));
    let i = names.split_whitespace().position(|n| n == "RetransSegs").unwrap_or(0);
    values.split_whitespace().nth(i).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// What a TCP transfer did.
pub struct Transfer {
    pub mib: usize,
    pub secs: f64,
    pub retransmits: u64,
}

impl std::fmt::Display for Transfer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mbits = self.mib as f64 * 8.388608 / self.secs;
        write!(
            f,
            "{} MiB in {:.2} s = {mbits:.0} Mbit/s, {} retransmitted segments",
            self.mib, self.secs, self.retransmits
        )
    }
}

/// Sends `mib` MiB over TCP from namespace side `a` to side `b` (address `net.ip(2)`) through the
/// running wasmdp `w`, and checks that the bytes received are the bytes sent (count and SHA-256).
pub fn tcp_transfer(
    net: &Net,
    a: &(String, String, String),
    b: &(String, String, String),
    mib: usize,
    w: &Wasmdp,
) -> Transfer {
    let server = "import socket,sys,hashlib\ns=socket.socket();s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\ns.bind((sys.argv[1],5201));s.listen(1);s.settimeout(30)\nc,_=s.accept();c.settimeout(30);h=hashlib.sha256();n=0\nwhile True:\n    d=c.recv(1<<20)\n    if not d: break\n    h.update(d);n+=len(d)\nprint(n,h.hexdigest())\n";
    let client = "import socket,sys,time,hashlib\nn=int(sys.argv[2])<<20\nblock=bytes(range(256))*4096\nc=socket.create_connection((sys.argv[1],5201),timeout=20)\nt=time.time();sent=0;h=hashlib.sha256()\nwhile sent<n:\n    c.sendall(block);h.update(block);sent+=len(block)\nc.shutdown(socket.SHUT_WR);c.recv(1);print(sent,h.hexdigest(),time.time()-t)\n";
    let ip_b = net.ip(2);
    let srv = {
        let (ns, code, addr) = (b.0.clone(), server.to_string(), ip_b.clone());
        std::thread::spawn(move || python(&ns, &code, &[&addr]))
    };
    std::thread::sleep(Duration::from_millis(500));
    let before = retransmits(&a.0);
    let c = python(&a.0, client, &[&ip_b, &mib.to_string()]);
    let s = srv.join().unwrap();
    let err = std::fs::read_to_string(w.dir.join("stderr")).unwrap_or_default();
    assert_ok("the TCP client", &c, &err);
    assert_ok("the TCP server", &s, &err);
    let retransmits = retransmits(&a.0) - before;
    let (cs, ss) = (String::from_utf8_lossy(&c.stdout), String::from_utf8_lossy(&s.stdout));
    let cw: Vec<&str> = cs.split_whitespace().collect();
    let sw: Vec<&str> = ss.split_whitespace().collect();
    assert_eq!(sw[0], cw[0], "bytes received == bytes sent");
    assert_eq!(sw[1], cw[1], "the same bytes (SHA-256)");
    Transfer { mib, secs: cw[2].parse().unwrap(), retransmits }
}

/// Frames the inner veth of namespace side `s` has received so far.
pub fn inner_rx(s: &(String, String, String)) -> u64 {
    let o = sh(&["ip", "netns", "exec", &s.0, "cat", &format!("/sys/class/net/{}/statistics/rx_packets", s.1)]);
    String::from_utf8_lossy(&o.stdout).trim().parse().unwrap_or_else(|_| panic!("rx_packets of {}: {o:?}", s.1))
}

/// Replays `frames` once from a pcap port into port `out` (YAML of one port named `out`) with
/// `burst`, and returns the run's report and how many frames namespace side `b` received.
pub fn replay_into(
    name: &str,
    b: &(String, String, String),
    out: &str,
    burst: usize,
    frames: &[Vec<u8>],
) -> (serde_json::Value, u64) {
    let dir = std::env::temp_dir().join(format!("wasmdp-{name}-in-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cap = dir.join("in.pcap");
    let recs: Vec<_> = frames
        .iter()
        .map(|f| super::pcap::Rec { ts: Duration::ZERO, data: f.clone(), orig_len: f.len() as u32 })
        .collect();
    super::pcap::write_us(&cap, super::pcap::ETHERNET, &recs);
    let before = inner_rx(b);
    let yaml = format!(
        "engine: io\nburst: {burst}\npool: {{data_room: 4096}}\nstreams:\n  - {{rx: in, tx: out}}\nports:\n  - {{name: in, driver: pcap, pcap: {{rx: {}, repeat: 1}}}}\n{out}",
        cap.display()
    );
    let w = Wasmdp::start(name, &yaml);
    std::thread::sleep(Duration::from_millis(1500));
    let j = w.stop();
    std::thread::sleep(Duration::from_millis(100));
    let got = inner_rx(b) - before;
    std::fs::remove_dir_all(&dir).unwrap();
    (j, got)
}

/// `n` UDP frames from a to b of `size` bytes each.
pub fn frames_of(net: &Net, n: usize, size: usize) -> Vec<Vec<u8>> {
    (0..n).map(|_| udp_frame(net, &[], &vec![0x5a; size - 42])).collect()
}

/// `wasmdp ctl capture` of a live port `a` (`driver`: `driver: X, X`, its options then given the
/// interface of side `a`) running the icmpecho engine for `port_ip`, while `a`'s namespace pings
/// it: the three echo requests inbound on `a-rx` and the three replies outbound on `a-tx`, read by
/// tshark, the filter leaving ARP out; the run's accounting checked at stop.
pub fn check_capture_of_ping(name: &str, a: &(String, String, String), port_ip: &str, driver: &str) {
    let sock = std::env::temp_dir().join(format!("wasmdp-{name}-{}.sock", std::process::id()));
    let yaml = format!(
        "engine: icmpecho\ntopology: loop\ncontrol: {{socket: {}}}\nports:\n  - {{name: a, {driver}: {{iface: {}}}, icmpecho: {{ipv4: [{port_ip}]}}}}\n",
        sock.display(),
        a.2
    );
    let w = Wasmdp::start(name, &yaml);
    let file = w.dir.join("a.pcapng");
    let mut ctl = Command::new(env!("CARGO_BIN_EXE_wasmdp"))
        .args(["ctl", "--socket", sock.to_str().unwrap(), "capture", "a", "--filter", "icmp", "--count", "6"])
        .arg("-w")
        .arg(&file)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // It says "capturing ..." once the capture runs.
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(ctl.stderr.as_mut().unwrap()), &mut first).unwrap();
    assert!(first.starts_with("capturing a (both, filter \"icmp\")"), "{first}");
    let err = || std::fs::read_to_string(w.dir.join("stderr")).unwrap_or_default();
    assert_ok("ping of the icmpecho port", &ping(&a.0, port_ip), &err());
    assert!(ctl.wait().unwrap().success());
    let out = Command::new("tshark")
        .args(["-r", file.to_str().unwrap(), "-T", "fields", "-e", "frame.interface_name", "-e", "icmp.type"])
        .output()
        .expect("tshark (scripts/setup.sh installs it)");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.iter().filter(|l| **l == "a-rx\t8").count(), 3, "three echo requests received:\n{text}");
    assert_eq!(lines.iter().filter(|l| **l == "a-tx\t0").count(), 3, "three echo replies sent:\n{text}");
    let j = w.stop();
    check_accounting(&j);
}
