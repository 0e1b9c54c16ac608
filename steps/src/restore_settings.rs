//! `restore-settings`: puts back the server settings `build --apply-server-settings` changed on a
//! server hotlab does not own (the previous `postgresql.auto.conf` values build recorded in
//! meta.json `server_settings_restore`). Idempotent; `just arm` runs it on exit, after a failure
//! or Ctrl-C too. Leaves the arm's status alone.

use std::path::PathBuf;

use anyhow::Result;
use serde_json::json;

use crate::ctx::Ctx;
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
    let rec = &meta["server_settings_restore"];
    if rec.is_null() || rec["restored"] == true {
        return Ok(());
    }
    let previous = serde_json::from_value(rec["previous"].clone())?;
    let server = Server::ensure(ctx)?;
    let done = server.restore_settings(&previous)?;
    eprintln!("hotlab: server settings restored: {}", done.join(", "));
    rd.set_meta(
        "server_settings_restore",
        json!({"previous": rec["previous"], "restored": true, "done": done}),
    )?;
    Ok(())
}
