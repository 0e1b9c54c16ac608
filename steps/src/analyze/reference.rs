//! The articles' published figures (data/reference/*.csv, compiled in) beside ours: a CSV is
//! read as a Polars frame of text columns (values stay as the article printed them, "94.3" or
//! "938MB") and our arms, or tables, are left-joined against its rows.

use std::collections::{BTreeMap, HashMap};

use anyhow::Result;
use polars::prelude::*;
use polars_io::prelude::{CsvReadOptions, SerReader};

/// A published row: column → value as printed, columns without a value left out.
pub(crate) type Row = BTreeMap<String, String>;

/// A reference CSV as a frame, every column text.
pub(crate) fn frame(text: &str) -> Result<DataFrame> {
    Ok(CsvReadOptions::default()
        .with_has_header(true)
        .with_infer_schema_length(Some(0))
        .into_reader_with_file_handle(std::io::Cursor::new(text.as_bytes().to_vec()))
        .finish()?)
}

/// Ours beside the article: a left join of `keys` (ours, the reference's key it corresponds to,
/// if any) on column `on` of the reference's rows where every `filter` (column, value) holds.
/// Ours → its row (the references hold one row per key and filter); ours without one are absent.
pub(crate) fn join(
    text: &str,
    on: &str,
    keys: &[(String, Option<String>)],
    filter: &[(&str, String)],
) -> Result<HashMap<String, Row>> {
    let ours: Vec<&str> = keys.iter().map(|(o, _)| o.as_str()).collect();
    let key: Vec<Option<&str>> = keys.iter().map(|(_, k)| k.as_deref()).collect();
    let left = DataFrame::new(
        keys.len(),
        vec![
            Column::new("__ours".into(), ours),
            Column::new(on.into(), key),
        ],
    )?;
    let mut right = frame(text)?.lazy();
    for (c, v) in filter {
        right = right.filter(col(*c).eq(lit(v.clone())));
    }
    let joined = left
        .lazy()
        .join(right, [col(on)], [col(on)], JoinArgs::new(JoinType::Left))
        .collect()?;
    let names: Vec<String> = joined
        .get_column_names()
        .iter()
        .map(|n| n.to_string())
        .filter(|n| n != "__ours")
        .collect();
    let columns = names
        .iter()
        .map(|n| super::load::text(&joined, n))
        .collect::<Result<Vec<StringChunked>>>()?;
    let ours = super::load::text(&joined, "__ours")?;
    let mut out: HashMap<String, Row> = HashMap::new();
    for i in 0..joined.height() {
        let Some(o) = ours.get(i) else { continue };
        let row: Row = names
            .iter()
            .zip(&columns)
            .filter_map(|(n, c)| Some((n.clone(), c.get(i)?.to_string())))
            .collect();
        // A row only the key matched is no published row.
        if row.len() > 1 {
            out.insert(o.to_string(), row);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "arm,warehouses,nopm\ndefault,20,36597\ntuned,20,54106\ndefault,40,1\n";

    #[test]
    fn ours_are_joined_to_the_published_row_of_their_size() {
        let keys = vec![
            ("default".to_string(), Some("default".to_string())),
            ("ff80".to_string(), None),
            ("tuned".to_string(), Some("tuned".to_string())),
        ];
        let j = join(CSV, "arm", &keys, &[("warehouses", "20".into())]).unwrap();
        assert_eq!(j["default"]["nopm"], "36597");
        assert_eq!(j["tuned"]["nopm"], "54106");
        assert_eq!(j["tuned"]["warehouses"], "20");
        assert!(!j.contains_key("ff80"));
        let j = join(CSV, "arm", &keys, &[("warehouses", "40".into())]).unwrap();
        assert_eq!(j["default"]["nopm"], "1");
        assert!(!j.contains_key("tuned"));
    }
}
