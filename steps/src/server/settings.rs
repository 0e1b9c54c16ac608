//! Server settings on a server hotlab does not own (external, compose): what differs from a
//! study's settings, the values `postgresql.auto.conf` held before hotlab changed them, and
//! putting them back. On such a server hotlab changes nothing unless asked
//! (`build --apply-server-settings`), and then restores the previous values at the end of the
//! arm (`restore-settings`, which `just arm` runs on exit, also after a failure or Ctrl-C).

use std::collections::BTreeMap;

use anyhow::{bail, Result};

use super::{BackendKind, Server};
use crate::env;
use crate::study::scale::{parse_kb, parse_s};

/// One setting where the server is not at the study's value (as meta.json records it).
pub(crate) use crate::rundir::meta::SettingDiff as Diff;

/// A setting's value in comparable terms: kB for memory, seconds for time, the text otherwise
/// (lowercased, booleans as on/off). A bare number takes the setting's unit from pg_settings
/// (`unit`, e.g. `8kB`, `s`), as PostgreSQL itself reads it.
fn normal(value: &str, unit: Option<&str>) -> String {
    let v = value.trim().trim_matches('\'');
    if let (Ok(n), Some(u)) = (v.parse::<f64>(), unit.filter(|u| !u.is_empty())) {
        let digits: String = u.chars().take_while(|c| c.is_ascii_digit()).collect();
        let mult: f64 = digits.parse().unwrap_or(1.0);
        let base = &u[digits.len()..];
        if base.ends_with('B') {
            if let Ok(kb) = parse_kb(&format!("1{base}")) {
                return format!("{}kB", n * mult * kb);
            }
        }
        if let Ok(s) = parse_s(&format!("1{base}")) {
            return format!("{}s", n * mult * s);
        }
    }
    if v.chars().any(|c| c.is_ascii_alphabetic())
        && v.chars().next().is_some_and(|c| c.is_ascii_digit())
    {
        if v.ends_with('B') {
            if let Ok(kb) = parse_kb(v) {
                return format!("{kb}kB");
            }
        }
        if let Ok(s) = parse_s(v) {
            return format!("{s}s");
        }
    }
    match v.to_lowercase().as_str() {
        "true" | "yes" | "on" => "on".into(),
        "false" | "no" | "off" => "off".into(),
        other => other.to_string(),
    }
}

impl Server {
    /// Whether hotlab owns this server (the embedded one): only there does it change settings
    /// without being asked.
    pub(crate) fn owned(&self) -> bool {
        self.kind == BackendKind::Embedded
    }

    /// The settings of `wanted` that the server is not at.
    pub(crate) fn settings_diff(&self, wanted: &BTreeMap<String, String>) -> Result<Vec<Diff>> {
        let mut c = self.connect(&self.conn.admin_db)?;
        let mut out = vec![];
        for (k, v) in wanted {
            let Some(row) = c.query_opt(
                "SELECT setting, unit, current_setting(name) FROM pg_settings WHERE name = $1",
                &[k],
            )?
            else {
                bail!("the study sets unknown server setting {k}; fix the study file");
            };
            let (setting, unit, shown): (String, Option<String>, String) =
                (row.get(0), row.get(1), row.get(2));
            if normal(&setting, unit.as_deref()) != normal(v, unit.as_deref()) {
                out.push(Diff {
                    name: k.clone(),
                    study: v.clone(),
                    server: shown,
                });
            }
        }
        Ok(out)
    }

    /// What `postgresql.auto.conf` holds for each of `names` (None: nothing, so RESET restores).
    pub(crate) fn auto_conf_values(
        &self,
        names: &[String],
    ) -> Result<BTreeMap<String, Option<String>>> {
        let mut c = self.connect(&self.conn.admin_db)?;
        let rows = c
            .query(
                "SELECT name, setting FROM pg_file_settings \
                 WHERE sourcefile LIKE '%postgresql.auto.conf' ORDER BY seqno",
                &[],
            )
            .map_err(|e| {
                let user = self.conn.user().to_string();
                let list = names.join(", ");
                anyhow::anyhow!(
                    "reading pg_file_settings, to restore the settings after the arm: {}; --apply-server-settings needs a superuser, or a superuser's GRANT SELECT ON pg_file_settings TO {user}, GRANT EXECUTE ON FUNCTION pg_show_all_file_settings() TO {user} and GRANT ALTER SYSTEM ON PARAMETER {list} TO {user}",
                    super::db_error_line(&e)
                )
            })?;
        let mut found: BTreeMap<String, String> = BTreeMap::new();
        for r in rows {
            found.insert(r.get(0), r.get(1));
        }
        Ok(names
            .iter()
            .map(|n| (n.clone(), found.get(n).cloned()))
            .collect())
    }

    /// Puts `postgresql.auto.conf` back as `previous` says, reloads, and restarts when a value
    /// needs it and the server can be restarted. Returns what it did, one line per setting.
    pub(crate) fn restore_settings(
        &self,
        previous: &BTreeMap<String, Option<String>>,
    ) -> Result<Vec<String>> {
        let mut c = self.connect(&self.conn.admin_db)?;
        let mut done = vec![];
        for (k, v) in previous {
            alter_system_set(&mut c, k, v.as_deref())?;
            done.push(match v {
                Some(v) => format!("{k} = {v}"),
                None => format!("{k} reset"),
            });
        }
        let pending = reload(&mut c)?;
        drop(c);
        if pending > 0 {
            if !self.can_restart() {
                done.push(format!(
                    "{pending} restored setting(s) take effect at the server's next restart (no {})",
                    env::RESTART_CMD
                ));
            } else {
                self.restart()?;
            }
        }
        Ok(done)
    }

    /// Whether hotlab can restart this server: its own, or an external one with
    /// HOTLAB_RESTART_CMD.
    pub(crate) fn can_restart(&self) -> bool {
        self.kind != BackendKind::External || env::var(env::RESTART_CMD).is_some()
    }

    /// Refuses, before writing anything, settings that need a restart this server cannot get.
    pub(crate) fn check_restartable(&self, wanted: &BTreeMap<String, String>) -> Result<()> {
        if self.can_restart() {
            return Ok(());
        }
        let diff = self.settings_diff(wanted)?;
        let mut c = self.connect(&self.conn.admin_db)?;
        let mut need = vec![];
        for d in diff {
            let ctx: String = c
                .query_one(
                    "SELECT context FROM pg_settings WHERE name = $1",
                    &[&d.name],
                )?
                .get(0);
            if ctx == "postmaster" {
                need.push(d.name);
            }
        }
        if !need.is_empty() {
            bail!(
                "the study's {} need a server restart, which hotlab cannot do on this external server; nothing was changed: set {} or apply them yourself",
                need.join(", "),
                env::RESTART_CMD
            );
        }
        Ok(())
    }
}

/// `ALTER SYSTEM SET k = 'v'`, or `RESET k` for None.
/// A role without the right is told the grant that gives it.
pub(crate) fn alter_system_set(c: &mut postgres::Client, k: &str, v: Option<&str>) -> Result<()> {
    let sql = match v {
        Some(v) => format!("ALTER SYSTEM SET {k} = '{}'", v.replace('\'', "''")),
        None => format!("ALTER SYSTEM RESET {k}"),
    };
    c.batch_execute(&sql).map_err(|e| {
        if e.code() == Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) {
            anyhow::anyhow!(
                "{}; a superuser allows it with GRANT ALTER SYSTEM ON PARAMETER {k} TO <hotlab's role>, or leave the server's settings alone (no --apply-server-settings)",
                super::db_error_line(&e)
            )
        } else {
            e.into()
        }
    })
}

/// Reloads the configuration; returns how many settings wait for a restart.
pub(crate) fn reload(c: &mut postgres::Client) -> Result<i64> {
    c.batch_execute("SELECT pg_reload_conf()")?;
    std::thread::sleep(std::time::Duration::from_millis(200));
    Ok(c.query_one(
        "SELECT count(*) FROM pg_settings WHERE pending_restart",
        &[],
    )?
    .get(0))
}

#[cfg(test)]
mod tests {
    use super::normal;

    #[test]
    fn values_compare_in_the_studys_terms() {
        let kb8 = Some("8kB");
        assert_eq!(normal("131072", kb8), normal("1GB", kb8));
        assert_eq!(normal("4096", Some("MB")), normal("4GB", Some("MB")));
        assert_ne!(normal("4096", Some("kB")), normal("4GB", Some("kB")));
        assert_eq!(normal("300", Some("s")), normal("5min", Some("s")));
        assert_eq!(normal("300", Some("s")), normal("300", Some("s")));
        assert_ne!(normal("4096", Some("kB")), normal("7777kB", Some("kB")));
        assert_eq!(normal("on", None), normal("true", None));
        assert_eq!(normal("0.9", None), normal("0.9", None));
        assert_ne!(normal("off", None), normal("on", None));
    }
}
