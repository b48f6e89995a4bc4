//! The command line: `wasmdp run`, `wasmdp validate`, `wasmdp bench`, `wasmdp ctl`.

use crate::dataplane::Overrides;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// wasmdp: a programmable software packet dataplane.
///
/// Worker threads pinned to cores poll ports in bursts and run forwarding engines (io, mac, macswap,
/// 5tswap, copy, rxonly, txonly) whose inner loops are native SIMD kernels. Logging: RUST_LOG
/// (e.g. RUST_LOG=debug).
#[derive(Debug, Parser)]
#[command(name = "wasmdp", version, about, long_about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the dataplane on a config until Ctrl-C (SIGINT/SIGTERM) or --duration.
    Run(RunArgs),
    /// Check a config file and exit: 0 when valid, 1 with the reason otherwise.
    Validate {
        /// The YAML file.
        config: PathBuf,
    },
    /// Benchmarks: engines x paths (native, plugin, sticky, wasm) x kernel variants x frame sizes x
    /// bursts on null ports through the real poll loop; `bench memcpy` for the memcpy table.
    Bench(crate::bench::BenchArgs),
    /// Ask a running dataplane through its control socket: stats, ports, streams, policies, maps,
    /// map dump PORT MAP, reload, version, top, capture PORT -w FILE, events PORT, trace PORT
    /// (docs/CONTROL.md).
    Ctl(crate::control::ctl::CtlArgs),
}

/// `wasmdp run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The YAML config. Default: ./config.yaml, or the built-in default when that file is absent.
    pub config: Option<PathBuf>,
    /// Stop after this many seconds (fractions allowed).
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    pub duration: Option<f64>,
    /// Print port statistics every SECS seconds (0: never).
    #[arg(long, value_name = "SECS", default_value_t = 1.0, value_parser = parse_seconds)]
    pub stats_period: f64,
    /// Write a JSON report of the run to PATH at stop.
    #[arg(long, value_name = "PATH")]
    pub stats_json: Option<PathBuf>,
    /// Worker cores, overriding `lcores:` (e.g. 1 or 0,1 or 0-3).
    #[arg(long, value_name = "LIST", value_parser = parse_core_list)]
    pub lcores: Option<CoreList>,
    /// Burst size for every stream, overriding `burst:` (1..=512).
    #[arg(long, value_name = "N", value_parser = crate::config::parse_burst)]
    pub burst: Option<usize>,
    /// Engine for every port, overriding `engine:` and each port's engine.
    #[arg(long, value_name = "NAME")]
    pub engine: Option<String>,
    /// Kernel variant, overriding `simd:` (auto, scalar, sse, avx2, avx512).
    #[arg(long, value_name = "NAME")]
    pub simd: Option<String>,
    /// Do not watch the config file: by default, saving it (or its plugins, or sending SIGHUP)
    /// reloads it live; a change that needs a restart, or any error, is rejected and the running
    /// configuration stays.
    #[arg(long)]
    pub no_reload: bool,
}

impl RunArgs {
    /// The overrides these flags ask for.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            lcores: self.lcores.clone().map(|l| l.0),
            burst: self.burst,
            engine: self.engine.clone(),
            simd: self.simd.clone(),
        }
    }
}

/// A list of cores from the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreList(pub Vec<usize>);

/// Longest duration any option takes: a year.
pub const MAX_SECONDS: f64 = 365.0 * 86400.0;

/// A number of seconds: finite, at least 0, at most [`MAX_SECONDS`].
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s.trim().parse().map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !v.is_finite() || !(0.0..=MAX_SECONDS).contains(&v) {
        return Err(format!("{s}: allowed 0 to {MAX_SECONDS} seconds"));
    }
    Ok(v)
}

/// Parses `1`, `0,1`, `0-3`, `0-1,4`: core numbers up to [`crate::config::MAX_LCORE`], each once.
pub fn parse_core_list(s: &str) -> Result<CoreList, String> {
    let max = crate::config::MAX_LCORE;
    let mut out = Vec::new();
    for part in s.split(',') {
        let bad = || format!("`{part}` is not a core number or range (examples: 1, 0,1, 0-3)");
        let num = |t: &str| -> Result<usize, String> {
            let n: u64 = t.trim().parse().map_err(|_| bad())?;
            if n > max as u64 {
                return Err(format!("core {n} is out of range; cores are numbered 0..={max}"));
            }
            Ok(n as usize)
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(bad());
                }
                out.extend(a..=b);
            }
            None => out.push(num(part)?),
        }
        if out.len() > max + 1 {
            return Err(format!("more than {} cores listed", max + 1));
        }
    }
    Ok(CoreList(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn core_lists() {
        assert_eq!(parse_core_list("1").unwrap().0, vec![1]);
        assert_eq!(parse_core_list("0-2,5").unwrap().0, vec![0, 1, 2, 5]);
        assert!(parse_core_list("a").unwrap_err().contains("`a`"));
        assert!(parse_core_list("3-1").is_err());
        assert!(parse_core_list("0-100000000000").unwrap_err().contains("core 100000000000 is out of range"));
        assert!(parse_core_list("0-4000000000").unwrap_err().contains("out of range"));
    }

    #[test]
    fn numbers_are_range_checked() {
        assert_eq!(parse_seconds("0.5"), Ok(0.5));
        for bad in ["-1", "nan", "inf", "1e300", "x"] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
        assert!(crate::config::parse_burst("0").unwrap_err().contains("1..=512"));
        assert!(crate::config::parse_burst("513").is_err());
        assert_eq!(crate::config::parse_burst("512"), Ok(512));
    }

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
