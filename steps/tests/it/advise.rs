//! `advise` against the real embedded PostgreSQL 18: the article's selection on a TPROC-C `ci`
//! arm of each profile (advise runs inside `just arm`), its decisions on the article's own
//! figures, a purpose-built schema for every way an index blocks HOT (or does not), statements
//! inside a PL/pgSQL function with and without `track = all`, and a read-only role.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use steps::advise::{self, TableAdvice};
use steps::io::{csv_maps, read_json};
use steps::rundir::create_sweep;
use steps::server::Server;
use steps::study::PlanArgs;
use steps::testing;

fn data(name: &str) -> String {
    std::fs::read_to_string(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name),
    )
    .unwrap()
}

/// (table, column) pairs advise found, and the ones any index blocks.
fn columns(j: &Value) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut all, mut blocked) = (BTreeSet::new(), BTreeSet::new());
    for t in j["tables"].as_array().unwrap() {
        for c in t["columns"].as_array().into_iter().flatten() {
            let name = format!(
                "{}.{}",
                t["table"].as_str().unwrap(),
                c["name"].as_str().unwrap()
            );
            if !c["blocked_by"].as_array().unwrap().is_empty() {
                blocked.insert(name.clone());
            }
            all.insert(name);
        }
    }
    (all, blocked)
}

fn set(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

const HAMMERDB: &[&str] = &[
    "customer.c_balance",
    "customer.c_data",
    "district.d_next_o_id",
    "district.d_ytd",
    "order_line.ol_delivery_d",
    "orders.o_carrier_id",
    "stock.s_quantity",
    "warehouse.w_ytd",
];
const SPEC_EXTRA: &[&str] = &[
    "customer.c_delivery_cnt",
    "customer.c_payment_cnt",
    "customer.c_ytd_payment",
    "stock.s_order_cnt",
    "stock.s_remote_cnt",
    "stock.s_ytd",
];

#[test]
fn advise_on_tprocc_arms_finds_the_articles_selection() {
    let _g = testing::serial();
    let ctx = testing::ctx("advise-tprocc");
    let reference: BTreeMap<String, u32> =
        csv_maps(&data("../../../data/reference/000-newpage-ff100.csv"))
            .unwrap()
            .into_iter()
            .map(|m| {
                (
                    m["table"].clone(),
                    m["decision_fillfactor"].parse().unwrap(),
                )
            })
            .collect();
    for (size, want) in [
        ("ci", HAMMERDB.to_vec()),
        ("ci-spec", [HAMMERDB, SPEC_EXTRA].concat()),
    ] {
        let plan = PlanArgs {
            study: Some("hexacluster-tprocc".into()),
            size: Some(size.into()),
            arms: vec!["default".into()],
            repeats: 1,
            ..Default::default()
        }
        .plan(&ctx)
        .unwrap();
        let (sweep, arms) = create_sweep(&ctx, &plan, size, None, false, "test").unwrap();
        testing::arm_cycle(&ctx, &arms[0].path, false).unwrap();
        // The report carries the arm's selection table.
        let a = steps::analyze::analyze_dirs(&[arms[0].path.clone()], false).unwrap();
        steps::analyze::write(&sweep, &a).unwrap();
        let html = std::fs::read_to_string(sweep.join("report.html")).unwrap();
        assert!(
            html.contains("advise: the three tests on this arm") && html.contains("ol_delivery_d")
        );
        let j = read_json(&arms[0].path.join("advise.json")).unwrap();
        assert_eq!(j["test2"]["done"], true, "{}", j["test2"]);
        let (all, blocked) = columns(&j);
        assert_eq!(all, set(&want), "{size}");
        assert!(blocked.is_empty(), "{blocked:?}");
        // The article's selection: the four tables it tuned get a fillfactor below 100, the
        // other five stay at 100 (the exact value from one short run is the sweep's job).
        for t in j["tables"].as_array().unwrap() {
            let name = t["table"].as_str().unwrap();
            let ours = t["fillfactor_to_try"].as_u64().unwrap_or(100) as u32;
            let article = reference[name];
            assert_eq!(
                ours < 100,
                article < 100,
                "{name}: ours {ours}, article {article}: {t}"
            );
            if ours < 100 {
                let cmd = t["sweep"].as_str().unwrap();
                assert!(
                    cmd.starts_with(&format!("just sweep {name} 100 90")),
                    "{cmd}"
                );
            }
        }
        assert!(j["markdown"]
            .as_str()
            .unwrap()
            .contains("| order_line | ol_delivery_d ("));
    }
}

#[test]
fn the_decision_rule_gives_the_articles_decisions_on_its_figures() {
    let inputs: BTreeMap<String, f64> = csv_maps(&data("advise-000-inputs.csv"))
        .unwrap()
        .into_iter()
        .map(|m| (m["table"].clone(), m["updates_per_row"].parse().unwrap()))
        .collect();
    for m in csv_maps(&data("../../../data/reference/000-newpage-ff100.csv")).unwrap() {
        let name = &m["table"];
        let want: u32 = m["decision_fillfactor"].parse().unwrap();
        let (lo, hi) = (
            m["newpage_pct_min"].parse::<f64>(),
            m["newpage_pct_max"].parse::<f64>(),
        );
        let upr = inputs[name];
        let mut t = match (lo, hi) {
            (Ok(lo), Ok(hi)) => TableAdvice::new(name, 1_000_000, (lo + hi) / 2.0, Some(upr)),
            _ => TableAdvice::new(name, 0, 0.0, Some(upr)),
        };
        advise::decide(&mut t, 1.0);
        let ours = t.fillfactor_to_try.unwrap_or(100);
        assert_eq!(ours, want, "{name}: {}", t.decision);
    }
}

/// Runs `sql` in `db` as the superuser, waiting until the statistics show `table` updated.
fn workload(server: &Server, db: &str, sql: &str) {
    let mut c = server.connect(db).unwrap();
    c.batch_execute(sql).unwrap();
    drop(c); // a backend flushes its statistics when it exits
}

fn wait_for_updates(server: &Server, db: &str, tables: &[&str]) {
    let mut c = server.connect(db).unwrap();
    for _ in 0..100 {
        let n: i64 = c
            .query_one(
                "SELECT count(*) FROM pg_stat_user_tables WHERE relname = ANY($1) AND n_tup_upd > 0",
                &[&tables],
            )
            .unwrap()
            .get(0);
        if n as usize == tables.len() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the statistics never showed updates of {tables:?}");
}

fn set_track(server: &Server, value: &str) {
    let mut c = server.connect(&server.conn.admin_db).unwrap();
    c.batch_execute(&format!(
        "ALTER SYSTEM SET pg_stat_statements.track = '{value}'"
    ))
    .unwrap();
    c.batch_execute("SELECT pg_reload_conf()").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
}

const SCHEMA: &str = r#"
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE TABLE t_key (id int PRIMARY KEY, score int NOT NULL);
CREATE INDEX ON t_key (score);
CREATE TABLE t_brin (id int PRIMARY KEY, ts timestamptz NOT NULL);
CREATE INDEX ON t_brin USING brin (ts);
CREATE TABLE t_expr (id int PRIMARY KEY, email text NOT NULL);
CREATE INDEX ON t_expr (lower(email));
CREATE TABLE t_pred (id int PRIMARY KEY, status text NOT NULL, amount int NOT NULL);
CREATE INDEX ON t_pred (id) WHERE status = 'open';
CREATE TABLE t_incl (id int PRIMARY KEY, a int NOT NULL, b int NOT NULL);
CREATE INDEX ON t_incl (a) INCLUDE (b);
CREATE TABLE t_ups (k int PRIMARY KEY, v int NOT NULL, w int NOT NULL);
CREATE TABLE "Odd Name" (id int PRIMARY KEY, "Val" int NOT NULL);
CREATE TABLE t_fn (id int PRIMARY KEY, hits int NOT NULL);
CREATE TABLE t_do (id int PRIMARY KEY, x int NOT NULL);
CREATE FUNCTION bump(i int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE t_fn SET hits = hits + 1 WHERE id = i;
END $$;
INSERT INTO t_key SELECT i, 0 FROM generate_series(1, 100) i;
INSERT INTO t_brin SELECT i, now() FROM generate_series(1, 100) i;
INSERT INTO t_expr SELECT i, 'U' || i || '@x' FROM generate_series(1, 100) i;
INSERT INTO t_pred SELECT i, 'open', 0 FROM generate_series(1, 100) i;
INSERT INTO t_incl SELECT i, i, 0 FROM generate_series(1, 100) i;
INSERT INTO t_ups SELECT i, 0, 0 FROM generate_series(1, 100) i;
INSERT INTO "Odd Name" SELECT i, 0 FROM generate_series(1, 100) i;
INSERT INTO t_fn SELECT i, 0 FROM generate_series(1, 100) i;
INSERT INTO t_do SELECT i, 0 FROM generate_series(1, 100) i;
"#;

const UPDATES: &str = r#"
UPDATE t_key SET score = score + 1 WHERE id <= 50;
UPDATE t_brin SET ts = now() WHERE id <= 50;
UPDATE t_expr SET email = 'v' || id || '@x' WHERE id <= 50;
UPDATE t_pred SET status = 'closed' WHERE id <= 50;
UPDATE t_incl SET b = b + 1 WHERE id <= 50;
INSERT INTO t_ups VALUES (1, 5, 5) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v;
UPDATE "Odd Name" SET ("Val") = ROW(1) WHERE id <= 10;
SELECT bump(i) FROM generate_series(1, 20) i;
DO $$ BEGIN UPDATE t_do SET x = x + 1 WHERE id <= 5; END $$;
"#;

#[test]
fn advise_reads_every_kind_of_index_and_statement_read_only() {
    let _g = testing::serial();
    let ctx = testing::ctx("advise-schema");
    let server = Server::ensure(&ctx).unwrap();
    let db = "hotlab_advise_probe";
    server.drop_own_database(db).unwrap();
    server.create_own_database(db, None).unwrap();
    workload(&server, db, SCHEMA);
    let mut c = server.connect(db).unwrap();
    // Nothing updated yet: advise says so instead of recommending anything.
    let e = format!("{:#}", advise::advise(&mut c, db, 1.0).unwrap_err());
    assert!(e.contains("nothing to recommend yet"), "{e}");

    set_track(&server, "all");
    c.batch_execute("SELECT pg_stat_statements_reset()")
        .unwrap();
    workload(&server, db, UPDATES);
    let updated = [
        "t_key", "t_brin", "t_expr", "t_pred", "t_incl", "t_ups", "Odd Name", "t_fn", "t_do",
    ];
    wait_for_updates(&server, db, &updated);
    let (md, j) = advise_json(&mut c, db);
    assert_eq!(j["test2"]["done"], true, "{}", j["test2"]);
    // A DO block is a container: its UPDATE is tracked (and found) on its own.
    assert_eq!(j["test2"]["unparsed"], 0, "{md}");
    assert!(
        j["test2"]["do_blocks"].as_u64() >= Some(1),
        "{}",
        j["test2"]
    );
    let by = |t: &str| {
        j["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["table"] == t)
            .unwrap_or_else(|| panic!("{t} missing: {md}"))
            .clone()
    };
    let (all, blocked) = columns(&j);
    assert_eq!(
        all,
        set(&[
            "Odd Name.Val",
            "t_brin.ts",
            "t_do.x",
            "t_expr.email",
            "t_fn.hits",
            "t_incl.b",
            "t_key.score",
            "t_pred.status",
            "t_ups.v",
        ]),
        "{md}"
    );
    assert_eq!(
        blocked,
        set(&["t_expr.email", "t_incl.b", "t_key.score", "t_pred.status"]),
        "{md}"
    );
    let role = |t: &str| by(t)["columns"][0]["blocked_by"][0]["role"].clone();
    assert_eq!(role("t_key"), "key");
    assert_eq!(role("t_incl"), "include");
    assert_eq!(role("t_expr"), "expression");
    assert_eq!(role("t_pred"), "predicate");
    for t in ["t_key", "t_expr", "t_pred", "t_incl"] {
        assert_eq!(by(t)["verdict"], "indexed", "{t}");
        assert!(by(t)["decision"]
            .as_str()
            .unwrap()
            .starts_with("HOT impossible at any fillfactor"));
    }
    // BRIN summarizes: HOT stays possible.
    assert_ne!(by("t_brin")["verdict"], "indexed");
    assert!(by("t_brin")["columns"][0]["blocked_by"]
        .as_array()
        .unwrap()
        .is_empty());
    // The upsert's DO UPDATE SET and the function's UPDATE, weighted by calls.
    assert_eq!(by("t_ups")["columns"][0]["calls"], 1);
    assert_eq!(by("t_fn")["columns"][0]["calls"], 20);

    // Without track = all the function's statement is invisible: test 2 is not done, and said.
    set_track(&server, "top");
    let (md, j) = advise_json(&mut c, db);
    assert_eq!(j["test2"]["done"], false);
    let why = j["test2"]["why_not"].as_str().unwrap();
    assert!(why.contains("set pg_stat_statements.track = all"), "{why}");
    assert!(md.contains("(test 2 not done)"));
    set_track(&server, "all");

    // A role with only pg_read_all_stats and default_transaction_read_only: advise works
    // through the real binary and DATABASE_URL, so it wrote nothing.
    c.batch_execute(
        "DROP ROLE IF EXISTS hotlab_advise_ro; \
         CREATE ROLE hotlab_advise_ro LOGIN PASSWORD 'advise-ro-pw'; \
         ALTER ROLE hotlab_advise_ro SET default_transaction_read_only = on; \
         GRANT pg_read_all_stats TO hotlab_advise_ro",
    )
    .unwrap();
    let url = format!(
        "postgres://hotlab_advise_ro:advise-ro-pw@{}:{}/{db}",
        server.conn.first_host(),
        server.conn.first_port()
    );
    let out = ctx.data_dir.join("advise.json");
    let xtask = testing::xtask_binary().unwrap();
    let run = |url: &str| {
        std::process::Command::new(&xtask)
            .args(["advise", "--json"])
            .arg(&out)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("DATABASE_URL", url)
            .env(steps::env::DATA_DIR, &ctx.data_dir)
            .output()
            .unwrap()
    };
    let o = run(&url);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        stdout.contains("| t_key | score (1) | yes (score: t_key_score_idx)"),
        "{stdout}"
    );
    assert_eq!(read_json(&out).unwrap()["test2"]["done"], true);
    // As psql takes it: the connection string as the argument, or -h -p -U -d with PGPASSWORD;
    // no file unless --json (`-`: the JSON on stdout); the password never shown.
    let cwd = ctx.data_dir.join("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    let bare = |args: &[&str], pw: Option<&str>| {
        let mut c = std::process::Command::new(&xtask);
        c.current_dir(&cwd)
            .arg("advise")
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env(steps::env::DATA_DIR, &ctx.data_dir);
        if let Some(pw) = pw {
            c.env("PGPASSWORD", pw);
        }
        let o = c.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.status.success(), "{args:?}: {text}");
        assert!(
            !text.contains("advise-ro-pw"),
            "the password was shown: {text}"
        );
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    let stdout = bare(&[&url], None);
    assert!(stdout.contains("| t_key | score (1) |"), "{stdout}");
    assert!(
        !cwd.join("advise.json").exists(),
        "advise wrote a file unasked"
    );
    let port = server.conn.first_port().to_string();
    let host = server.conn.first_host();
    let stdout = bare(
        &[
            "-h",
            &host,
            "-p",
            &port,
            "-U",
            "hotlab_advise_ro",
            "-d",
            db,
            "--json",
            "-",
        ],
        Some("advise-ro-pw"),
    );
    let j: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(j["test2"]["done"], true);
    assert!(std::fs::read_dir(&cwd).unwrap().next().is_none());
    // Without the grant: one line naming it.
    c.batch_execute("REVOKE pg_read_all_stats FROM hotlab_advise_ro")
        .unwrap();
    let o = run(&url);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("GRANT pg_read_all_stats TO hotlab_advise_ro"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // No connection settings at all: libpq's defaults, the local socket (nothing listens there).
    let o = std::process::Command::new(&xtask)
        .arg("advise")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env(steps::env::DATA_DIR, &ctx.data_dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("/tmp:5432") && err.trim().lines().count() == 1,
        "{err}"
    );
    drop(c);
    let mut admin = server.connect(&server.conn.admin_db).unwrap();
    admin
        .batch_execute("DROP ROLE IF EXISTS hotlab_advise_ro")
        .ok();
    server.drop_own_database(db).unwrap();
}

/// `advise` on `db`: its Markdown, and advise.json as written.
fn advise_json(c: &mut postgres::Client, db: &str) -> (String, serde_json::Value) {
    let a = advise::advise(c, db, 1.0).unwrap();
    (a.markdown.clone(), serde_json::to_value(&a).unwrap())
}
