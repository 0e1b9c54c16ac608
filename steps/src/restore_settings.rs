//! `restore-settings`: puts back the server settings `build --apply-server-settings` changed on a
//! server hotlab does not own (the previous `postgresql.auto.conf` values build recorded in
//! meta.json `server_settings_restore`). Idempotent; `just arm` runs it on exit, after a failure
//! or Ctrl-C too. Leaves the arm's status alone.

use std::path::PathBuf;

use anyhow::Result;

use crate::ctx::Ctx;
use crate::rundir::meta::SettingsRestore;
use crate::rundir::RunDir;
use crate::server::Server;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Arm run directory
    #[arg(long, env = crate::env::RUN)]
    pub run: PathBuf,
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    let rd = RunDir::open(&args.run)?;
    let _lock = rd.lock("restore-settings")?;
    let meta = rd.meta()?;
    let Some(rec) = meta.server_settings_restore.filter(|r| !r.restored) else {
        return Ok(());
    };
    let previous = rec.previous.clone();
    let server = Server::ensure(ctx)?;
    let done = server.restore_settings(&previous)?;
    eprintln!("hotlab: server settings restored: {}", done.join(", "));
    rd.update_meta(|m| {
        m.server_settings_restore = Some(SettingsRestore {
            restored: true,
            done: Some(done),
            ..rec
        })
    })?;
    Ok(())
}
