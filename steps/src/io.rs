//! File I/O every module shares: atomic JSON writes, JSON reads, and append-only CSV files that
//! are flushed row by row (raw samples survive a crash). A leaf: imports nothing from the crate.

use std::fs;
use std::io::Write;
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

pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
