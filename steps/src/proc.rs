//! External commands, two kinds. One-shot commands (`pip`, `useradd`, `findmnt`, `fstrim`,
//! `git`, `docker compose`, `--version` probes) run through `xshell`: arguments are passed as
//! given, never through a shell. Long-running children (pgbench in `run` and `bench`) run through
//! `duct` and are killed when SIGINT/SIGTERM arrives (`interrupt`). `std::process` is left only
//! where a child must change user (initdb and pg_ctl as the server user, `server/embedded.rs`).
//! A leaf above `interrupt`.

use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::interrupt::interrupted;

/// A shell for one-shot commands, in the current directory.
pub(crate) fn shell() -> Result<xshell::Shell> {
    xshell::Shell::new().context("creating a shell for external commands")
}

/// The first line `<bin> --version` prints, if it runs.
pub(crate) fn version(bin: &Path) -> Option<String> {
    let sh = shell().ok()?;
    let out = xshell::cmd!(sh, "{bin} --version")
        .quiet()
        .ignore_status()
        .ignore_stderr()
        .read()
        .ok()?;
    out.lines().next().map(|l| l.trim().to_string())
}

/// What a long-running child ended with: its status and what it printed (stdout and stderr).
pub(crate) struct Finished {
    pub(crate) status: std::process::ExitStatus,
    pub(crate) output: String,
}

/// Runs a long child to its end, capturing stdout and stderr together, and kills it (and stops
/// with an error) when the process is interrupted.
pub(crate) fn run_killable(what: &str, expr: duct::Expression) -> Result<Finished> {
    let handle = expr
        .stderr_to_stdout()
        .stdout_capture()
        .unchecked()
        .start()
        .with_context(|| format!("starting {what}"))?;
    loop {
        if let Some(out) = handle.try_wait()? {
            return Ok(Finished {
                status: out.status,
                output: String::from_utf8_lossy(&out.stdout).into_owned(),
            });
        }
        if interrupted() {
            handle.kill().ok();
            bail!("interrupted: {what} was stopped");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
