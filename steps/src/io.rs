//! File I/O every module shares: atomic JSON writes, JSON reads, and append-only CSV files that
//! are flushed row by row (raw samples survive a crash). A leaf: imports nothing from the crate.

use std::fs;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::Serialize;
use serde_json::Value;

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

/// An append-only CSV file (RFC 4180 quoting, the `csv` crate): the header is written once,
/// every row is flushed as it is added.
pub struct CsvAppender {
    out: csv::Writer<fs::File>,
}

impl CsvAppender {
    pub fn open(path: &Path, header: &[&str]) -> Result<CsvAppender> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        let new = !path.exists() || fs::metadata(path)?.len() == 0;
        if !new {
            // Only the header record: the file may be large.
            let mut r = csv::ReaderBuilder::new()
                .has_headers(false)
                .from_path(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let first: Vec<String> = match r.records().next() {
                Some(rec) => rec?.iter().map(str::to_string).collect(),
                None => vec![],
            };
            if first != header {
                bail!(
                    "{} has columns {:?}, expected {:?}; it was written by another hotlab version",
                    path.display(),
                    first.join(","),
                    header.join(",")
                );
            }
        }
        let file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        let mut out = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(file);
        if new {
            out.write_record(header)?;
            out.flush()?;
        }
        Ok(CsvAppender { out })
    }

    pub fn row<S: AsRef<str>>(&mut self, fields: &[S]) -> Result<()> {
        self.out.write_record(fields.iter().map(|f| f.as_ref()))?;
        self.out.flush()?;
        Ok(())
    }

    /// Many rows, one flush.
    pub fn rows(&mut self, rows: &[Vec<String>]) -> Result<()> {
        for r in rows {
            self.out.write_record(r)?;
        }
        self.out.flush()?;
        Ok(())
    }
}

/// Every record of a CSV text with a header, as header → value maps.
pub fn csv_maps(text: &str) -> Result<Vec<std::collections::BTreeMap<String, String>>> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = r.headers()?.iter().map(str::to_string).collect();
    let mut out = vec![];
    for rec in r.records() {
        let rec = rec?;
        out.push(
            header
                .iter()
                .cloned()
                .zip(rec.iter().map(str::to_string))
                .collect(),
        );
    }
    Ok(out)
}

pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_object_name_round_trips() {
        let dir = std::env::temp_dir().join(format!("hotlab-io-{}", std::process::id()));
        let p = dir.join("t.csv");
        let _ = fs::remove_dir_all(&dir);
        let names = ["plain", "we,ird", "quo\"te", "both,\"x\"", "new\nline"];
        let mut w = CsvAppender::open(&p, &["object", "value"]).unwrap();
        for n in names {
            w.row(&[n, "1"]).unwrap();
        }
        drop(w);
        // Reopening checks the header and appends.
        CsvAppender::open(&p, &["object", "value"])
            .unwrap()
            .row(&["last", "2"])
            .unwrap();
        let back = csv_maps(&fs::read_to_string(&p).unwrap()).unwrap();
        let got: Vec<&str> = back.iter().map(|m| m["object"].as_str()).collect();
        assert_eq!(got, [&names[..], &["last"]].concat());
        assert!(CsvAppender::open(&p, &["other"]).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }
}
