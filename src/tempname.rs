//! The names of the temporary files git-loop writes before renaming them into place: one
//! format, made by [`for_writer`] and read back by [`writer_of`], shared by every writer
//! (`fsutil::write_atomic`, `confined::Tree::write_atomic`, the identity's creation, the
//! vaults' pins) and by every judge that removes what a killed writer left (`fsutil`'s
//! sweep, the vaults' recovery, `doctor --fix`). A temp file is a leftover when its writer,
//! named in it by pid, is gone; never by its age.
//!
//! `.<name>.tmp-<pid>-<8 hex>`: hidden, so listings pass over it; the random part keeps two
//! writers of one process apart and makes the name unguessable in folders a sandbox can
//! write. Pure, with no dependency beyond `std`: the vault fuzz target compiles it by path.

/// The temporary name for a file `name` written by process `pid`, with `nonce` as its
/// random part.
pub fn for_writer(name: &str, pid: u32, nonce: u32) -> String {
    format!(".{name}.tmp-{pid}-{nonce:08x}")
}

/// The pid of the writer named in a temporary name of [`for_writer`], if `name` is one.
pub fn writer_of(name: &str) -> Option<i32> {
    let rest = name.strip_prefix('.')?;
    let (base, tail) = rest.rsplit_once(".tmp-")?;
    if base.is_empty() {
        return None;
    }
    let (pid, hex) = tail.split_once('-')?;
    let digits = !pid.is_empty() && pid.len() <= 10 && pid.bytes().all(|b| b.is_ascii_digit());
    let nonce = hex.len() == 8 && hex.bytes().all(|b| b.is_ascii_hexdigit());
    if !(digits && nonce) {
        return None;
    }
    pid.parse::<i32>().ok().filter(|p| *p > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_writer_is_read_back_from_the_name_it_made() {
        let made = for_writer("TOKEN.age", 4242, 0x0bad_c0de);
        assert_eq!(made, ".TOKEN.age.tmp-4242-0badc0de");
        assert_eq!(writer_of(&made), Some(4242));
        assert_eq!(writer_of(&for_writer("a.tmp-1-00000000", 7, 1)), Some(7));
    }

    #[test]
    fn other_names_name_no_writer() {
        for name in [
            "TOKEN.age",
            ".TOKEN.age",
            ".TOKEN.age.tmp-123",
            ".TOKEN.age.tmp-12-zz",
            ".TOKEN.age.tmp--0badc0de",
            ".TOKEN.age.tmp-0-0badc0de",
            ".TOKEN.age.tmp-12-0badc0de0",
            ".TOKEN.age.tmp-99999999999-0badc0de",
            "TOKEN.age.tmp-12-0badc0de",
            "..tmp-12-0badc0de",
        ] {
            assert_eq!(writer_of(name), None, "{name}");
        }
    }
}
