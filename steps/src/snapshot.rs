//! `snapshot`: one sample of every statistics source, appended and flushed to
//! `snapshots/tables.csv` (per table and index), `snapshots/database.csv` (WAL, LSN, database,
//! I/O, checkpointer, bgwriter, statements, `server_cpu`: the CPU seconds of a server on this
//! machine, and `host`: this machine's CPU seconds by state, steal included, both from /proc) and `snapshots/buffers.csv` (shared buffers per relation, with its partitioned parent). Long format: one row per (sample, object, metric). Counters stay cumulative;
//! `analyze` computes deltas. A metric the server version lacks is absent, never invented.
//! Workloads sample during a run through `start_sampler` (a thread of its own) and close the
//! window after `wait_for_backends`.

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::ctx::Ctx;
use crate::io::{now_rfc3339, CsvAppender};
use crate::rundir::RunDir;
use crate::server::{procfs, Server};

pub(crate) const TABLES_HEADER: &[&str] = &[
    "sample", "ts", "phase", "object", "parent", "kind", "metric", "value",
];
pub(crate) const SOURCES_HEADER: &[&str] = &["sample", "ts", "phase", "object", "metric", "value"];
const TABLES_SQL: &str = include_str!("../sql/snapshot_tables.sql");
const DATABASE_SQL: &str = include_str!("../sql/snapshot_database.sql");
const BUFFERS_SQL: &str = include_str!("../sql/snapshot_buffers.sql");

/// The phase a sample belongs to: the `phase` column of the snapshot files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Pre,
    Rampup,
    Measured,
    Post,
}

impl Phase {
    pub(crate) const ALL: [Phase; 4] = [Phase::Pre, Phase::Rampup, Phase::Measured, Phase::Post];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Phase::Pre => "pre",
            Phase::Rampup => "rampup",
            Phase::Measured => "measured",
            Phase::Post => "post",
        }
    }

    /// A phase named on the command line; anything else is refused in one line.
    pub(crate) fn parse(name: &str) -> Result<Phase> {
        Phase::ALL
            .into_iter()
            .find(|p| p.as_str() == name)
            .with_context(|| {
                format!(
                    "--phase {name:?} is not a phase; use one of {}",
                    Phase::ALL.map(Phase::as_str).join(", ")
                )
            })
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A connection that takes samples into one run directory.
pub struct Sampler {
    client: postgres::Client,
    tables: CsvAppender,
    database: CsvAppender,
    buffers: CsvAppender,
    next_sample: i64,
    optional_sql: Vec<String>,
    /// Milliseconds each `take` lasted, in order (for `bench snapshot`).
    pub(crate) taken_ms: Vec<f64>,
    /// The server's postmaster, when it runs on this machine (its CPU is read from /proc).
    postmaster: Option<i32>,
}

/// This machine's CPU seconds by state since boot (/proc/stat, all cores): `busy_s` (user, nice,
/// system, irq, softirq), `iowait_s`, `idle_s`, and `steal_s`, the time the hypervisor gave
/// this machine's cores to someone else: the noise of a shared machine, measured.
pub(crate) fn host_cpu_seconds() -> Vec<(&'static str, f64)> {
    let ticks = procfs::ticks_per_s();
    let Some(line) = std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|t| t.lines().next().map(str::to_string))
    else {
        return vec![];
    };
    let f: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    if f.len() < 8 {
        return vec![];
    }
    let s = |i: usize| f[i] / ticks;
    vec![
        ("busy_s", s(0) + s(1) + s(2) + s(5) + s(6)),
        ("idle_s", s(3)),
        ("iowait_s", s(4)),
        ("steal_s", s(7)),
    ]
}

/// CPU seconds of a local server: the postmaster and every live child (user + system, with the
/// children they have reaped; exited backends are in the postmaster's reaped total), and how
/// many processes that was. A cumulative counter like the statistics views.
pub(crate) fn server_cpu_seconds(postmaster: i32) -> Option<(f64, u64)> {
    let pm = procfs::stat(postmaster).filter(|s| s.comm == "postgres")?;
    let kids = procfs::children(postmaster);
    let ticks = pm.cpu_ticks + kids.iter().map(|(_, s)| s.cpu_ticks).sum::<u64>();
    Some((ticks as f64 / procfs::ticks_per_s(), 1 + kids.len() as u64))
}

fn last_sample(path: &Path) -> i64 {
    let Ok(f) = std::fs::File::open(path) else {
        return 0;
    };
    csv::Reader::from_reader(BufReader::new(f))
        .records()
        .map_while(Result::ok)
        .last()
        .and_then(|r| r.get(0)?.parse().ok())
        .unwrap_or(0)
}

fn value_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl Sampler {
    pub fn new(server: &Server, db: &str, rd: &RunDir) -> Result<Sampler> {
        let dir: PathBuf = rd.file("snapshots");
        std::fs::create_dir_all(&dir)?;
        let mut client = server.connect(db)?;
        client.batch_execute("SET application_name = 'hotlab snapshot'")?;
        // Sources that exist only on some versions or with an extension: probe once.
        let mut optional_sql = vec![];
        let has = |c: &mut postgres::Client, rel: &str| -> Result<bool> {
            Ok(c.query_one("SELECT to_regclass($1) IS NOT NULL", &[&rel])?
                .get::<_, bool>(0))
        };
        if has(&mut client, "pg_catalog.pg_stat_checkpointer")? {
            optional_sql.push(
                "SELECT 'checkpointer'::text, to_jsonb(c) - 'stats_reset' FROM pg_stat_checkpointer c"
                    .to_string(),
            );
        }
        optional_sql.push(
            "SELECT 'bgwriter'::text, to_jsonb(b) - 'stats_reset' FROM pg_stat_bgwriter b"
                .to_string(),
        );
        if has(&mut client, "pg_stat_statements")? {
            optional_sql.push(
                "SELECT 'statements'::text, coalesce(jsonb_object_agg(key, total), '{}'::jsonb) \
                 FROM (SELECT kv.key, sum(kv.value::text::numeric) AS total \
                       FROM pg_stat_statements s, jsonb_each(to_jsonb(s) - 'userid' - 'dbid' - 'queryid' - 'toplevel') kv \
                       WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) \
                         AND jsonb_typeof(kv.value) = 'number' GROUP BY kv.key) t"
                    .to_string(),
            );
        }
        optional_sql.push(
            "SELECT 'cluster'::text, jsonb_build_object('xact_total', sum(xact_commit + xact_rollback)) \
             FROM pg_stat_database"
                .to_string(),
        );
        if has(&mut client, "district")? {
            // TPROC-C: NOPM is the growth of sum(d_next_o_id), as HammerDB counts it.
            optional_sql.push(
                "SELECT 'tprocc'::text, jsonb_build_object('d_next_o_id_sum', sum(d_next_o_id)) FROM district"
                    .to_string(),
            );
        }
        // A server on this machine: our backend is a `postgres` process whose parent is the
        // postmaster. Elsewhere (another host, a container's pid namespace) there is no such
        // process here and the source is absent.
        let backend: i32 = client.query_one("SELECT pg_backend_pid()", &[])?.get(0);
        let is_postgres = |pid: i32| procfs::stat(pid).filter(|s| s.comm == "postgres");
        let postmaster = is_postgres(backend)
            .map(|s| s.ppid)
            .filter(|pm| is_postgres(*pm).is_some());
        let next_sample = last_sample(&dir.join("database.csv")) + 1;
        Ok(Sampler {
            client,
            tables: CsvAppender::open(&dir.join("tables.csv"), TABLES_HEADER)?,
            database: CsvAppender::open(&dir.join("database.csv"), SOURCES_HEADER)?,
            buffers: CsvAppender::open(&dir.join("buffers.csv"), TABLES_HEADER)?,
            next_sample,
            optional_sql,
            taken_ms: vec![],
            postmaster,
        })
    }

    /// Takes one sample; returns how long it took.
    pub fn take(&mut self, phase: Phase) -> Result<Duration> {
        let phase = phase.as_str();
        let started = Instant::now();
        let sample = self.next_sample.to_string();
        let ts = now_rfc3339();
        // One transaction with a statistics snapshot: every source is read as of one moment.
        let mut tx = self.client.transaction()?;
        tx.batch_execute("SET LOCAL stats_fetch_consistency = snapshot")?;
        // Tables and buffers: (object, parent, kind, metrics) rows, one CSV row per metric.
        let relation_rows = |rows: Vec<postgres::Row>| -> Vec<Vec<String>> {
            let mut out = vec![];
            for r in rows {
                let (object, parent, kind): (String, String, String) =
                    (r.get(0), r.get(1), r.get(2));
                let metrics: Value = r.get(3);
                for (k, v) in metrics.as_object().into_iter().flatten() {
                    out.push(vec![
                        sample.clone(),
                        ts.clone(),
                        phase.to_string(),
                        object.clone(),
                        parent.clone(),
                        kind.clone(),
                        k.clone(),
                        value_text(v),
                    ]);
                }
            }
            out
        };
        let rows = relation_rows(tx.query(TABLES_SQL, &[]).context("sampling tables")?);
        let mut db_rows = vec![];
        let mut sources = vec![DATABASE_SQL.to_string()];
        sources.extend(self.optional_sql.iter().cloned());
        for sql in &sources {
            for r in tx
                .query(sql.as_str(), &[])
                .context("sampling server statistics")?
            {
                let object: String = r.get(0);
                let metrics: Value = r.get(1);
                for (k, v) in metrics.as_object().into_iter().flatten() {
                    db_rows.push(vec![
                        sample.clone(),
                        ts.clone(),
                        phase.to_string(),
                        object.clone(),
                        k.clone(),
                        value_text(v),
                    ]);
                }
            }
        }
        let buf_rows = relation_rows(
            tx.query(BUFFERS_SQL, &[])
                .context("sampling pg_buffercache")?,
        );
        tx.commit()?;
        for (k, v) in host_cpu_seconds() {
            db_rows.push(vec![
                sample.clone(),
                ts.clone(),
                phase.to_string(),
                "host".into(),
                k.into(),
                format!("{v:.2}"),
            ]);
        }
        if let Some((cpu, procs)) = self.postmaster.and_then(server_cpu_seconds) {
            for (k, v) in [
                ("cpu_s", format!("{cpu:.2}")),
                ("processes", procs.to_string()),
            ] {
                db_rows.push(vec![
                    sample.clone(),
                    ts.clone(),
                    phase.to_string(),
                    "server_cpu".into(),
                    k.into(),
                    v,
                ]);
            }
        }
        self.tables.rows(&rows)?;
        self.buffers.rows(&buf_rows)?;
        // database.csv last: its sample number is what the next Sampler continues from.
        self.database.rows(&db_rows)?;
        self.next_sample += 1;
        self.taken_ms.push(started.elapsed().as_secs_f64() * 1000.0);
        Ok(started.elapsed())
    }

    /// A query on the sampling connection (for waits and checks between samples).
    pub(crate) fn client(&mut self) -> &mut postgres::Client {
        &mut self.client
    }
}

pub(crate) const HOT_ROWS_HEADER: &[&str] = &[
    "ts",
    "phase",
    "table",
    "hot_rows",
    "pages_with_hot_row",
    "table_pages",
];

/// Where the rows a pgbench-script study's scripts hit sit (its `hot_rows` query: their
/// `tableoid, ctid`): how many there are, how many pages of the table (its leaves added up) hold
/// at least one, and the table's pages. Appended to hot_rows.csv with `phase` (start, end).
/// It reads the table, so it is taken only where a read cannot change what is measured: after
/// the build, before the cold reset, and after the run's closing sample.
pub(crate) fn record_hot_rows(
    c: &mut postgres::Client,
    rd: &RunDir,
    h: &crate::study::pgbench::HotRows,
    phase: &str,
) -> Result<()> {
    let sql = format!(
        "WITH h AS ({}) SELECT count(*)::bigint, \
                count(DISTINCT (tableoid, (ctid::text::point)[0]::bigint))::bigint, \
                (SELECT coalesce(sum(pg_relation_size(c.oid)), 0)::bigint \
                        / current_setting('block_size')::bigint \
                   FROM pg_class c WHERE (c.oid = to_regclass($1) AND c.relkind = 'r') \
                     OR c.oid IN (SELECT relid FROM pg_partition_tree(to_regclass($1)) WHERE isleaf)) \
           FROM h",
        h.sql.trim().trim_end_matches(';')
    );
    let r = c.query_one(&sql, &[&h.table]).map_err(|e| {
        anyhow::anyhow!(
            "{} (hot_rows) failed: {}; it must return the tableoid and ctid of the rows the scripts hit",
            h.file,
            crate::server::db_error_line(&e)
        )
    })?;
    let (rows, pages, total): (i64, i64, i64) = (r.get(0), r.get(1), r.get(2));
    let mut out = CsvAppender::open(&rd.file("hot_rows.csv"), HOT_ROWS_HEADER)?;
    out.row(&[
        now_rfc3339(),
        phase.to_string(),
        h.table.clone(),
        rows.to_string(),
        pages.to_string(),
        total.to_string(),
    ])?;
    eprintln!(
        "hotlab: hot rows ({phase}): {rows} rows on {pages} of {total} pages of {}",
        h.table
    );
    Ok(())
}

/// Microseconds since the epoch, now.
pub(crate) fn epoch_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// What the sampling thread hands back: the sampler, how many samples it took, the longest one,
/// and when the measured window began (µs since the epoch; 0 if the ramp-up never ended).
pub(crate) struct Sampled {
    pub(crate) sampler: Sampler,
    pub(crate) n: u32,
    pub(crate) max_ms: u128,
    pub(crate) measured_from_us: i64,
}

/// Samples on its own thread until told to stop: `rampup` samples every `every` during the
/// ramp-up, one `measured` sample the moment it ends (the window's start), then `measured`
/// samples every `every`. With no ramp-up the window starts now.
pub(crate) fn start_sampler(
    mut sampler: Sampler,
    every: Duration,
    rampup: Duration,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Result<Sampled>> {
    std::thread::spawn(move || {
        let started = Instant::now();
        let (mut n, mut max_ms) = (0u32, 0u128);
        let mut measured_from_us = if rampup.is_zero() { epoch_us() } else { 0 };
        let mut next = started
            + if rampup.is_zero() {
                every
            } else {
                every.min(rampup)
            };
        while !stop.load(Ordering::SeqCst) {
            let now = Instant::now();
            let took = if measured_from_us == 0 && now >= started + rampup {
                measured_from_us = epoch_us();
                next = now + every;
                Some(sampler.take(Phase::Measured)?)
            } else if now >= next {
                next += every;
                let phase = if measured_from_us == 0 {
                    Phase::Rampup
                } else {
                    Phase::Measured
                };
                Some(sampler.take(phase)?)
            } else {
                None
            };
            if let Some(took) = took {
                n += 1;
                max_ms = max_ms.max(took.as_millis());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Sampled {
            sampler,
            n,
            max_ms,
            measured_from_us,
        })
    })
}

/// Waits until no session but hotlab's own is connected to `db`, so every workload backend has
/// flushed its statistics before the closing sample.
pub(crate) fn wait_for_backends(c: &mut postgres::Client, db: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let n: i64 = c
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend' \
                 AND coalesce(application_name, '') NOT LIKE 'hotlab%'",
                &[&db],
            )?
            .get(0);
        if n == 0 {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("{n} sessions still connected to {db} 30 s after the workload ended");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Arm run directory (made by `cargo xtask init`)
    #[arg(long, env = crate::env::RUN)]
    pub run: PathBuf,
    /// Phase tag of this sample: pre, rampup, measured or post
    #[arg(long, default_value = "post")]
    pub(crate) phase: String,
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    let phase = Phase::parse(&args.phase)?;
    let rd = RunDir::open(&args.run)?;
    let db = rd.database()?;
    let step = format!("snapshot-{}", args.phase);
    crate::server::lease::step(ctx, &rd, &step, || {
        let server = Server::ensure(ctx)?;
        let mut s = Sampler::new(&server, &db, &rd)?;
        let took = s.take(phase)?;
        eprintln!(
            "hotlab: snapshot ({}) in {} ms",
            args.phase,
            took.as_millis()
        );
        Ok(())
    })
}
