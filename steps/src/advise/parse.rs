//! The columns a statement UPDATEs, read with a real SQL parser (`sqlparser`, PostgreSQL dialect;
//! pure Rust. `pg_query` 18.1 does not build on these machines: its build script runs bindgen,
//! which needs libclang, and there is none. What sqlparser cannot parse is counted and listed,
//! never dropped). Every statement
//! in the text is walked, nested ones included (data-modifying CTEs): `UPDATE … SET`,
//! `INSERT … ON CONFLICT … DO UPDATE SET`, `MERGE … WHEN MATCHED THEN UPDATE SET`, with
//! `SET (a, b) = (…)` tuples. Names are folded as PostgreSQL folds them: unquoted to lower case,
//! quoted kept.

use std::ops::ControlFlow;

use sqlparser::ast::{
    visit_statements, AssignmentTarget, Ident, MergeAction, MergeUpdateKind, ObjectName,
    ObjectNamePart, OnConflictAction, OnInsert, Statement, TableFactor, TableObject,
};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

/// One table a statement updates: (schema if written, table) and the columns SET.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Updated {
    pub(crate) schema: Option<String>,
    pub(crate) table: String,
    pub(crate) columns: Vec<String>,
}

fn fold(i: &Ident) -> String {
    match i.quote_style {
        Some(_) => i.value.clone(),
        None => i.value.to_lowercase(),
    }
}

fn parts(n: &ObjectName) -> Vec<String> {
    n.0.iter()
        .filter_map(|p| match p {
            ObjectNamePart::Identifier(i) => Some(fold(i)),
            _ => None,
        })
        .collect()
}

/// (schema, table) of a written table name.
fn table_of(n: &ObjectName) -> Option<(Option<String>, String)> {
    let p = parts(n);
    let (table, rest) = p.split_last()?;
    Some((rest.last().cloned(), table.clone()))
}

fn factor_table(t: &TableFactor) -> Option<(Option<String>, String)> {
    match t {
        TableFactor::Table { name, .. } => table_of(name),
        _ => None,
    }
}

fn columns(assignments: &[sqlparser::ast::Assignment]) -> Vec<String> {
    let mut out = vec![];
    for a in assignments {
        let names: Vec<&ObjectName> = match &a.target {
            AssignmentTarget::ColumnName(n) => vec![n],
            AssignmentTarget::Tuple(v) => v.iter().collect(),
        };
        for n in names {
            // `SET col = …`; a qualified target (`SET t.col`) names its column last.
            if let Some(c) = parts(n).last() {
                if !out.contains(c) {
                    out.push(c.clone());
                }
            }
        }
    }
    out
}

/// Every table the text updates, with its columns; Err with the parser's message when the text
/// does not parse.
pub(crate) fn updated_columns(sql: &str) -> Result<Vec<Updated>, String> {
    let stmts = Parser::parse_sql(&PostgreSqlDialect {}, sql).map_err(|e| e.to_string())?;
    let mut out: Vec<Updated> = vec![];
    let mut push = |t: Option<(Option<String>, String)>, cols: Vec<String>| {
        if let (Some((schema, table)), false) = (t, cols.is_empty()) {
            out.push(Updated {
                schema,
                table,
                columns: cols,
            });
        }
    };
    let _ = visit_statements(&stmts, |s| {
        match s {
            Statement::Update(u) => push(factor_table(&u.table.relation), columns(&u.assignments)),
            Statement::Insert(i) => {
                if let Some(OnInsert::OnConflict(oc)) = &i.on {
                    if let OnConflictAction::DoUpdate(d) = &oc.action {
                        let t = match &i.table {
                            TableObject::TableName(n) => table_of(n),
                            _ => None,
                        };
                        push(t, columns(&d.assignments));
                    }
                }
            }
            Statement::Merge(m) => {
                let mut cols = vec![];
                for c in &m.clauses {
                    if let MergeAction::Update(u) = &c.action {
                        if let MergeUpdateKind::Set(a) = &u.kind {
                            for col in columns(a) {
                                if !cols.contains(&col) {
                                    cols.push(col);
                                }
                            }
                        }
                    }
                }
                push(factor_table(&m.table), cols);
            }
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    Ok(out)
}

/// Whether a statement text may update anything at all (cheap; the parser decides what).
pub(crate) fn may_update(sql: &str) -> bool {
    let l = sql.to_lowercase();
    l.contains("update") || l.contains("merge")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(sql: &str) -> Vec<(Option<String>, String, Vec<String>)> {
        updated_columns(sql)
            .unwrap()
            .into_iter()
            .map(|u| (u.schema, u.table, u.columns))
            .collect()
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn every_kind_of_update_is_read() {
        assert_eq!(
            one("UPDATE stock SET s_quantity = $1 WHERE s_i_id = $2 AND s_w_id = $3"),
            vec![(None, "stock".into(), s(&["s_quantity"]))]
        );
        // Study 001's upsert, as pg_stat_statements normalizes it.
        assert_eq!(
            one(
                r#"INSERT INTO small_table ("group_id","user_id","team_id","activity_log_id","edited_at") VALUES (group_id_ran,user_id_ran,team_id_ran,nextval($1),now()) ON CONFLICT (group_id, user_id) DO UPDATE SET "activity_log_id"=EXCLUDED."activity_log_id","edited_at"=EXCLUDED."edited_at""#
            ),
            vec![(
                None,
                "small_table".into(),
                s(&["activity_log_id", "edited_at"])
            )]
        );
        assert_eq!(
            one("MERGE INTO public.acct a USING src s ON a.id = s.id WHEN MATCHED THEN UPDATE SET balance = a.balance + s.amt WHEN NOT MATCHED THEN INSERT (id, balance) VALUES (s.id, s.amt)"),
            vec![(Some("public".into()), "acct".into(), s(&["balance"]))]
        );
        assert_eq!(
            one("WITH moved AS (UPDATE orders SET o_carrier_id = $1 WHERE o_id = $2 RETURNING o_id) SELECT count(*) FROM moved"),
            vec![(None, "orders".into(), s(&["o_carrier_id"]))]
        );
        assert_eq!(
            one(r#"UPDATE "Sales"."Big Table" SET (a, "B") = ($1, $2), C = $3"#),
            vec![(
                Some("Sales".into()),
                "Big Table".into(),
                s(&["a", "B", "c"])
            )]
        );
        assert!(one("SELECT 1").is_empty());
        assert!(one("INSERT INTO t VALUES ($1) ON CONFLICT DO NOTHING").is_empty());
        assert!(updated_columns("UPDATE SET WHERE").is_err());
    }
}
