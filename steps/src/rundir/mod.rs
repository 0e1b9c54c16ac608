//! The run directory, hotlab's stable contract (ARCHITECTURE.md, "The run directory"): creating a
//! sweep with its arm directories, each arm's meta.json (the typed plan `init` resolved, the
//! status, what each step recorded). Reads and writes only under `data/runs/`.

pub(crate) mod meta;

pub(crate) use meta::{FileEntry, Meta, StepRecord};

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::ctx::Ctx;
use crate::host::{host_info, hotlab_info};
use crate::interrupt::interrupted;
use crate::io::{now_rfc3339, read_json, write_json_atomic};
use crate::study::{ArmPlan, Plan};

/// check.json: whether a run's invariants held, condition by condition (the spv sum, a
/// pgbench-script study's row counters, or TPROC-C's consistency conditions).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct CheckJson {
    pub(crate) ok: bool,
    /// TPROC-C: the profile whose conditions were checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) profile: Option<String>,
    pub(crate) conditions: Vec<CheckCondition>,
}

/// One condition of check.json.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct CheckCondition {
    /// TPROC-C: the condition's number in the TPC-C specification (clause 3.3.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) condition: Option<u32>,
    pub(crate) name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) expected: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) got: Option<i64>,
    /// Rows (or counts) that break the condition.
    pub(crate) violations: i64,
}

/// fillfactor.json: what apply-fillfactor asked and read back, per relation.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct FillfactorJson {
    pub(crate) arm: String,
    /// The arm's build route (`rewrite` or `create-with`).
    pub(crate) build: String,
    pub relations: std::collections::BTreeMap<String, Relation>,
}

/// One relation of fillfactor.json: a table or index the arm set, or a table it rewrote.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Relation {
    /// `table` or `index`.
    pub(crate) kind: String,
    /// Its reloptions before (space-separated `key=value`).
    pub(crate) before: Option<String>,
    /// The fillfactor the arm asked (None: only rewritten).
    pub(crate) asked: Option<i64>,
    /// The partitioned parent the arm named, for a leaf partition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) partition_of: Option<String>,
    /// Seconds of its VACUUM FULL (None: not rewritten).
    #[serde(default)]
    pub rewrite_s: Option<f64>,
    /// Why it was not rewritten, where the list named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewrite: Option<String>,
    /// Its reloptions after, and the fillfactor they give (100 when unset).
    #[serde(default)]
    pub(crate) reloptions: Option<String>,
    #[serde(default)]
    pub read_back: Option<i64>,
    /// Its size after the rewrite.
    #[serde(default)]
    pub(crate) bytes: Option<i64>,
}

impl FillfactorJson {
    /// A run directory's fillfactor.json as this type (None when absent or unreadable).
    pub(crate) fn of(v: &serde_json::Value) -> Option<FillfactorJson> {
        serde_json::from_value(v.clone()).ok()
    }
}

/// An arm's or a step's status in meta.json (`status`, `steps.<step>.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum StepStatus {
    /// Made by `init`, nothing run yet.
    Pending,
    Running,
    /// Steps ran, the workload not yet.
    Ready,
    Complete,
    Failed,
    Interrupted,
    /// Left `running` by a process that is gone.
    Died,
    /// A result file differs from what the last step recorded (analyze only).
    Damaged,
}

impl StepStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            StepStatus::Pending => "pending",
            StepStatus::Running => "running",
            StepStatus::Ready => "ready",
            StepStatus::Complete => "complete",
            StepStatus::Failed => "failed",
            StepStatus::Interrupted => "interrupted",
            StepStatus::Died => "died",
            StepStatus::Damaged => "damaged",
        }
    }
}

/// One arm of a sweep: the directory every step of that arm reads and writes.
#[derive(Debug, Clone)]
pub struct RunDir {
    pub path: PathBuf,
}

impl RunDir {
    /// Opens an existing arm directory (it must hold meta.json).
    pub fn open(path: &Path) -> Result<RunDir> {
        if !path.join("meta.json").exists() {
            bail!(
                "{} is not a hotlab run directory (no meta.json); create one with `cargo xtask init --study STUDY`",
                path.display()
            );
        }
        Ok(RunDir {
            path: path.to_path_buf(),
        })
    }

    /// check.json with one condition: what was expected, what was found.
    pub(crate) fn write_check(&self, name: &str, expected: i64, got: i64, ok: bool) -> Result<()> {
        let check = CheckJson {
            ok,
            profile: None,
            conditions: vec![CheckCondition {
                condition: None,
                name: name.into(),
                expected: Some(expected),
                got: Some(got),
                violations: if ok { 0 } else { 1 },
            }],
        };
        crate::io::write_json_atomic(&self.file("check.json"), &check)
    }

    pub(crate) fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    pub(crate) fn meta(&self) -> Result<Meta> {
        serde_json::from_value(read_json(&self.file("meta.json"))?)
            .with_context(|| format!("reading {}", self.file("meta.json").display()))
    }

    /// Changes meta.json (an atomic rewrite of the whole file).
    pub(crate) fn update_meta(&self, change: impl FnOnce(&mut Meta)) -> Result<()> {
        let mut m = self.meta()?;
        change(&mut m);
        write_json_atomic(&self.file("meta.json"), &m)
    }

    /// The plan `init` resolved for this arm, read once by each step. Refuses a run directory
    /// written before plans were typed (only `analyze` reads those, through `plan_any`).
    pub fn plan(&self) -> Result<ArmPlan> {
        let p = self.plan_any()?;
        if p.plan_version < ArmPlan::VERSION {
            bail!(
                "{} was created by an older hotlab (no resolved plan in meta.json); create a new run with `cargo xtask init --study {}`",
                self.path.display(),
                p.study
            );
        }
        p.size()?;
        Ok(p)
    }

    /// The plan of any run directory, old ones included (their missing parts empty).
    pub(crate) fn plan_any(&self) -> Result<ArmPlan> {
        let meta = read_json(&self.file("meta.json"))?;
        let mut p: ArmPlan = serde_json::from_value(meta)
            .map_err(|e| anyhow::anyhow!("{}: {e}", self.file("meta.json").display()))?;
        if p.sweep_table.is_none() {
            p.sweep_table = swept_table(&self.path);
        }
        Ok(p)
    }

    /// The database this arm measures (set by build).
    pub fn database(&self) -> Result<String> {
        let m = self.meta()?;
        if m.database_end.as_ref().is_some_and(|d| d.dropped) {
            bail!(
                "the database of {} was dropped after its last sample; build it again with `cargo xtask build --run {}` (or keep it next time: vacuum-timing --keep-db)",
                self.path.display(),
                self.path.display()
            );
        }
        match m.build {
            Some(b) => Ok(b.database),
            None => bail!(
                "no build found in {}; run `cargo xtask build --run {}` first",
                self.path.display(),
                self.path.display()
            ),
        }
    }

    /// Marks the start of a step: status running, step start time, this process. A step that
    /// an earlier process left `running` (it holds no lock any more, so that process is gone) is
    /// marked `died`, and the user is told.
    pub(crate) fn step_started(&self, step: &str) -> Result<()> {
        let mut m = self.meta()?;
        if m.status == Some(StepStatus::Running) {
            for (s, rec) in m.steps.iter_mut() {
                if rec.status != Some(StepStatus::Running) {
                    continue;
                }
                let pid = rec.pid.map_or("?".to_string(), |p| p.to_string());
                eprintln!(
                    "hotlab: {}: step {s} was left running by process {pid}, which is gone (killed?); marked died. {step} starts now; run the arm's remaining steps after it (`just arm` runs them all)",
                    self.path.display()
                );
                rec.status = Some(StepStatus::Died);
                rec.error = Some(format!("process {pid} ended without finishing"));
            }
        }
        m.status = Some(StepStatus::Running);
        m.steps.insert(
            step.to_string(),
            StepRecord {
                status: Some(StepStatus::Running),
                start: Some(now_rfc3339()),
                pid: Some(std::process::id()),
                ..Default::default()
            },
        );
        if m.start.is_none() {
            m.start = Some(now_rfc3339());
        }
        write_json_atomic(&self.file("meta.json"), &m)
    }

    /// Records how a step ended. The arm's status is `complete` once its workload has run,
    /// `ready` before that, `failed` or `interrupted` when a step did not finish.
    pub(crate) fn step_finished(&self, step: &str, result: &Result<()>) -> Result<()> {
        let mut m = self.meta()?;
        let status = match result {
            Ok(()) if interrupted() => StepStatus::Interrupted,
            Ok(()) if self.file("workload.json").exists() => StepStatus::Complete,
            Ok(()) => StepStatus::Ready,
            Err(_) if interrupted() => StepStatus::Interrupted,
            Err(_) => StepStatus::Failed,
        };
        m.status = Some(status);
        let rec = m.steps.entry(step.to_string()).or_default();
        rec.status = Some(if result.is_ok() && !interrupted() {
            StepStatus::Complete
        } else {
            status
        });
        rec.end = Some(now_rfc3339());
        if let Err(e) = result {
            rec.error = Some(format!("{e:#}"));
        }
        m.end = Some(now_rfc3339());
        m.files = Some(self.manifest()?);
        write_json_atomic(&self.file("meta.json"), &m)
    }

    /// The arm's result files as they stand, each with its size and (CSV, JSONL and logs) its
    /// line count: recorded in meta.json at the end of every step, checked by analyze
    /// (`damage`), so a file cut short afterwards is found.
    pub(crate) fn manifest(&self) -> Result<BTreeMap<String, FileEntry>> {
        let mut out = BTreeMap::new();
        for rel in self.result_files()? {
            let p = self.path.join(&rel);
            let bytes = fs::metadata(&p)
                .with_context(|| format!("reading {}", p.display()))?
                .len();
            let rows = if counts_lines(&rel) {
                Some(line_count(&p)? as u64)
            } else {
                None
            };
            out.insert(rel, FileEntry { bytes, rows });
        }
        Ok(out)
    }

    /// The result files of the arm (relative paths): every file in it and in `snapshots/`,
    /// except meta.json itself, the lock and hidden (temporary) files.
    fn result_files(&self) -> Result<Vec<String>> {
        let mut out = vec![];
        for sub in ["", "snapshots"] {
            let d = self.path.join(sub);
            let Ok(rd) = fs::read_dir(&d) else { continue };
            for e in rd {
                let e = e.with_context(|| format!("reading {}", d.display()))?;
                let name = e.file_name().to_string_lossy().into_owned();
                if !e.file_type()?.is_file()
                    || name.starts_with('.')
                    || name == "meta.json"
                    || name == "lock"
                    // analyze's derived results, rewritten whole by every analyze: not a step's
                    // record, so never checked against a recorded size.
                    || name.ends_with(".parquet")
                    || name.ends_with(".parquet.tmp")
                {
                    continue;
                }
                out.push(if sub.is_empty() {
                    name
                } else {
                    format!("{sub}/{name}")
                });
            }
        }
        out.sort();
        Ok(out)
    }

    /// Whether the arm's files are as the last step left them: `None` when they are, else one
    /// line naming the first damaged file. Damaged: shorter than recorded, a CSV or JSONL whose
    /// last line has no newline, a JSON file that does not parse. A file added after the last record (a step that died) is checked for the last two.
    pub(crate) fn damage(&self) -> Option<String> {
        let meta = self.meta().ok()?;
        if let Some(files) = &meta.files {
            for (rel, rec) in files {
                let p = self.path.join(rel);
                let Ok(m) = fs::metadata(&p) else {
                    return Some(format!("{rel} is missing (meta.json records it)"));
                };
                // Sizes only: a file only ever grows or is appended to, so one cut short is
                // shorter, and counting its lines again would read every file twice.
                let want = rec.bytes;
                if m.len() < want {
                    return Some(format!(
                        "{rel} is shorter than recorded ({} of {want} bytes)",
                        m.len()
                    ));
                }
            }
        }
        for rel in self.result_files().ok()? {
            let p = self.path.join(&rel);
            if counts_lines(&rel) && !rel.starts_with("pgbench_log") {
                let ends = last_byte(&p).is_none_or(|b| b == b'\n');
                if !ends {
                    return Some(format!("{rel} ends in a partial line (no newline)"));
                }
            }
            if rel.ends_with(".json") && read_json(&p).is_err() {
                return Some(format!("{rel} is not valid JSON"));
            }
        }
        None
    }

    /// Runs a step body between step_started and step_finished, under an arm lock the caller
    /// took (`lock`) before it changed anything (`server::lease::cycle_step`). On SIGINT/SIGTERM
    /// a non-graceful step marks the arm `interrupted` at once, runs `on_abort` and cancels the
    /// queries its connections are running (`interrupt::run_handlers`), so the body returns an
    /// error that unwinds through every `Drop` (the binary exits 130); a graceful one (`run`)
    /// watches `interrupted()` itself, stops and keeps what it sampled.
    pub(crate) fn step_locked<F, A>(
        &self,
        lock: fs::File,
        step: &str,
        graceful: bool,
        on_abort: A,
        body: F,
    ) -> Result<()>
    where
        F: FnOnce() -> Result<()>,
        A: FnOnce() + Send + 'static,
    {
        crate::interrupt::catch_interrupts();
        let _lock = lock;
        self.step_started(step)?;
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        if !graceful {
            let (me, step, done) = (self.clone(), step.to_string(), done.clone());
            std::thread::spawn(move || {
                while !done.load(std::sync::atomic::Ordering::SeqCst) {
                    if interrupted() {
                        let why = Err(anyhow::anyhow!("interrupted by a signal"));
                        let _ = me.step_finished(&step, &why);
                        on_abort();
                        eprintln!(
                            "hotlab: interrupted: {} marked interrupted during {step}; stopping",
                            me.path.display()
                        );
                        crate::interrupt::run_handlers();
                        return;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
            });
        }
        let mut r = body();
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        if r.is_ok() && interrupted() {
            r = Err(anyhow::anyhow!(
                "interrupted; what was sampled is kept in {} (status: interrupted)",
                self.path.display()
            ));
        }
        self.step_finished(step, &r)?;
        r
    }

    /// Moves the files of a failed or interrupted `run` into `attempt-<n>/` (the first free n):
    /// its workload files and pgbench logs, and the snapshot files, which are started again with
    /// only their latest `pre` sample (taken for this attempt, or for the last). Returns the
    /// attempt directory.
    pub(crate) fn move_attempt_aside(&self) -> Result<PathBuf> {
        let to = (1..)
            .map(|n| self.path.join(format!("attempt-{n}")))
            .find(|p| !p.exists())
            .expect("a free attempt number");
        fs::create_dir_all(to.join("snapshots"))?;
        for e in fs::read_dir(&self.path)? {
            let p = e?.path();
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let run_output = matches!(
                name.as_str(),
                "workload.csv"
                    | "samples.csv"
                    | "workload.json"
                    | "check.json"
                    | "workload.pgbench"
            ) || name.starts_with("pgbench_log");
            if run_output {
                fs::rename(&p, to.join(&name))?;
            }
        }
        for f in ["tables.csv", "database.csv", "buffers.csv"] {
            let p = self.file("snapshots").join(f);
            if !p.exists() {
                continue;
            }
            let moved = to.join("snapshots").join(f);
            fs::rename(&p, &moved)?;
            let mut r = csv::Reader::from_path(&moved)?;
            let header: Vec<String> = r.headers()?.iter().map(str::to_string).collect();
            let (si, pi) = (
                header.iter().position(|c| c == "sample"),
                header.iter().position(|c| c == "phase"),
            );
            let rows: Vec<csv::StringRecord> = r.records().collect::<Result<_, _>>()?;
            let pre = |rec: &csv::StringRecord| pi.and_then(|i| rec.get(i)) == Some("pre");
            let last_pre = rows
                .iter()
                .filter(|rec| pre(rec))
                .filter_map(|rec| {
                    si.and_then(|i| rec.get(i))
                        .and_then(|s| s.parse::<i64>().ok())
                })
                .max();
            let header: Vec<&str> = header.iter().map(String::as_str).collect();
            let mut w = crate::io::CsvAppender::open(&p, &header)?;
            for rec in rows.iter().filter(|rec| pre(rec)) {
                let n = si
                    .and_then(|i| rec.get(i))
                    .and_then(|s| s.parse::<i64>().ok());
                if n == last_pre {
                    w.row(&rec.iter().collect::<Vec<_>>())?;
                }
            }
        }
        Ok(to)
    }

    /// Whether no process holds the arm's lock now (a probe: the lock file is not changed).
    pub fn lock_free(&self) -> bool {
        self.try_hold().map(|f| f.is_some()).unwrap_or(true)
    }

    /// The arm's lock if it is free, without recording a holder (`init --force` holds every
    /// arm's while it removes them). `None` when another process has it.
    pub(crate) fn try_hold(&self) -> Result<Option<fs::File>> {
        use std::os::fd::AsRawFd;
        let path = self.file("lock");
        let f = match fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Some(
                    fs::File::open(&self.path)
                        .with_context(|| format!("opening {}", self.path.display()))?,
                ))
            }
            Err(e) => return Err(e).with_context(|| format!("opening {}", path.display())),
        };
        // SAFETY: a valid open descriptor; LOCK_NB makes flock return at once.
        let free = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
        Ok(free.then_some(f))
    }

    /// Who holds the arm's lock, as its holder wrote it.
    pub(crate) fn lock_holder(&self) -> String {
        fs::read_to_string(self.file("lock"))
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "another process".into())
    }

    /// The arm's exclusive lock for one step (`<arm>/lock`, released when the process ends).
    /// Refuses, naming the holder, when another process has it.
    pub fn lock(&self, step: &str) -> Result<fs::File> {
        use std::io::{Seek, Write};
        use std::os::fd::AsRawFd;
        let path = self.file("lock");
        let mut f = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        // SAFETY: a valid open descriptor; LOCK_NB makes flock return at once.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            bail!(
                "{} is in use by {}; wait for it to finish or stop it",
                self.path.display(),
                self.lock_holder()
            );
        }
        f.set_len(0)?;
        f.rewind()?;
        write!(f, "process {} (cargo xtask {step})", std::process::id())?;
        f.flush()?;
        Ok(f)
    }
}

fn counts_lines(rel: &str) -> bool {
    rel.ends_with(".csv") || rel.ends_with(".jsonl") || rel.starts_with("pgbench_log")
}

fn line_count(p: &Path) -> Result<u64> {
    use std::io::Read;
    let mut f = fs::File::open(p).with_context(|| format!("reading {}", p.display()))?;
    let mut buf = vec![0u8; 1 << 16];
    let mut n = 0u64;
    loop {
        let k = f
            .read(&mut buf)
            .with_context(|| format!("reading {}", p.display()))?;
        if k == 0 {
            return Ok(n);
        }
        n += buf[..k].iter().filter(|&&b| b == b'\n').count() as u64;
    }
}

fn last_byte(p: &Path) -> Option<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = fs::File::open(p).ok()?;
    let len = f.metadata().ok()?.len();
    if len == 0 {
        return None;
    }
    f.seek(SeekFrom::Start(len - 1)).ok()?;
    let mut b = [0u8; 1];
    f.read_exact(&mut b).ok()?;
    Some(b[0])
}

/// Makes a label safe for a directory name.
pub(crate) fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Creates `data/runs/<study>/<YYYYMMDD-HHMMSS>-<label>/` with sweep.json and one directory per
/// arm run (`<arm>` or `<arm>-r<k>` with repeats). Refuses an existing directory unless forced.
pub fn create_sweep(
    ctx: &Ctx,
    plan: &Plan,
    label: &str,
    dir: Option<&Path>,
    force: bool,
    command_line: &str,
) -> Result<(PathBuf, Vec<RunDir>)> {
    let path = match dir {
        Some(d) => d.to_path_buf(),
        None => {
            let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S");
            ctx.runs_dir()
                .join(&plan.study.name)
                .join(format!("{stamp}-{}", slug(label)))
        }
    };
    if path.exists() {
        if !force {
            bail!(
                "run directory {} already exists; pick another --label or pass --force to reuse it",
                path.display()
            );
        }
        // --force replaces only a run directory hotlab made: one holding our sweep.json.
        if !is_sweep_dir(&path) {
            bail!(
                "--force refused: {} is not a hotlab run directory (no sweep.json of hotlab's); hotlab deletes only what it created: pick another --dir",
                path.display()
            );
        }
        // Never under a step that is running: every arm's lock is held while the directory goes.
        let mut held = vec![];
        for arm in find_arm_dirs(&path)? {
            let rd = RunDir { path: arm };
            match rd.try_hold()? {
                Some(f) => held.push(f),
                None => bail!(
                    "--force refused: arm {} is in use by {}; wait for it to finish or stop it",
                    rd.path.display(),
                    rd.lock_holder()
                ),
            }
        }
        fs::remove_dir_all(&path).with_context(|| format!("removing {}", path.display()))?;
        drop(held);
    }
    fs::create_dir_all(&path).with_context(|| format!("creating {}", path.display()))?;
    let order = plan.order();
    write_json_atomic(
        &path.join("sweep.json"),
        &json!({
            "study": plan.study.name,
            "size": plan.size_name,
            "arms": plan.arms,
            "repeats": plan.repeats,
            "sweep": plan.sweep.as_ref().map(|(t, v)| json!({"table": t, "values": v})),
            "order": order.iter().map(|(dir, _)| dir.clone()).collect::<Vec<_>>(),
            "scale": plan.scale,
            "together": plan.together,
            "command": command_line,
            "created": now_rfc3339(),
        }),
    )?;
    let mut dirs = vec![];
    for (name, arm) in order {
        let d = path.join(&name);
        fs::create_dir_all(d.join("snapshots"))?;
        let abs = fs::canonicalize(&d).unwrap_or_else(|_| d.clone());
        let database = database_name(&plan.study.name, &name, &abs);
        let plan = match serde_json::to_value(plan.arm_plan(&name, &arm, &database))? {
            Value::Object(m) => m.into_iter().collect(),
            _ => BTreeMap::new(),
        };
        let meta = Meta {
            status: Some(StepStatus::Pending),
            hotlab: Some(hotlab_info()),
            host: Some(host_info()),
            plan,
            ..Default::default()
        };
        write_json_atomic(&d.join("meta.json"), &meta)?;
        dirs.push(RunDir { path: d });
    }
    Ok((path, dirs))
}

/// PostgreSQL's limit on identifiers, in bytes (longer names are truncated by the server).
pub(crate) const MAX_IDENT_BYTES: usize = 63;

/// The database of one arm run: `hotlab_<study>_<run>_<hash of the run directory>`, lowercase
/// ASCII, the readable part shortened so the whole fits in 63 bytes. Two runs of the same arm
/// (or two checkouts) never share a database.
pub(crate) fn database_name(study: &str, run: &str, dir: &Path) -> String {
    use sha2::{Digest, Sha256};
    let hash = format!("{:x}", Sha256::digest(dir.to_string_lossy().as_bytes()));
    let tag = &hash[..10];
    let mut readable = format!("hotlab_{}_{}", slug(study), slug(run)).to_lowercase();
    readable.truncate(MAX_IDENT_BYTES - 1 - tag.len());
    format!("{readable}_{tag}")
}

/// Whether `dir` is a sweep directory hotlab created: its sweep.json parses and names a study
/// and the command that made it.
pub(crate) fn is_sweep_dir(dir: &Path) -> bool {
    read_json(&dir.join("sweep.json"))
        .map(|v| v["study"].is_string() && v["command"].is_string() && v["order"].is_array())
        .unwrap_or(false)
}

/// Every arm directory under `dir` (itself, its children, or its grandchildren), sorted.
pub fn find_arm_dirs(dir: &Path) -> Result<Vec<PathBuf>> {
    if dir.join("meta.json").exists() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let mut out = vec![];
    let rd = fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for e in rd {
        let p = e?.path();
        if p.is_dir() {
            if p.join("meta.json").exists() {
                out.push(p);
            } else if p.join("sweep.json").exists() {
                out.extend(find_arm_dirs(&p)?);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The table a sweep varies, from the sweep.json beside an arm directory.
pub(crate) fn swept_table(arm_dir: &Path) -> Option<String> {
    let sweep = read_json(&arm_dir.parent()?.join("sweep.json")).ok()?;
    sweep["sweep"]["table"].as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_arm_run_gets_its_own_database_within_63_bytes() {
        let a = database_name("spv", "ff50", Path::new("/runs/spv/1-a/ff50"));
        let b = database_name("spv", "ff50", Path::new("/runs/spv/2-b/ff50"));
        assert_ne!(a, b);
        assert_eq!(
            a,
            database_name("spv", "ff50", Path::new("/runs/spv/1-a/ff50"))
        );
        assert!(a.starts_with("hotlab_spv_ff50_"), "{a}");
        let long = "order_line100-stock90-customer90-orders90-district100-warehouse100";
        let x = database_name("hexacluster-tprocc", long, Path::new("/r/1/x"));
        let y = database_name("hexacluster-tprocc", long, Path::new("/r/2/x"));
        assert!(
            x.len() <= MAX_IDENT_BYTES && y.len() <= MAX_IDENT_BYTES,
            "{x}"
        );
        assert_ne!(
            x, y,
            "names that differ only past 63 bytes must still differ"
        );
    }
}
