//! The `wasmdp` binary.

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use wasmdp::cli::{Cli, Command, RunArgs};
use wasmdp::{config, dataplane};

fn main() -> ExitCode {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run(args),
        Command::Validate { config } => config::load(&config)
            .map_err(anyhow::Error::from)
            .and_then(|cfg| dataplane::preflight(&cfg, &dataplane::Overrides::default()))
            .and_then(|()| Ok(wasmdp::output::print(&format!("{}: valid\n", config.display()))?)),
        Command::Bench(args) => wasmdp::bench::main(&args),
        Command::Ctl(args) => wasmdp::control::ctl::main(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`wasmdp ctl ports | head`): nothing left to say to anyone.
        Err(e) if wasmdp::output::is_closed_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            // Not `eprintln!`, which panics when stderr is gone too.
            let _ = writeln!(std::io::stderr(), "error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The control socket to serve: the config's; the default one only when no other wasmdp serves it
/// (a second dataplane on the machine runs without one, with a warning, rather than failing).
fn control_socket(cfg: &config::Config) -> Option<std::path::PathBuf> {
    let path = cfg.control.socket.clone()?;
    if path == wasmdp::control::default_path() && std::os::unix::net::UnixStream::connect(&path).is_ok() {
        tracing::warn!(
            "another wasmdp serves the default control socket {}; this one runs without (set control.socket)",
            path.display()
        );
        return None;
    }
    Some(path)
}

fn run(args: RunArgs) -> anyhow::Result<()> {
    let path = match &args.config {
        Some(path) => Some(path.clone()),
        None => Some(std::path::PathBuf::from("config.yaml")).filter(|p| p.exists()),
    };
    let cfg = match &path {
        Some(path) => config::load(path)?,
        None => {
            tracing::info!("no ./config.yaml: using the built-in default configuration");
            config::parse(config::DEFAULT_YAML, "built-in default config")?
        }
    };
    let dp = dataplane::build(&cfg, &args.overrides())?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())?;
    }
    let secs = |s: f64, what: &str| -> anyhow::Result<Duration> {
        Duration::try_from_secs_f64(s)
            .map_err(|_| anyhow::anyhow!("{what} {s}: must be a non-negative number of seconds"))
    };
    let opts = dataplane::RunOptions {
        duration: args.duration.map(|d| secs(d, "--duration")).transpose()?,
        stats_period: Some(secs(args.stats_period, "--stats-period")?).filter(|d| !d.is_zero()),
        stats_json: args.stats_json.clone(),
        print_final: true,
        watch: path.filter(|_| !args.no_reload),
        control: control_socket(&cfg),
        metrics: cfg.metrics.listen,
    };
    let report = dataplane::run(dp, &opts, stop)?;
    if report.leaked != 0 {
        anyhow::bail!("{} buffers were not returned to the pool", report.leaked);
    }
    Ok(())
}
