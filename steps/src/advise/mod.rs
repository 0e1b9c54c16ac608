//! `advise`: study 000's three-test filter ("Where HOT updates help, and how we picked the
//! tables") on any PostgreSQL 16 or later, read-only. (1) Is the table UPDATEd at all? (2) Are the
//! UPDATEd columns — read from the SET clauses of `pg_stat_statements` with a SQL parser,
//! weighted by calls — covered by an index that blocks HOT (key and INCLUDE columns, columns of
//! index expressions and partial-index predicates; BRIN, a summarizing index, does not block it
//! since 16)? (3) Is HOT failing (`n_tup_newpage_upd`)? The decision is the sweep's own rule
//! (`analyze::ladder::recommend`) on the one fillfactor the table has, so the two never disagree,
//! and names the `just sweep` that confirms it. Everything runs in one READ ONLY transaction and
//! needs no more than `pg_read_all_stats`; nothing is created, altered or reset. Writes
//! advise.json (the arm directory with `--run`) and prints the selection table.

pub(crate) mod parse;

pub mod files;

pub use files::{AdviseJson, TableAdvice};
use files::{Blocker, Column, Test2, Unparsed};

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use crate::analyze::ladder::{recommend, Rung};
use crate::analyze::{md_table, num, DEFAULT_THRESHOLD};
use crate::ctx::Ctx;
use crate::io::{now_rfc3339, write_json_atomic};
use crate::rundir::RunDir;
use crate::server::{db_error_line, DbState, Server};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A connection string, as psql takes it (`postgres://…` or `host=… dbname=…`); without it:
    /// DATABASE_URL, else PG*
    pub(crate) conninfo: Option<String>,
    /// Server host (overrides the connection string and PGHOST)
    #[arg(short = 'h', long)]
    pub host: Option<String>,
    /// Server port
    #[arg(short = 'p', long)]
    pub(crate) port: Option<u16>,
    /// User name
    #[arg(short = 'U', long)]
    pub(crate) username: Option<String>,
    /// Database name
    #[arg(short = 'd', long)]
    pub(crate) dbname: Option<String>,
    /// One of hotlab's own arms (its database must still exist: `just arm` runs advise before
    /// vacuum-timing drops it), instead of a connection
    #[arg(long, conflicts_with_all = ["conninfo", "host", "port", "username", "dbname"])]
    pub run: Option<PathBuf>,
    /// Write advise.json to FILE (`-`: to stdout, instead of the table). Default: with --run,
    /// the arm directory's advise.json; otherwise no file
    #[arg(long, value_name = "FILE", alias = "out")]
    pub(crate) json: Option<PathBuf>,
    /// The new-page share (percent of updates) at or below which a table needs nothing (the
    /// sweep's threshold)
    #[arg(long, default_value_t = DEFAULT_THRESHOLD, value_parser = crate::study::bounds::parse_percent)]
    pub threshold: f64,
    /// Print help (`-h` is the host, as in psql)
    #[arg(long, action = clap::ArgAction::Help)]
    pub(crate) help: Option<bool>,
}

/// The connection advise makes without `--run`: the connection string argument (else
/// DATABASE_URL) and psql's flags, then the service file, `PG*` and libpq's defaults, as psql
/// resolves them. Never shown with its password.
fn connection(args: &Args) -> Result<crate::server::ConnInfo> {
    let flags = crate::server::conn::Flags {
        host: args.host.clone(),
        port: args.port,
        user: args.username.clone(),
        dbname: args.dbname.clone(),
    };
    let (text, what) = match &args.conninfo {
        Some(s) => (Some(s.clone()), "the connection string"),
        None => (crate::env::var(crate::env::DATABASE_URL), "DATABASE_URL"),
    };
    let mut c = crate::server::ConnInfo::resolve(text.as_deref(), what, &flags)?;
    // psql's database: the one named, else the user's name (libpq's default), not `postgres`.
    c.admin_db = c.get("dbname").unwrap_or_default().to_string();
    Ok(c)
}

impl TableAdvice {
    /// A table as the three tests see it, before the decision (for `decide`).
    pub fn new(table: &str, updates: i64, newpage_pct: f64, updates_per_row: Option<f64>) -> Self {
        TableAdvice {
            schema: "public".into(),
            table: table.into(),
            updates,
            hot_pct: Some(100.0 - newpage_pct),
            newpage_pct: Some(newpage_pct),
            samepage_nonhot_pct: Some(0.0),
            live_rows: 0,
            updates_per_row,
            heap_bytes: 0,
            heap_pct_of_shared_buffers: None,
            fillfactor: 100,
            columns: Some(vec![]),
            verdict: String::new(),
            fillfactor_to_try: None,
            decision: String::new(),
            sweep: None,
        }
    }
}

struct Raw {
    schema: String,
    table: String,
    upd: i64,
    hot: i64,
    newpage: i64,
    live: i64,
    heap: i64,
    ff: i32,
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    let (conn, label, out) = match &args.run {
        Some(dir) => {
            let rd = RunDir::open(dir)?;
            let stored: Option<AdviseJson> = crate::io::read_json(&rd.file("advise.json"))
                .ok()
                .and_then(|v| serde_json::from_value(v).ok());
            let db = match (rd.database(), &stored) {
                (Ok(db), _) => db,
                // The arm's database is gone, but `just arm` advised on it after the run.
                (Err(_), Some(j)) => {
                    println!("{}", j.markdown);
                    eprintln!(
                        "hotlab: advise as recorded after the run ({}); the arm's database was dropped since",
                        j.generated
                    );
                    return Ok(());
                }
                (Err(e), None) => return Err(e),
            };
            let server = Server::ensure(ctx)?;
            if server.database_state(&db)? == DbState::Missing {
                bail!(
                    "{db} is gone (vacuum-timing drops an arm's database); run advise before it, as `just arm` does, or keep it: HOTLAB_KEEP_DB=1 just arm {}",
                    dir.display()
                );
            }
            (
                server.conn.with_dbname(&db),
                format!("{db} ({})", dir.display()),
                Some(args.json.clone().unwrap_or_else(|| rd.file("advise.json"))),
            )
        }
        None => {
            let conn = connection(args)?;
            let db = conn.admin_db.clone();
            let label = format!(
                "{db} at {} as {} (sslmode={})",
                conn.endpoint(),
                conn.user(),
                conn.sslmode()
            );
            (conn, label, args.json.clone())
        }
    };
    let db = conn.get("dbname").unwrap_or_default().to_string();
    let mut client = crate::server::tls::connect(&conn, conn.config(&db))
        .map_err(|e| anyhow::anyhow!("connecting to {label}: {e:#}"))?;
    let json = advise(&mut client, &label, args.threshold)?;
    match out {
        Some(p) if p.as_os_str() == "-" => println!("{}", serde_json::to_string_pretty(&json)?),
        Some(p) => {
            write_json_atomic(&p, &json)?;
            println!("{}", json.markdown);
            eprintln!("hotlab: advise: {}", p.display());
        }
        None => println!("{}", json.markdown),
    }
    Ok(())
}

/// The three tests on the connected database, in one READ ONLY transaction.
pub fn advise(client: &mut postgres::Client, label: &str, threshold: f64) -> Result<AdviseJson> {
    let mut tx = client
        .build_transaction()
        .read_only(true)
        .start()
        .context("starting a read-only transaction")?;
    let version_text = check_server(&mut tx)?;
    let shared_buffers: i64 = tx
        .query_one(
            "SELECT setting::bigint * current_setting('block_size')::bigint FROM pg_settings WHERE name = 'shared_buffers'",
            &[],
        )?
        .get(0);
    let stats_reset: Option<String> = tx
        .query_one(
            "SELECT stats_reset::text FROM pg_stat_database WHERE datname = current_database()",
            &[],
        )?
        .get(0);
    let raws = table_stats(&mut tx)?;
    if raws.iter().all(|r| r.upd == 0) {
        bail!(
            "no table of {label} has been updated since its statistics were reset ({}): nothing to recommend yet; run the workload, then advise",
            stats_reset.as_deref().unwrap_or("never")
        );
    }
    let blockers = index_columns(&mut tx)?;
    let (test2, statements, unparsed) = statements(&mut tx)?;
    let search_path: Vec<String> = tx
        .query_one("SELECT current_schemas(false)::text[]", &[])?
        .get(0);
    tx.commit()?;
    let set = columns_set(&statements, &search_path, &raws);
    let mut tables: Vec<TableAdvice> = raws
        .iter()
        .map(|r| {
            let key = (r.schema.clone(), r.table.clone());
            let columns = test2.done.then(|| {
                set.get(&key)
                    .map(|cols| {
                        cols.iter()
                            .map(|(c, calls)| Column {
                                name: c.clone(),
                                calls: *calls,
                                blocked_by: blockers
                                    .get(&(key.0.clone(), key.1.clone(), c.clone()))
                                    .cloned()
                                    .unwrap_or_default(),
                            })
                            .collect::<Vec<_>>()
                    })
                    .unwrap_or_default()
            });
            let mut t = r.advice(shared_buffers, columns);
            decide(&mut t, threshold);
            t
        })
        .collect();
    tables.sort_by(|a, b| {
        b.updates
            .cmp(&a.updates)
            .then(a.schema.cmp(&b.schema))
            .then(a.table.cmp(&b.table))
    });
    let markdown = markdown(label, &version_text, &test2, &tables, &unparsed);
    Ok(AdviseJson {
        database: label.to_string(),
        server_version: version_text,
        generated: now_rfc3339(),
        stats_reset,
        shared_buffers_bytes: shared_buffers,
        threshold_pct: threshold,
        test2,
        tables,
        unparsed,
        markdown,
    })
}

/// The server is 16 or later and the role sees other sessions' statistics; its version text.
fn check_server(tx: &mut postgres::Transaction) -> Result<String> {
    let version: i32 = tx
        .query_one("SELECT current_setting('server_version_num')::int", &[])?
        .get(0);
    let version_text: String = tx.query_one("SHOW server_version", &[])?.get(0);
    if version < 160000 {
        bail!("PostgreSQL {version_text} is too old for advise: it needs 16 or later (n_tup_newpage_upd, and BRIN no longer blocking HOT, are 16's)");
    }
    let r = tx.query_one(
        "SELECT current_user::text, pg_has_role(current_user, 'pg_read_all_stats', 'MEMBER'), \
                (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)",
        &[],
    )?;
    let (user, stats_role, superuser): (String, bool, bool) = (r.get(0), r.get(1), r.get(2));
    if !stats_role && !superuser {
        bail!("role {user} is not a member of pg_read_all_stats (other sessions' statements and statistics are hidden from it): GRANT pg_read_all_stats TO {user}");
    }
    Ok(version_text)
}

/// Every ordinary table's update counters, live rows, heap size and fillfactor.
fn table_stats(tx: &mut postgres::Transaction) -> Result<Vec<Raw>> {
    Ok(tx
        .query(
            "SELECT s.schemaname::text, s.relname::text, s.n_tup_upd, s.n_tup_hot_upd, \
                    s.n_tup_newpage_upd, s.n_live_tup, pg_relation_size(s.relid), \
                    coalesce((SELECT substr(o, 12)::int FROM unnest(c.reloptions) o \
                              WHERE o LIKE 'fillfactor=%'), 100) \
             FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid \
             WHERE c.relkind = 'r' ORDER BY 1, 2",
            &[],
        )?
        .iter()
        .map(|r| Raw {
            schema: r.get(0),
            table: r.get(1),
            upd: r.get(2),
            hot: r.get(3),
            newpage: r.get(4),
            live: r.get(5),
            heap: r.get(6),
            ff: r.get(7),
        })
        .collect())
}

/// (schema, table) → column → calls of the statements that SET it; an unqualified table is the
/// first of the search path that has it.
fn columns_set(
    statements: &Statements,
    search_path: &[String],
    raws: &[Raw],
) -> BTreeMap<(String, String), BTreeMap<String, i64>> {
    let mut set: BTreeMap<(String, String), BTreeMap<String, i64>> = BTreeMap::new();
    for (u, calls) in statements {
        let schema = match &u.schema {
            Some(s) => Some(s.clone()),
            None => search_path
                .iter()
                .find(|s| raws.iter().any(|r| &r.schema == *s && r.table == u.table))
                .cloned(),
        };
        let Some(schema) = schema else { continue };
        let cols = set.entry((schema, u.table.clone())).or_default();
        for c in &u.columns {
            *cols.entry(c.clone()).or_default() += calls;
        }
    }
    set
}

impl Raw {
    /// The table as the three tests see it, before `decide`.
    fn advice(&self, shared_buffers: i64, columns: Option<Vec<Column>>) -> TableAdvice {
        let r = self;
        let pct = |x: i64| (r.upd > 0).then(|| 100.0 * x as f64 / r.upd as f64);
        TableAdvice {
            schema: r.schema.clone(),
            table: r.table.clone(),
            updates: r.upd,
            hot_pct: pct(r.hot),
            newpage_pct: pct(r.newpage),
            samepage_nonhot_pct: pct(r.upd - r.hot - r.newpage),
            live_rows: r.live,
            updates_per_row: (r.live > 0).then(|| r.upd as f64 / r.live as f64),
            heap_bytes: r.heap,
            heap_pct_of_shared_buffers: (shared_buffers > 0)
                .then(|| 100.0 * r.heap as f64 / shared_buffers as f64),
            fillfactor: r.ff,
            columns,
            verdict: String::new(),
            fillfactor_to_try: None,
            decision: String::new(),
            sweep: None,
        }
    }
}

/// Per (schema, table, column): the indexes whose key, INCLUDE list, expressions or predicate
/// use it; summarizing indexes (BRIN) are left out: they do not block HOT on 16 and later.
fn index_columns(
    tx: &mut postgres::Transaction,
) -> Result<BTreeMap<(String, String, String), Vec<Blocker>>> {
    let rows = tx.query(
        r#"WITH idx AS (
             SELECT i.indexrelid, i.indrelid, i.indkey::int2[] AS keys, i.indnkeyatts,
                    pg_get_expr(i.indexprs, i.indrelid) AS exprs, ci.relname::text AS name,
                    am.amname::text AS am, n.nspname::text AS schema, ct.relname::text AS tbl
             FROM pg_index i
             JOIN pg_class ci ON ci.oid = i.indexrelid
             JOIN pg_class ct ON ct.oid = i.indrelid
             JOIN pg_am am ON am.oid = ci.relam
             JOIN pg_namespace n ON n.oid = ct.relnamespace
             WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
               AND n.nspname NOT LIKE 'pg_toast%'
           ), cols AS (
             SELECT idx.indexrelid, k.attnum,
                    CASE WHEN k.ord <= idx.indnkeyatts THEN 'key' ELSE 'include' END AS role
             FROM idx, unnest(idx.keys) WITH ORDINALITY AS k(attnum, ord)
             WHERE k.attnum > 0
             UNION
             SELECT idx.indexrelid, d.refobjsubid::int2,
                    CASE WHEN idx.exprs ~ ('\m' || a.attname || '\M') THEN 'expression'
                         ELSE 'predicate' END
             FROM idx
             JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = idx.indexrelid
                             AND d.refclassid = 'pg_class'::regclass AND d.refobjid = idx.indrelid
                             AND d.refobjsubid > 0
             JOIN pg_attribute a ON a.attrelid = idx.indrelid AND a.attnum = d.refobjsubid
             WHERE d.refobjsubid <> ALL (idx.keys)
           )
           SELECT idx.schema, idx.tbl, a.attname::text, idx.name, idx.am, cols.role
           FROM cols JOIN idx USING (indexrelid)
           JOIN pg_attribute a ON a.attrelid = idx.indrelid AND a.attnum = cols.attnum
           WHERE idx.am <> 'brin'
           ORDER BY 1, 2, 3, 4"#,
        &[],
    )?;
    let mut out: BTreeMap<(String, String, String), Vec<Blocker>> = BTreeMap::new();
    for r in rows {
        out.entry((r.get(0), r.get(1), r.get(2)))
            .or_default()
            .push(Blocker {
                index: r.get(3),
                access_method: r.get(4),
                role: r.get(5),
            });
    }
    Ok(out)
}

type Statements = Vec<(parse::Updated, i64)>;

/// pg_stat_statements of this database: the updates it saw, or why test 2 cannot be done.
fn statements(tx: &mut postgres::Transaction) -> Result<(Test2, Statements, Vec<Unparsed>)> {
    Ok(match tracked(tx)? {
        Ok((rows, track)) => parse_statements(rows, track),
        Err((why, track)) => (
            Test2 {
                done: false,
                why_not: Some(why),
                track,
                statements: 0,
                unparsed: 0,
                do_blocks: 0,
            },
            vec![],
            vec![],
        ),
    })
}

/// pg_stat_statements' (query, calls) of this database and its `track` setting; or why test 2
/// cannot use them (and the setting).
type Tracked = std::result::Result<(Vec<(String, i64)>, Option<String>), (String, Option<String>)>;

fn tracked(tx: &mut postgres::Transaction) -> Result<Tracked> {
    let schema: Option<String> = tx
        .query_opt(
            "SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_stat_statements'",
            &[],
        )?
        .map(|r| r.get(0));
    let Some(schema) = schema else {
        return Ok(Err((
            "pg_stat_statements is not installed in this database: CREATE EXTENSION pg_stat_statements (with shared_preload_libraries = 'pg_stat_statements'); test 2 not done".into(),
            None,
        )));
    };
    let track: Option<String> = tx
        .query_one(
            "SELECT current_setting('pg_stat_statements.track', true)",
            &[],
        )?
        .get(0);
    // A failed query would abort the transaction: read inside a savepoint.
    let mut sp = tx.savepoint("pss")?;
    let rows = sp.query(
        &format!(
            "SELECT query, calls FROM {schema}.pg_stat_statements \
             WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) \
               AND query IS NOT NULL"
        ),
        &[],
    );
    let rows = match rows {
        Ok(rows) => {
            sp.commit()?;
            rows
        }
        Err(e) => {
            drop(sp);
            return Ok(Err((
                format!(
                    "pg_stat_statements cannot be read ({}): add it to shared_preload_libraries and restart; test 2 not done",
                    db_error_line(&e)
                ),
                track,
            )));
        }
    };
    let functions: i64 = tx
        .query_one(
            "SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace \
             JOIN pg_language l ON l.oid = p.prolang \
             WHERE l.lanname = 'plpgsql' AND n.nspname NOT IN ('pg_catalog', 'information_schema')",
            &[],
        )?
        .get(0);
    let do_blocks = rows.iter().any(|r| is_do_block(&r.get::<_, String>(0)));
    if track.as_deref() != Some("all") && (functions > 0 || do_blocks) {
        let what = if functions > 0 {
            format!("{functions} PL/pgSQL function(s) exist")
        } else {
            "DO blocks run".to_string()
        };
        return Ok(Err((
            format!(
                "pg_stat_statements.track is {} and {what}: the statements inside them are invisible; set pg_stat_statements.track = all (ALTER SYSTEM, reload), run the workload, then advise; test 2 not done",
                track.as_deref().unwrap_or("unset")
            ),
            track,
        )));
    }
    Ok(Ok((
        rows.iter().map(|r| (r.get(0), r.get(1))).collect(),
        track,
    )))
}

/// The UPDATEs among the statements, the ones the parser could not read, and test 2's counts.
fn parse_statements(
    rows: Vec<(String, i64)>,
    track: Option<String>,
) -> (Test2, Statements, Vec<Unparsed>) {
    let mut found = vec![];
    let mut unparsed = vec![];
    let mut do_blocks = 0;
    let n = rows.len();
    for r in rows {
        let (q, calls) = r;
        if is_do_block(&q) {
            do_blocks += 1;
            continue;
        }
        if !parse::may_update(&q) {
            continue;
        }
        match parse::updated_columns(&q) {
            Ok(v) => found.extend(v.into_iter().map(|u| (u, calls))),
            Err(e) => unparsed.push(Unparsed {
                query: q,
                calls,
                error: e,
            }),
        }
    }
    (
        Test2 {
            done: true,
            why_not: None,
            track,
            statements: n,
            unparsed: unparsed.len(),
            do_blocks,
        },
        found,
        unparsed,
    )
}

fn is_do_block(q: &str) -> bool {
    let l = q.trim_start().to_lowercase();
    l.starts_with("do ") || l.starts_with("do$") || l.starts_with("do\n")
}

/// The decision: test 1, then test 2's blocking index, then the sweep's rule on the one rung.
pub fn decide(t: &mut TableAdvice, threshold: f64) {
    let name = format!("{}.{}", t.schema, t.table);
    if t.updates == 0 {
        t.verdict = "not-updated".into();
        t.decision = format!("not updated: leave at {}", t.fillfactor);
        return;
    }
    let blocked: Vec<String> = t
        .columns
        .iter()
        .flatten()
        .flat_map(|c| {
            c.blocked_by
                .iter()
                .map(move |b| format!("{} in {} ({})", c.name, b.index, b.role))
        })
        .collect();
    if !blocked.is_empty() {
        t.verdict = "indexed".into();
        t.decision = format!(
            "HOT impossible at any fillfactor: {}; change the index, not the fillfactor",
            blocked.join(", ")
        );
        return;
    }
    let rung = Rung {
        fillfactor: t.fillfactor.clamp(10, 100) as u32,
        newpage_pct: t.newpage_pct.unwrap_or(0.0),
        samepage_nonhot_pct: t.samepage_nonhot_pct.unwrap_or(0.0),
        updates_per_row: t.updates_per_row,
    };
    let rec = recommend(&name, std::slice::from_ref(&rung), threshold);
    t.verdict = rec.verdict.replace(' ', "-");
    match rec.verdict {
        "try lower" => {
            let to = first_value(rung.fillfactor, rung.newpage_pct);
            let values: Vec<String> = (0..)
                .map(|k| rung.fillfactor as i64 - 10 * k)
                .take_while(|v| *v >= (to as i64 - 10).max(10))
                .map(|v| v.to_string())
                .collect();
            t.fillfactor_to_try = Some(to);
            t.sweep = Some(format!("just sweep {} {}", t.table, values.join(" ")));
            t.decision = format!(
                "fillfactor {to}: {:.2} % of updates moved to a new page at {}; confirm with `{}`",
                rung.newpage_pct,
                rung.fillfactor,
                t.sweep.as_deref().unwrap_or_default()
            );
        }
        "indexed" => {
            t.decision = format!(
                "HOT impossible at any fillfactor: {:.2} % of updates stayed on their page and were not HOT (an indexed column changes)",
                rung.samepage_nonhot_pct
            );
        }
        "leave" => {
            t.fillfactor_to_try = Some(rung.fillfactor);
            t.decision = format!(
                "left at {}: {:.0} updates per row, {:.2} % new-page; pruning keeps it healthy",
                rung.fillfactor,
                t.updates_per_row.unwrap_or_default(),
                rung.newpage_pct
            );
        }
        _ => {
            t.fillfactor_to_try = rec.fillfactor.or(Some(rung.fillfactor));
            t.decision = format!(
                "left at {}: {:.2} % new-page, at most {threshold} %",
                rung.fillfactor, rung.newpage_pct
            );
        }
    }
}

/// The first value to try from one rung: ten points lower per twenty points of new-page share
/// (the article's order_line, 20–31.5 %, took 80; orders, stock and customer, under 20 %, 90).
pub(crate) fn first_value(ff: u32, newpage_pct: f64) -> u32 {
    let steps = (newpage_pct / 20.0).ceil().max(1.0) as u32;
    ff.saturating_sub(10 * steps).max(10)
}

fn markdown(
    label: &str,
    version: &str,
    test2: &Test2,
    tables: &[TableAdvice],
    unparsed: &[Unparsed],
) -> String {
    let mut md = format!("## advise: {label} (PostgreSQL {version})\n\n");
    match &test2.why_not {
        Some(why) => md.push_str(&format!("**Test 2 not done.** {why}.\n\n")),
        None => md.push_str(&format!(
            "Test 2 read {} statements of pg_stat_statements (track = {}){}; {} could not be parsed{}.\n\n",
            test2.statements,
            test2.track.as_deref().unwrap_or("?"),
            if test2.do_blocks > 0 {
                format!(
                    ", {} of them DO blocks, whose inner statements it tracks on their own",
                    test2.do_blocks
                )
            } else {
                String::new()
            },
            test2.unparsed,
            if test2.unparsed > 0 { " (listed below)" } else { "" }
        )),
    }
    let rows: Vec<Vec<String>> = tables
        .iter()
        .map(|t| {
            let (cols, indexed) = match &t.columns {
                None => ("(test 2 not done)".to_string(), "?".to_string()),
                Some(c) if c.is_empty() => {
                    let none = if t.updates > 0 { "(none seen)" } else { "none" };
                    (none.to_string(), "–".to_string())
                }
                Some(c) => (
                    c.iter()
                        .map(|c| format!("{} ({})", c.name, c.calls))
                        .collect::<Vec<_>>()
                        .join(", "),
                    {
                        let b: Vec<String> = c
                            .iter()
                            .flat_map(|c| {
                                c.blocked_by
                                    .iter()
                                    .map(move |b| format!("{}: {}", c.name, b.index))
                            })
                            .collect();
                        if b.is_empty() {
                            "no".to_string()
                        } else {
                            format!("yes ({})", b.join(", "))
                        }
                    },
                ),
            };
            vec![
                t.table.clone(),
                cols,
                indexed,
                t.updates.to_string(),
                num(t.hot_pct, 2),
                num(t.newpage_pct, 2),
                num(t.updates_per_row, 2),
                num(t.heap_pct_of_shared_buffers, 1),
                t.fillfactor.to_string(),
                t.decision.clone(),
            ]
        })
        .collect();
    md.push_str(&md_table(
        &[
            "table",
            "columns UPDATEd (calls)",
            "indexed?",
            "updates",
            "HOT %",
            "new-page %",
            "updates/row",
            "heap % of shared_buffers",
            "fillfactor",
            "decision",
        ],
        &rows,
    ));
    if !unparsed.is_empty() {
        md.push_str(&format!(
            "\nStatements the parser could not read ({}; their columns are not counted):\n\n",
            unparsed.len()
        ));
        for u in unparsed.iter().take(10) {
            md.push_str(&format!(
                "- {} calls: `{}` ({})\n",
                u.calls,
                u.query
                    .replace('\n', " ")
                    .chars()
                    .take(160)
                    .collect::<String>(),
                u.error
            ));
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_values_follow_the_articles_choices() {
        assert_eq!(first_value(100, 25.75), 80);
        assert_eq!(first_value(100, 10.85), 90);
        assert_eq!(first_value(100, 0.5), 90);
        assert_eq!(first_value(15, 80.0), 10);
    }
}
