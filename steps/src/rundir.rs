//! The run directory, hotlab's stable contract (README, "Where results go and how to read them"): creating a sweep with its arm
//! directories, meta.json and its status, atomic JSON writes, and append-only CSV files that are
//! flushed row by row. Reads and writes only under `data/runs/`.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{bail, Context, Result};
use serde::Serialize;
use serde_json::{json, Value};

use crate::ctx::{project_root, Ctx};
use crate::experiment::{Arm, Plan};

/// Writes JSON to a temporary file and renames it into place.
pub fn write_json_atomic<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<()> {
    let tmp = path.with_extension(format!("json.tmp{}", std::process::id()));
    let text = serde_json::to_string_pretty(value)? + "\n";
    fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("renaming into {}", path.display()))?;
    Ok(())
}

pub fn read_json(path: &Path) -> Result<Value> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// Quotes a CSV field when it needs it.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// An append-only CSV file: the header is written once, every row is flushed as it is added.
pub struct CsvAppender {
    file: fs::File,
}

impl CsvAppender {
    pub fn open(path: &Path, header: &[&str]) -> Result<CsvAppender> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        let new = !path.exists() || fs::metadata(path)?.len() == 0;
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        if new {
            writeln!(file, "{}", header.join(","))?;
        } else {
            // Only the header line: the file may be large.
            let mut first = String::new();
            std::io::BufRead::read_line(
                &mut std::io::BufReader::new(fs::File::open(path)?),
                &mut first,
            )?;
            let first = first.trim_end().to_string();
            if first != header.join(",") {
                bail!(
                    "{} has columns {first:?}, expected {:?}; it was written by another hotlab version",
                    path.display(),
                    header.join(",")
                );
            }
        }
        Ok(CsvAppender { file })
    }

    pub fn row<S: AsRef<str>>(&mut self, fields: &[S]) -> Result<()> {
        let line: Vec<String> = fields.iter().map(|f| csv_field(f.as_ref())).collect();
        writeln!(self.file, "{}", line.join(","))?;
        self.file.flush()?;
        Ok(())
    }

    /// Many rows, one write and one flush.
    pub fn rows(&mut self, rows: &[Vec<String>]) -> Result<()> {
        let mut buf = String::new();
        for r in rows {
            let line: Vec<String> = r.iter().map(|f| csv_field(f)).collect();
            buf.push_str(&line.join(","));
            buf.push('\n');
        }
        self.file.write_all(buf.as_bytes())?;
        self.file.flush()?;
        Ok(())
    }
}

/// Set by SIGINT/SIGTERM: long steps stop, write what they have, and mark the run interrupted.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Installs the Ctrl-C handler (once per process).
pub fn catch_interrupts() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
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

    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    pub fn meta(&self) -> Result<Value> {
        read_json(&self.file("meta.json"))
    }

    /// Sets one top-level key of meta.json (atomic rewrite).
    pub fn set_meta(&self, key: &str, value: Value) -> Result<()> {
        let mut m = self.meta()?;
        m[key] = value;
        write_json_atomic(&self.file("meta.json"), &m)
    }

    pub fn study_name(&self) -> Result<String> {
        Ok(self.meta()?["study"]
            .as_str()
            .unwrap_or_default()
            .to_string())
    }

    pub fn size_name(&self) -> Result<String> {
        Ok(self.meta()?["size"]
            .as_str()
            .unwrap_or_default()
            .to_string())
    }

    pub fn arm(&self) -> Result<Arm> {
        Ok(serde_json::from_value(self.meta()?["arm"].clone())?)
    }

    /// The database this arm measures (set by build).
    pub fn database(&self) -> Result<String> {
        let m = self.meta()?;
        match m["build"]["database"].as_str() {
            Some(d) => Ok(d.to_string()),
            None => bail!(
                "no build found in {}; run `cargo xtask build --run {}` first",
                self.path.display(),
                self.path.display()
            ),
        }
    }

    /// Marks the start of a step: status running, step start time.
    pub fn step_started(&self, step: &str) -> Result<()> {
        let mut m = self.meta()?;
        m["status"] = json!("running");
        m["steps"][step] = json!({ "status": "running", "start": now_rfc3339() });
        if m["start"].is_null() {
            m["start"] = json!(now_rfc3339());
        }
        write_json_atomic(&self.file("meta.json"), &m)
    }

    /// Records how a step ended. The arm's status is `complete` once its workload has run,
    /// `ready` before that, `failed` or `interrupted` when a step did not finish.
    pub fn step_finished(&self, step: &str, result: &Result<()>) -> Result<()> {
        let mut m = self.meta()?;
        let status = match result {
            Ok(()) if interrupted() => "interrupted",
            Ok(()) if self.file("workload.json").exists() => "complete",
            Ok(()) => "ready",
            Err(_) if interrupted() => "interrupted",
            Err(_) => "failed",
        };
        m["status"] = json!(status);
        m["steps"][step]["status"] = json!(if result.is_ok() && !interrupted() {
            "complete"
        } else {
            status
        });
        m["steps"][step]["end"] = json!(now_rfc3339());
        if let Err(e) = result {
            m["steps"][step]["error"] = json!(format!("{e:#}"));
        }
        m["end"] = json!(now_rfc3339());
        write_json_atomic(&self.file("meta.json"), &m)
    }

    /// Runs a step body between step_started and step_finished.
    pub fn step<F: FnOnce() -> Result<()>>(&self, step: &str, body: F) -> Result<()> {
        self.step_started(step)?;
        let mut r = body();
        if r.is_ok() && interrupted() {
            r = Err(anyhow::anyhow!(
                "interrupted; what was sampled is kept in {} (status: interrupted)",
                self.path.display()
            ));
        }
        self.step_finished(step, &r)?;
        r
    }
}

/// What the host is: CPU, cores, memory, kernel.
pub fn host_info() -> Value {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let mem_kb: Option<u64> = fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("MemTotal"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok());
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .ok();
    let hostname = fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok();
    json!({
        "hostname": hostname,
        "cpu": cpu,
        "cores": cores,
        "memory_bytes": mem_kb.map(|k| k * 1024),
        "kernel": kernel,
    })
}

/// hotlab's version and git revision.
pub fn hotlab_info() -> Value {
    let rev = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(project_root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    json!({ "version": env!("CARGO_PKG_VERSION"), "git": rev })
}

/// Makes a label safe for a directory name.
pub fn slug(s: &str) -> String {
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
        fs::remove_dir_all(&path).with_context(|| format!("removing {}", path.display()))?;
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
            "scale": plan.scale.as_ref().map(|d| d.json()),
            "command": command_line,
            "created": now_rfc3339(),
        }),
    )?;
    let mut dirs = vec![];
    for (name, arm) in order {
        let d = path.join(&name);
        fs::create_dir_all(d.join("snapshots"))?;
        write_json_atomic(
            &d.join("meta.json"),
            &json!({
                "status": "pending",
                "hotlab": hotlab_info(),
                "host": host_info(),
                "study": plan.study.name,
                "workload": plan.study.workload,
                "size": plan.size_name,
                "size_spec": plan.size,
                "scale": plan.scale.as_ref().map(|d| d.json()),
                "arm": arm,
                "run": name,
                "start": null,
                "end": null,
                "steps": {},
            }),
        )?;
        dirs.push(RunDir { path: d });
    }
    Ok((path, dirs))
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
pub fn swept_table(arm_dir: &Path) -> Option<String> {
    let sweep = read_json(&arm_dir.parent()?.join("sweep.json")).ok()?;
    sweep["sweep"]["table"].as_str().map(str::to_string)
}
