//! `loops/<id>/events.jsonl`: one JSON line per sandbox start, exit and violation.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use serde_json::{json, Value};

/// Appends one event with a timestamp. Appends of one short line are atomic with
/// O_APPEND, so concurrent runs never interleave within a line.
pub fn append(path: &Path, kind: &str, mut fields: Value) -> std::io::Result<()> {
    fields["ts"] = json!(crate::loops::now_rfc3339());
    fields["kind"] = json!(kind);
    let mut line = serde_json::to_string(&fields).unwrap_or_default();
    line.push('\n');
    let mut f = OpenOptions::new().create(true).append(true).open(path)?;
    f.write_all(line.as_bytes())
}

/// Every event of a loop, oldest first; lines that are not JSON are skipped.
pub fn read(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}
