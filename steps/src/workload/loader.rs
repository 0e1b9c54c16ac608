//! What the template machinery of `build` needs from a workload: the build as SQL parts (or a
//! loader of its own, with its own consistency check), the row counts to verify, and the
//! template's name. Knows no workload: each room makes its `Loader`.

use anyhow::Result;
use sha2::{Digest, Sha256};

use crate::server::Server;

/// Bumped whenever a loader changes what it writes, so old templates are not reused.
const LOADER_VERSION: &str = "1";

/// A workload that loads with code of its own rather than SQL parts (TPROC-C's loader).
pub(crate) trait OwnLoad: Send + Sync {
    /// Loads everything into the empty database `db`.
    fn load(&self, server: &Server, db: &str, c: &mut postgres::Client) -> Result<()>;
    /// Its consistency check of a fresh load, beside the row counts (what it found goes into
    /// `out`).
    fn verify(
        &self,
        c: &mut postgres::Client,
        db: &str,
        out: &mut std::collections::BTreeMap<String, i64>,
    ) -> Result<()>;
}

/// What a workload's loader provides to the template machinery.
pub struct Loader {
    pub(crate) workload: &'static str,
    /// (table, expected rows; None: at least one)
    pub(crate) expected: Vec<(String, Option<i64>)>,
    /// A loader of its own (its one part is then the record of what it builds); other workloads
    /// run `parts` in order.
    pub(crate) own: Option<Box<dyn OwnLoad>>,
    /// The build as SQL, in pieces named by the file each came from (a failure names its file).
    pub(crate) parts: Vec<(String, String)>,
}

impl Loader {
    /// Runs the load in the (empty) database `db` over `c`: the SQL parts in order, or
    /// the workload's own loader (TPROC-C).
    pub(crate) fn load(&self, server: &Server, db: &str, c: &mut postgres::Client) -> Result<()> {
        if let Some(own) = &self.own {
            return own.load(server, db, c);
        }
        for (file, sql) in &self.parts {
            c.batch_execute(sql).map_err(|e| {
                anyhow::anyhow!("{file} failed: {}", crate::server::db_error_line(&e))
            })?;
        }
        Ok(())
    }

    /// The workload's own consistency check of a fresh load, beside the row counts.
    pub(crate) fn verify(
        &self,
        c: &mut postgres::Client,
        db: &str,
        out: &mut std::collections::BTreeMap<String, i64>,
    ) -> Result<()> {
        match &self.own {
            Some(own) => own.verify(c, db, out),
            None => Ok(()),
        }
    }

    /// The whole build as one SQL text (ddl.sql): its parts in order.
    pub(crate) fn ddl(&self) -> String {
        let parts: Vec<&str> = self.parts.iter().map(|(_, sql)| sql.as_str()).collect();
        parts.join("\n")
    }

    /// The template's name: workload plus a hash of everything that shapes the data.
    pub fn template_name(&self) -> String {
        let mut h = Sha256::new();
        h.update(self.workload);
        h.update(LOADER_VERSION);
        h.update(self.ddl());
        format!(
            "hotlab_tpl_{}_{}",
            self.workload,
            &format!("{:x}", h.finalize())[..10]
        )
    }
}
