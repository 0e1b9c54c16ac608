//! advise.json as types: written by `advise`, read by `advise` (an arm whose database is gone)
//! and by `analyze`'s report. Knows nothing else, so the report can read it without importing
//! `advise`.

use serde::{Deserialize, Serialize};

/// advise.json: what `advise` found on one database, written by `advise` and read by `advise`
/// (an arm whose database is gone) and `analyze`'s report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AdviseJson {
    pub(crate) database: String,
    pub(crate) server_version: String,
    pub(crate) generated: String,
    pub(crate) stats_reset: Option<String>,
    pub(crate) shared_buffers_bytes: i64,
    pub(crate) threshold_pct: f64,
    pub(crate) test2: Test2,
    pub tables: Vec<TableAdvice>,
    pub(crate) unparsed: Vec<Unparsed>,
    pub markdown: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TableAdvice {
    pub(crate) schema: String,
    pub table: String,
    pub(crate) updates: i64,
    pub(crate) hot_pct: Option<f64>,
    pub(crate) newpage_pct: Option<f64>,
    pub(crate) samepage_nonhot_pct: Option<f64>,
    pub(crate) live_rows: i64,
    pub(crate) updates_per_row: Option<f64>,
    pub(crate) heap_bytes: i64,
    pub(crate) heap_pct_of_shared_buffers: Option<f64>,
    pub(crate) fillfactor: i32,
    /// Test 2: the columns UPDATEd (None when test 2 was not done).
    pub(crate) columns: Option<Vec<Column>>,
    /// not-updated, indexed, leave, set, try-lower, plateau
    pub(crate) verdict: String,
    /// The fillfactor to try (or keep).
    pub fillfactor_to_try: Option<u32>,
    pub decision: String,
    pub(crate) sweep: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Column {
    pub(crate) name: String,
    /// pg_stat_statements calls of the statements that SET it.
    pub(crate) calls: i64,
    pub(crate) blocked_by: Vec<Blocker>,
}

/// An index column that blocks HOT for updates of that column.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Blocker {
    pub(crate) index: String,
    pub(crate) access_method: String,
    /// key, include, expression or predicate
    pub(crate) role: String,
}

/// Whether test 2 could be done, and why not.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Test2 {
    pub(crate) done: bool,
    pub(crate) why_not: Option<String>,
    pub(crate) track: Option<String>,
    pub(crate) statements: usize,
    pub(crate) unparsed: usize,
    /// DO blocks: utility statements whose inner statements pg_stat_statements tracks on their
    /// own (with track = all); not parsed, counted here.
    pub(crate) do_blocks: usize,
}

/// A statement the parser could not read: counted and listed, never dropped.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Unparsed {
    pub(crate) query: String,
    pub(crate) calls: i64,
    pub(crate) error: String,
}
