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

/// At most this much of a log is read: its latest events.
const MAX_READ: u64 = 16 << 20;

/// The events of a loop, oldest first: all of them, or the latest [`MAX_READ`] bytes'
/// worth of a log that grew larger. Never through a link; lines that are not JSON (or
/// not UTF-8) are skipped.
pub fn read(path: &Path) -> Vec<Value> {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(Some(mut file)) = crate::fsutil::open_regular(path) else {
        return Vec::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let skip = len.saturating_sub(MAX_READ);
    if file.seek(SeekFrom::Start(skip)).is_err() {
        return Vec::new();
    }
    let mut bytes = Vec::new();
    if file.take(MAX_READ).read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    // Cut in the middle of a log, the first line is a part of one: dropped.
    let start = if skip > 0 {
        bytes
            .iter()
            .position(|b| *b == b'\n')
            .map_or(bytes.len(), |i| i + 1)
    } else {
        0
    };
    bytes[start..]
        .split(|b| *b == b'\n')
        .filter_map(|l| serde_json::from_slice(l).ok())
        .collect()
}
