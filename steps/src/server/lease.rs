//! One workload per server (docs/safety.md): the server's lease, held by one arm (or by every
//! arm of a `--together` sweep, which share the server on purpose) from its `reset-cold` to the
//! end of its `vacuum-timing`. Each step of an arm's cycle takes it before it changes anything
//! and gives it back when it ends; between two steps the arm keeps it for `lease_idle_s`. A
//! failed or interrupted step releases it at once.
//!
//! Where the lease lives: on hotlab's own server, `workload.lease` in the cluster directory
//! (updated under an `flock` of `workload.lock`); on a Compose server, the same files under
//! `$HOTLAB_HOME`; on an external server, a row of `hotlab_lease` in hotlab's probe database,
//! updated under a transaction advisory lock, so that two machines driving one server see each
//! other.
//!
//! Every taking counts a generation. An arm records the generation its `reset-cold` took the
//! server in; a later step of that arm that finds the generation moved (another arm ran in
//! between, after this one's lease lapsed) is refused: its cold start is gone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::ctx::{BackendKind, Ctx};
use crate::io::{read_json, write_json_atomic};
use crate::rundir::RunDir;

/// A step of an arm in progress.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct Running {
    pub(crate) step: String,
    pub(crate) pid: u32,
}

/// The lease as stored.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct Record {
    /// The arm directory (or the `--together` sweep directory) holding the server.
    pub(crate) holder: Option<String>,
    /// Its arms that have not finished their cycle yet.
    pub(crate) members: Vec<String>,
    pub(crate) generation: u64,
    /// Steps in progress, per arm directory.
    pub(crate) running: BTreeMap<String, Running>,
    /// When a step of the holder last started or ended (seconds since the epoch).
    pub(crate) updated_unix: u64,
    /// The holder's last step and the arm it was run for, for the refusal line.
    pub(crate) last: String,
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

impl Record {
    /// A step of the holder runs (its process is alive), or its last step ended under
    /// `idle_s` seconds ago.
    pub(crate) fn live(&self, idle_s: u64) -> bool {
        self.holder.is_some()
            && (self.running.values().any(|r| alive(r.pid))
                || now_unix().saturating_sub(self.updated_unix) < idle_s)
    }

    /// One line: who holds the server and what it is doing.
    pub(crate) fn describe(&self) -> String {
        let Some(h) = &self.holder else {
            return "free".into();
        };
        let died: Vec<String> = self
            .running
            .iter()
            .filter(|(_, r)| !alive(r.pid))
            .map(|(arm, r)| format!("{arm}: {} died (process {} is gone)", r.step, r.pid))
            .collect();
        let live: Vec<String> = self
            .running
            .iter()
            .filter(|(_, r)| alive(r.pid))
            .map(|(arm, r)| format!("{arm}: {} (pid {})", r.step, r.pid))
            .collect();
        let mut out = if live.is_empty() {
            format!(
                "held by {h} between two steps (last: {}, {} s ago)",
                self.last,
                now_unix().saturating_sub(self.updated_unix)
            )
        } else {
            format!("held by {h}; running {}", live.join(", "))
        };
        if !died.is_empty() {
            out += &format!("; {}", died.join(", "));
        }
        out
    }
}

/// Where the lease is kept.
enum Store {
    File { lock: PathBuf, data: PathBuf },
    Database(Box<super::Server>),
}

impl Store {
    fn of(ctx: &Ctx) -> Result<Store> {
        Ok(match ctx.backend {
            BackendKind::Embedded => {
                // Only in a cluster directory that is hotlab's (claimed like the server's own
                // files): never a file in someone else's directory.
                super::embedded::claim_dir(&ctx.cluster_dir)?;
                Store::File {
                    lock: ctx.cluster_dir.join("workload.lock"),
                    data: ctx.cluster_dir.join("workload.lease"),
                }
            }
            BackendKind::Compose => Store::File {
                lock: ctx.home.join("compose-workload.lock"),
                data: ctx.home.join("compose-workload.lease"),
            },
            BackendKind::External => Store::Database(Box::new(super::Server::ensure(ctx)?)),
        })
    }

    /// Reads the record, lets `f` change it, and writes it back, all under the store's lock.
    fn update<T>(&self, f: impl FnOnce(&mut Record) -> Result<T>) -> Result<T> {
        match self {
            Store::File { lock, data } => {
                use std::os::fd::AsRawFd;
                if let Some(d) = lock.parent() {
                    std::fs::create_dir_all(d)
                        .with_context(|| format!("creating {}", d.display()))?;
                }
                let l = std::fs::OpenOptions::new()
                    .create(true)
                    .truncate(false)
                    .write(true)
                    .open(lock)
                    .with_context(|| format!("opening {}", lock.display()))?;
                // SAFETY: a valid open descriptor; the lock is held for this short update only.
                if unsafe { libc::flock(l.as_raw_fd(), libc::LOCK_EX) } != 0 {
                    bail!("locking {}", lock.display());
                }
                let mut rec: Record = if data.exists() {
                    serde_json::from_value(read_json(data)?)
                        .with_context(|| format!("parsing {}", data.display()))?
                } else {
                    Record::default()
                };
                let before = rec.clone();
                let out = f(&mut rec)?;
                if rec != before {
                    write_json_atomic(data, &rec)?;
                }
                Ok(out)
            }
            Store::Database(server) => {
                let probe = server.own_probe_database()?;
                let mut c = server.connect(&probe)?;
                let mut tx = c.transaction()?;
                tx.batch_execute(
                    "SELECT pg_advisory_xact_lock(hashtext('hotlab workload lease')); \
                     CREATE TABLE IF NOT EXISTS hotlab_lease (id int PRIMARY KEY, record text NOT NULL)",
                )?;
                let mut rec: Record =
                    match tx.query_opt("SELECT record FROM hotlab_lease WHERE id = 1", &[])? {
                        Some(row) => serde_json::from_str(&row.get::<_, String>(0))
                            .context("parsing hotlab_lease in hotlab's probe database")?,
                        None => Record::default(),
                    };
                let out = f(&mut rec)?;
                tx.execute(
                    "INSERT INTO hotlab_lease VALUES (1, $1) \
                     ON CONFLICT (id) DO UPDATE SET record = excluded.record",
                    &[&serde_json::to_string(&rec)?],
                )?;
                tx.commit()?;
                Ok(out)
            }
        }
    }
}

/// The lease's holder key for an arm: the sweep directory when its arms run together, the arm
/// directory otherwise; and the arms that hold it.
fn holder_of(rd: &RunDir) -> (String, Vec<String>) {
    let abs = |p: &Path| {
        std::fs::canonicalize(p)
            .unwrap_or_else(|_| p.to_path_buf())
            .display()
            .to_string()
    };
    let arm = abs(&rd.path);
    if let Some(sweep) = rd.path.parent() {
        if let Ok(s) = read_json(&sweep.join("sweep.json")) {
            if s["together"] == true {
                let members = s["order"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.as_str())
                    .map(|name| abs(&sweep.join(name)))
                    .collect();
                return (abs(sweep), members);
            }
        }
    }
    (arm.clone(), vec![arm])
}

/// The server's lease, taken for one step of one arm.
pub(crate) struct Lease {
    store: Store,
    holder: String,
    arm: String,
    step: String,
    pub(crate) generation: u64,
    /// The generation of the arm's last reset-cold (this one's, for a reset-cold).
    cold_generation: Option<u64>,
}

enum Taken {
    Yes(u64),
    Busy(String),
}

/// Takes the server for `step` of the arm `rd`, or refuses in one line naming who holds it
/// (`ctx.wait`: waits instead, with a progress line every 10 s). Changes nothing in the arm.
pub(crate) fn take(ctx: &Ctx, rd: &RunDir, step: &str) -> Result<Lease> {
    let store = Store::of(ctx)?;
    let (holder, members) = holder_of(rd);
    let arm = members
        .iter()
        .find(|m| Path::new(m.as_str()).file_name() == rd.path.file_name())
        .cloned()
        .unwrap_or_else(|| holder.clone());
    // The generation this arm's last reset-cold took the server in: its cold start.
    let mine = rd.meta()?.server_lease.and_then(|l| l.cold_generation);
    let starts = step == "reset-cold";
    let mut waiting = Waiting::new(ctx);
    loop {
        let taken = store.update(|r| {
            if r.holder.as_deref() != Some(&holder) {
                if r.live(ctx.lease_idle_s) {
                    return Ok(Taken::Busy(r.describe()));
                }
                if !starts && mine.is_some_and(|g| g != r.generation) {
                    bail!(
                        "since this arm's reset-cold the server ran another arm ({}); its cold start is gone: run its cycle again from `cargo xtask reset-cold --run {}`",
                        if r.last.is_empty() { "unknown" } else { &r.last },
                        rd.path.display()
                    );
                }
                if mine != Some(r.generation) || starts {
                    r.generation += 1;
                }
                r.holder = Some(holder.clone());
                r.members = members.clone();
                r.running.clear();
            }
            r.running.insert(
                arm.clone(),
                Running {
                    step: step.to_string(),
                    pid: std::process::id(),
                },
            );
            r.updated_unix = now_unix();
            r.last = format!("{step} of {arm}");
            Ok(Taken::Yes(r.generation))
        })?;
        match taken {
            Taken::Yes(generation) => {
                return Ok(Lease {
                    store,
                    holder,
                    arm,
                    step: step.to_string(),
                    generation,
                    cold_generation: if starts { Some(generation) } else { mine },
                })
            }
            Taken::Busy(who) => waiting.wait(&who)?,
        }
    }
}

/// Waiting for the server another arm holds: refused at once without `--wait`; with it, a
/// progress line every 10 s, and a Ctrl-C ends the wait.
struct Waiting {
    wait: bool,
    idle_s: u64,
    started: Instant,
    told: Option<Instant>,
}

impl Waiting {
    fn new(ctx: &Ctx) -> Waiting {
        Waiting {
            wait: ctx.wait,
            idle_s: ctx.lease_idle_s,
            started: Instant::now(),
            told: None,
        }
    }

    fn wait(&mut self, who: &str) -> Result<()> {
        if !self.wait {
            bail!(
                "the server is in use: {who}; one workload per server: wait for it, or pass --wait (a lease left by a finished arm lapses after {} s; `cargo xtask server release` frees one whose process is gone)",
                self.idle_s
            );
        }
        if self
            .told
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(10))
        {
            eprintln!(
                "hotlab: waiting {:.0} s for the server: {who}",
                self.started.elapsed().as_secs_f64()
            );
            self.told = Some(Instant::now());
        }
        if crate::interrupt::interrupted() {
            bail!("interrupted while waiting for the server");
        }
        std::thread::sleep(Duration::from_millis(500));
        Ok(())
    }
}

impl Lease {
    /// Gives the step's share back: the lease stays with the arm until its vacuum-timing ends,
    /// and is released at once when the step failed or was interrupted.
    pub(crate) fn end(self, ok: bool) -> Result<()> {
        let done = self.step == "vacuum-timing";
        self.store.update(|r| {
            if r.holder.as_deref() != Some(&self.holder) {
                return Ok(());
            }
            r.running.remove(&self.arm);
            r.updated_unix = now_unix();
            if !ok {
                r.holder = None;
                r.members.clear();
                r.running.clear();
            } else if done {
                r.members.retain(|m| m != &self.arm);
                if r.members.is_empty() {
                    r.holder = None;
                    r.running.clear();
                }
            }
            Ok(())
        })
    }

    /// What meta.json records of the lease.
    pub(crate) fn json(&self) -> crate::rundir::meta::LeaseRecord {
        crate::rundir::meta::LeaseRecord {
            generation: self.generation,
            cold_generation: self.cold_generation,
            holder: Some(self.holder.clone()),
        }
    }
}

/// A step of an arm's cycle with no pre-work, stopped at once by a signal (every step but
/// `run`): `cycle_step` without its options.
pub(crate) fn step(
    ctx: &Ctx,
    rd: &RunDir,
    step: &str,
    body: impl FnOnce() -> Result<()>,
) -> Result<()> {
    cycle_step(ctx, rd, step, false, || Ok(()), body)
}

/// One step of an arm's cycle, checked before it acts: the arm's lock, then the server's lease,
/// then `before` (work that must happen under both, before anything is recorded: `run` moves a
/// failed attempt aside there), then the body between `step_started` and `step_finished`. A
/// command refused at the lock or the lease leaves the arm as it was.
pub(crate) fn cycle_step(
    ctx: &Ctx,
    rd: &RunDir,
    step: &str,
    graceful: bool,
    before: impl FnOnce() -> Result<()>,
    body: impl FnOnce() -> Result<()>,
) -> Result<()> {
    let lock = rd.lock(step)?;
    let lease = std::sync::Arc::new(std::sync::Mutex::new(Some(take(ctx, rd, step)?)));
    let end = |ok: bool, l: &std::sync::Mutex<Option<Lease>>| -> Result<()> {
        match l.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(lease) => lease.end(ok),
            None => Ok(()),
        }
    };
    let mut r = before();
    if r.is_ok() {
        let json = lease
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(Lease::json);
        r = rd.update_meta(|m| m.server_lease = json);
    }
    if r.is_ok() {
        let on_abort = {
            let lease = lease.clone();
            move || {
                let _ = end(false, lease.as_ref());
            }
        };
        r = rd.step_locked(lock, step, graceful, on_abort, body);
    }
    let ended = end(
        r.is_ok() && !crate::interrupt::interrupted(),
        lease.as_ref(),
    );
    r.and(ended)
}

/// Refuses (or waits, `--wait`) while an arm holds the server: for a step that disturbs the
/// server without belonging to an arm (`reset-cold` without `--run`).
pub(crate) fn ensure_free(ctx: &Ctx) -> Result<()> {
    let store = Store::of(ctx)?;
    let mut waiting = Waiting::new(ctx);
    loop {
        let r = store.update(|r| Ok(r.clone()))?;
        if !r.live(ctx.lease_idle_s) {
            return Ok(());
        }
        waiting.wait(&r.describe())?;
    }
}

/// The lease as it stands (for `server status`, which creates nothing: no cluster directory
/// yet, no lease).
pub(crate) fn current(ctx: &Ctx) -> Result<Record> {
    if ctx.backend == BackendKind::Embedded && !ctx.cluster_dir.join("workload.lease").exists() {
        return Ok(Record::default());
    }
    Store::of(ctx)?.update(|r| Ok(r.clone()))
}

/// `server release`: frees a lease whose holder has no step running. Refused while one runs.
pub(crate) fn release(ctx: &Ctx) -> Result<String> {
    Store::of(ctx)?.update(|r| {
        if r.running.values().any(|x| alive(x.pid)) {
            bail!(
                "the server is in use: {}; a running step keeps it (stop that process first)",
                r.describe()
            );
        }
        let was = r.describe();
        r.holder = None;
        r.members.clear();
        r.running.clear();
        Ok(was)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_lapses_only_when_idle_and_no_step_runs() {
        let mut r = Record {
            holder: Some("/runs/a".into()),
            updated_unix: now_unix(),
            ..Default::default()
        };
        assert!(r.live(300));
        assert!(!r.live(0));
        r.running.insert(
            "/runs/a".into(),
            Running {
                step: "run".into(),
                pid: std::process::id(),
            },
        );
        assert!(r.live(0), "a running step keeps the lease");
        r.running.get_mut("/runs/a").unwrap().pid = u32::MAX;
        assert!(!r.live(0), "a dead process does not");
        r.holder = None;
        assert!(!Record::default().live(300));
    }
}
