//! File I/O every module shares: atomic JSON writes, JSON reads, and append-only CSV files that
//! are flushed row by row (raw samples survive a crash). A leaf: imports nothing from the crate.

use std::fs;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::Serialize;
use serde_json::Value;

/// Writes JSON to a temporary file and renames it into place.
pub fn write_json_atomic<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value)? + "\n";
    write_atomic(path, text.as_bytes())
}

/// Writes a file whole or not at all: a temporary file beside it, renamed into place. On any
/// error (a full disk) the temporary file is removed and the error names `path`.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    let r = fs::write(&tmp, bytes).and_then(|_| fs::rename(&tmp, path));
    if let Err(e) = r {
        let _ = fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("writing {}", path.display()));
    }
    Ok(())
}

pub fn read_json(path: &Path) -> Result<Value> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// An append-only CSV file (RFC 4180 quoting, the `csv` crate): the header is written once,
/// every row is flushed as it is added, and each row is written whole or not at all (a write
/// that fails half-way, on a full disk, is cut back to the last whole row).
pub struct CsvAppender {
    file: fs::File,
    path: std::path::PathBuf,
}

fn encode<I, S>(rows: I) -> Result<Vec<u8>>
where
    I: IntoIterator<Item = Vec<S>>,
    S: AsRef<[u8]>,
{
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(vec![]);
    for r in rows {
        w.write_record(&r)?;
    }
    w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))
}

impl CsvAppender {
    pub fn open(path: &Path, header: &[&str]) -> Result<CsvAppender> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
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
        let mut out = CsvAppender {
            file,
            path: path.to_path_buf(),
        };
        if new {
            out.append(&encode([header.to_vec()])?)?;
        }
        Ok(out)
    }

    /// Appends whole rows: on a failed write the file is cut back to where it was.
    fn append(&mut self, bytes: &[u8]) -> Result<()> {
        use std::io::Write;
        let len = self
            .file
            .metadata()
            .with_context(|| format!("reading {}", self.path.display()))?
            .len();
        if let Err(e) = self.file.write_all(bytes).and_then(|_| self.file.flush()) {
            let _ = self.file.set_len(len);
            return Err(e).with_context(|| format!("appending to {}", self.path.display()));
        }
        Ok(())
    }

    pub fn row<S: AsRef<str>>(&mut self, fields: &[S]) -> Result<()> {
        let bytes = encode([fields
            .iter()
            .map(|f| f.as_ref().as_bytes())
            .collect::<Vec<&[u8]>>()])?;
        self.append(&bytes)
    }

    /// Many rows, one write.
    pub(crate) fn rows(&mut self, rows: &[Vec<String>]) -> Result<()> {
        let bytes = encode(
            rows.iter()
                .map(|r| r.iter().map(String::as_bytes).collect::<Vec<&[u8]>>()),
        )?;
        self.append(&bytes)
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

pub(crate) fn now_rfc3339() -> String {
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
