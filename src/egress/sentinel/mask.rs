//! Masking (issue 27): what a server answers on a connection whose TLS the proxy ends,
//! with every bound value of the run replaced by its placeholder in every form a server
//! commonly echoes it in, so that the sandbox sees only what it sent.
//!
//! The forms of a value ([`Forms::new`]): as it is; percent-encoded (upper and lower case
//! hex, and a form's `+` for a space); JSON-escaped (also with `\/` and with `<>&` as
//! `\u003c`, as PHP and Go write them); hex (both cases); and base64, standard and
//! URL-safe, padded or not, wherever the value starts in the encoded data, which covers a
//! `Basic` credential `user:value` whatever the user's length.
//!
//! Base64 needs care: a value that starts 1 or 2 bytes into a 3-byte group shares its
//! first base64 character with the bytes before it, and its last with the bytes after.
//! The form searched for is the run of characters that depend on the value alone (the
//! *core*); around a core that is found, a character that shares bits with the value is
//! rewritten so that its value bits are the placeholder's and its other bits stay. The
//! masked data decodes to the same bytes with the placeholder in place of the value (when
//! the two have the same length, as they do for values of [`super::MIN_RANDOM`]
//! characters or more).
//!
//! Search is one multi-pattern searcher over every form of every value ([`Finder`]). In a stream
//! ([`StreamMask`]) each piece is searched as it comes and passed on at once, less a held
//! tail: the longest end of it that may begin a form (a prefix of one, or a character that
//! may lead a base64 core), at most the longest form's length; and a base64 core whose
//! next character is in that tail waits with it, because whether that character is the
//! core's tail or the start of the next form is not known yet (where a form starts right
//! after a core, the form's replacement covers the character). A body that ends, or a
//! server that stops sending, never waits on more than that, and what a stream keeps is
//! bounded by it.
//!
//! What this does not catch: a value transformed by the server (hashed, reversed, cut
//! into pieces, encoded twice or in a form not listed), and forms shorter than
//! [`MIN_FORM`] bytes (values under 6 bytes).

use aho_corasick::{AhoCorasick, MatchKind};
use base64::Engine;
use bytes::Bytes;

/// Forms shorter than this are not searched for: they would turn up in ordinary data.
pub const MIN_FORM: usize = 6;

const STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// A base64 character that shares bits with the value: which bits are the value's
/// (`mask`), what they are (`value`), and the placeholder's in their place.
#[derive(Debug, Clone, Copy)]
struct Edge {
    mask: u8,
    value: u8,
    placeholder: u8,
}

#[derive(Debug, Clone)]
struct Base64Edges {
    url: bool,
    /// The character before the core.
    lead: Option<Edge>,
    /// The character after the core. `drop_tail`: the placeholder's length differs, so
    /// the character goes (its value bits cannot be replaced in place).
    tail: Option<Edge>,
    drop_tail: bool,
}

#[derive(Debug, Clone)]
struct Form {
    pattern: Vec<u8>,
    replacement: Vec<u8>,
    base64: Option<Base64Edges>,
    /// The index of the value (its sentinel).
    of: usize,
}

/// Every form of every value of a run, and the automaton that finds them.
#[derive(Debug, Default)]
pub struct Forms {
    finder: Option<Finder>,
    forms: Vec<Form>,
    longest: usize,
    /// Bytes that begin some form.
    first: Box<[bool]>,
    /// Bytes that may lead a base64 core (a character sharing bits with a value).
    lead: Box<[bool]>,
}

/// The search for every form at once. Teddy (aho-corasick's packed SIMD searcher) for the
/// few dozen forms a run has: measured on 1 GiB pieces, 0.09 s per GiB whatever the data,
/// where the automaton with its own prefilter took 0.015 s on a run of one byte and 2.3 s
/// on random bytes (its prefilter gives up where candidates are frequent: compressed
/// downloads, binaries). The automaton past what Teddy takes. Both report the leftmost
/// match, the longest where several start there.
#[derive(Debug)]
enum Finder {
    Packed(aho_corasick::packed::Searcher),
    Automaton(AhoCorasick),
}

impl Finder {
    fn new(forms: &[Form]) -> Finder {
        let packed = aho_corasick::packed::Config::new()
            .match_kind(aho_corasick::packed::MatchKind::LeftmostLongest)
            .builder()
            .extend(forms.iter().map(|f| &f.pattern))
            .build();
        match packed {
            Some(p) => Finder::Packed(p),
            None => Finder::Automaton(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(forms.iter().map(|f| &f.pattern))
                    .expect("patterns of bounded length build"),
            ),
        }
    }

    /// `(start, end, form)` of each match, left to right, not overlapping.
    fn find_iter<'a>(
        &'a self,
        hay: &'a [u8],
    ) -> Box<dyn Iterator<Item = (usize, usize, usize)> + 'a> {
        match self {
            Finder::Packed(p) => Box::new(
                p.find_iter(hay)
                    .map(|m| (m.start(), m.end(), m.pattern().as_usize())),
            ),
            Finder::Automaton(a) => Box::new(
                a.find_iter(hay)
                    .map(|m| (m.start(), m.end(), m.pattern().as_usize())),
            ),
        }
    }
}

/// One replacement in a buffer: `range` becomes `with`.
#[derive(Debug, PartialEq, Eq)]
struct Edit {
    start: usize,
    end: usize,
    with: Vec<u8>,
}

impl Forms {
    /// The forms of each `(value, placeholder)`; a value's index is what [`Forms::find`]
    /// names.
    pub fn new(pairs: &[(&[u8], &[u8])]) -> Forms {
        let mut forms: Vec<Form> = Vec::new();
        for (of, (value, placeholder)) in pairs.iter().enumerate() {
            for (pattern, replacement) in text_forms(value, placeholder) {
                forms.push(Form {
                    pattern,
                    replacement,
                    base64: None,
                    of,
                });
            }
            for url in [false, true] {
                for k in 0..3 {
                    forms.extend(base64_form(value, placeholder, k, url, of));
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        forms.retain(|f| f.pattern.len() >= MIN_FORM && seen.insert(f.pattern.clone()));
        let mut first = vec![false; 256].into_boxed_slice();
        let mut lead = vec![false; 256].into_boxed_slice();
        for f in &forms {
            first[f.pattern[0] as usize] = true;
            if let Some(Base64Edges {
                lead: Some(edge), ..
            }) = &f.base64
            {
                for c in 0..=255u8 {
                    if sextet(c).is_some_and(|s| s & edge.mask == edge.value) {
                        lead[c as usize] = true;
                    }
                }
            }
        }
        let longest = forms.iter().map(|f| f.pattern.len()).max().unwrap_or(0);
        let finder = (!forms.is_empty()).then(|| Finder::new(&forms));
        Forms {
            finder,
            forms,
            longest,
            first,
            lead,
        }
    }

    /// The longest base64 core: with the longest form, what bounds a stream's held bytes.
    pub fn longest_base64(&self) -> usize {
        self.forms
            .iter()
            .filter(|f| f.base64.is_some())
            .map(|f| f.pattern.len())
            .max()
            .unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }

    /// Does masking keep every length (each form's replacement as long as the form)? Then
    /// a body keeps the length its server announced.
    pub fn keeps_length(&self) -> bool {
        self.forms.iter().all(|f| {
            f.replacement.len() == f.pattern.len()
                && !f.base64.as_ref().is_some_and(|b| b.drop_tail)
        })
    }

    /// Does a form start in `bytes` at or before `at`?
    fn starts_by(&self, bytes: &[u8], at: usize) -> bool {
        self.finder
            .as_ref()
            .and_then(|f| f.find_iter(bytes).next())
            .is_some_and(|(start, _, _)| start <= at)
    }

    /// The value of which some form is in `bytes`, if any (the first found).
    pub fn find(&self, bytes: &[u8]) -> Option<usize> {
        let finder = self.finder.as_ref()?;
        let (_, _, i) = finder.find_iter(bytes).next()?;
        Some(self.forms[i].of)
    }

    /// `bytes` (a whole header value, a whole body) masked; `None` when no form is in it.
    pub fn mask(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        let (edits, safe) = self.plan(bytes, true);
        debug_assert_eq!(safe, bytes.len());
        (!edits.is_empty()).then(|| apply(bytes, &edits))
    }

    /// What to replace in `buf`, and how much of it may go on now (`safe`): all of it at
    /// the stream's `end`, else all but a tail that may begin a form. Every edit lies
    /// before `safe`.
    fn plan(&self, buf: &[u8], end: bool) -> (Vec<Edit>, usize) {
        let Some(finder) = &self.finder else {
            return (Vec::new(), buf.len());
        };
        let len = buf.len();
        // Where a form may begin that the next bytes complete: nothing from here on is
        // decided before they come.
        let open = if end { len } else { len - self.held(buf) };
        let mut limit = open;
        let mut edits: Vec<Edit> = Vec::new();
        let mut found = finder.find_iter(buf).peekable();
        // A form left for later keeps the character before it, which may be its lead.
        let keep_lead = |a: usize, after_last: usize| {
            if a > after_last && self.lead[buf[a - 1] as usize] {
                a - 1
            } else {
                a
            }
        };
        while let Some((a, b, i)) = found.next() {
            let after_last = edits.last().map_or(0, |e| e.end);
            if a >= limit {
                if !end {
                    limit = limit.min(keep_lead(a, after_last));
                }
                break;
            }
            let form = &self.forms[i];
            let mut start = a;
            let mut stop = b;
            let mut with = form.replacement.clone();
            if let Some(edges) = &form.base64 {
                // The character after the core is the core's tail, unless another form
                // starts there: that form's replacement covers it, and the two edits must
                // not overlap. Whether one does is known once the character is past `open`.
                let tail = edges.tail.and_then(|edge| {
                    let c = sextet(*buf.get(b)?).filter(|c| c & edge.mask == edge.value)?;
                    Some((edge, c))
                });
                let next_starts_here = found.peek().is_some_and(|&(next, _, _)| next == b);
                let undecided =
                    edges.tail.is_some() && b >= open && !end && (b == len || tail.is_some());
                if undecided && !next_starts_here {
                    // Held from the core (and the character that may lead it) on.
                    limit = limit.min(keep_lead(a, after_last));
                    break;
                }
                if let (Some(edge), Some(i)) = (edges.lead, a.checked_sub(1)) {
                    if i >= after_last {
                        if let Some(c) = sextet(buf[i]).filter(|c| c & edge.mask == edge.value) {
                            start = i;
                            let url = edges.url || b"-_".contains(&buf[i]);
                            let mut lead = vec![char_of((c & !edge.mask) | edge.placeholder, url)];
                            lead.extend_from_slice(&with);
                            with = lead;
                        }
                    }
                }
                if let (Some((edge, c)), false) = (tail, next_starts_here) {
                    stop = b + 1;
                    if !edges.drop_tail {
                        let url = edges.url || b"-_".contains(&buf[b]);
                        with.push(char_of((c & !edge.mask) | edge.placeholder, url));
                    }
                }
            }
            limit = limit.max(stop);
            edits.push(Edit {
                start,
                end: stop,
                with,
            });
        }
        (edits, limit)
    }

    /// How many bytes at the end of `buf` may begin a form that the next bytes complete.
    fn held(&self, buf: &[u8]) -> usize {
        let len = buf.len();
        let from = len.saturating_sub(self.longest.saturating_sub(1));
        for i in from..len {
            if !self.first[buf[i] as usize] {
                continue;
            }
            let tail = &buf[i..];
            if self
                .forms
                .iter()
                .any(|f| f.pattern.len() > tail.len() && f.pattern.starts_with(tail))
            {
                // One more before it, in case it is a base64 core's leading character.
                return len - i + usize::from(i > 0 && self.lead[buf[i - 1] as usize]);
            }
        }
        usize::from(len > 0 && self.lead[buf[len - 1] as usize])
    }
}

/// `bytes` with `edits` (in order, not overlapping) applied.
fn apply(bytes: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 16);
    let mut last = 0;
    for e in edits {
        out.extend_from_slice(&bytes[last..e.start]);
        out.extend_from_slice(&e.with);
        last = e.end;
    }
    out.extend_from_slice(&bytes[last..]);
    out
}

/// The 6 bits a base64 character stands for, in either alphabet.
fn sextet(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' | b'-' => Some(62),
        b'/' | b'_' => Some(63),
        _ => None,
    }
}

fn char_of(sextet: u8, url: bool) -> u8 {
    if url {
        URL[sextet as usize]
    } else {
        STD[sextet as usize]
    }
}

/// The textual forms of a value: `(form, the placeholder's form)`.
fn text_forms(value: &[u8], placeholder: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let hex = |b: &[u8], upper: bool| -> Vec<u8> {
        b.iter()
            .flat_map(|x| {
                if upper {
                    format!("{x:02X}")
                } else {
                    format!("{x:02x}")
                }
                .into_bytes()
            })
            .collect()
    };
    let percent = |b: &[u8], upper: bool, plus: bool| -> Vec<u8> {
        let mut out = Vec::with_capacity(b.len() * 3);
        for &x in b {
            if x.is_ascii_alphanumeric() || b"-._~".contains(&x) {
                out.push(x);
            } else if plus && x == b' ' {
                out.push(b'+');
            } else if upper {
                out.extend_from_slice(format!("%{x:02X}").as_bytes());
            } else {
                out.extend_from_slice(format!("%{x:02x}").as_bytes());
            }
        }
        out
    };
    let mut out = vec![(value.to_vec(), placeholder.to_vec())];
    for upper in [true, false] {
        for plus in [false, true] {
            out.push((
                percent(value, upper, plus),
                percent(placeholder, upper, plus),
            ));
        }
        out.push((hex(value, upper), hex(placeholder, upper)));
    }
    if let Ok(text) = std::str::from_utf8(value) {
        let json = serde_json::to_string(text).unwrap_or_default();
        let json = json.as_bytes()[1..json.len() - 1].to_vec();
        let p = std::str::from_utf8(placeholder).unwrap_or_default();
        let pjson = serde_json::to_string(p).unwrap_or_default();
        let pjson = pjson.as_bytes()[1..pjson.len() - 1].to_vec();
        let slashes = String::from_utf8_lossy(&json).replace('/', "\\/");
        let html = String::from_utf8_lossy(&json)
            .replace('<', "\\u003c")
            .replace('>', "\\u003e")
            .replace('&', "\\u0026");
        out.push((json, pjson.clone()));
        out.push((slashes.into_bytes(), pjson.clone()));
        out.push((html.into_bytes(), pjson));
    }
    out
}

/// The base64 form of `value` starting `k` bytes into a 3-byte group: its core and edges.
fn base64_form(value: &[u8], placeholder: &[u8], k: usize, url: bool, of: usize) -> Option<Form> {
    let engine = if url {
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
    } else {
        &base64::engine::general_purpose::STANDARD_NO_PAD
    };
    // Zero bytes around the value: the edge characters then hold only its bits.
    let encode = |b: &[u8]| -> Vec<u8> {
        let mut padded = vec![0u8; k];
        padded.extend_from_slice(b);
        padded.extend_from_slice(&[0, 0]);
        engine.encode(&padded).into_bytes()
    };
    let (venc, penc) = (encode(value), encode(placeholder));
    let start_bit = 8 * k;
    let first_full = start_bit.div_ceil(6);
    let (v_end, p_end) = (
        start_bit + 8 * value.len(),
        start_bit + 8 * placeholder.len(),
    );
    let (v_last, p_last) = (v_end / 6, p_end / 6);
    if v_last <= first_full {
        return None;
    }
    let sex = |c: u8| sextet(c).expect("the engine writes base64");
    let lead = (!start_bit.is_multiple_of(6)).then(|| {
        let i = start_bit / 6;
        let mask = (1u8 << (6 - start_bit % 6)) - 1;
        Edge {
            mask,
            value: sex(venc[i]) & mask,
            placeholder: sex(penc[i]) & mask,
        }
    });
    let same = value.len() == placeholder.len();
    let tail = (!v_end.is_multiple_of(6)).then(|| {
        let mask = !((1u8 << (6 - v_end % 6)) - 1) & 0x3f;
        Edge {
            mask,
            value: sex(venc[v_last]) & mask,
            placeholder: if same { sex(penc[v_last]) & mask } else { 0 },
        }
    });
    // A placeholder of another length: its own characters up to its end, the value's
    // last character dropped (the data after it is shifted anyway).
    let replacement = if same {
        penc[first_full..p_last].to_vec()
    } else {
        penc[first_full..p_end.div_ceil(6)].to_vec()
    };
    Some(Form {
        pattern: venc[first_full..v_last].to_vec(),
        replacement,
        base64: Some(Base64Edges {
            url,
            lead,
            tail,
            drop_tail: !same,
        }),
        of,
    })
}

/// A body masked as it streams: each piece goes on at once, less a held tail (see the
/// module's header), which the next piece or the end completes.
#[derive(Debug)]
pub struct StreamMask {
    forms: std::sync::Arc<Forms>,
    carry: Vec<u8>,
}

impl StreamMask {
    pub fn new(forms: std::sync::Arc<Forms>) -> StreamMask {
        StreamMask {
            forms,
            carry: Vec::new(),
        }
    }

    /// The next piece masked: what may go on now, in one or two parts (either may be
    /// empty), in order.
    pub fn feed(&mut self, piece: Bytes) -> (Bytes, Bytes) {
        if self.carry.is_empty() {
            return (self.pass(piece), Bytes::new());
        }
        // What was held goes on as it is unless a form starts in it, or right after it
        // (its leading base64 character would be the held byte): only the seam is searched
        // for that, and the piece is not copied.
        let longest = self.forms.longest;
        if piece.len() > 2 * longest + 2 {
            let mut seam = Vec::with_capacity(self.carry.len() + longest + 1);
            seam.extend_from_slice(&self.carry);
            seam.extend_from_slice(&piece[..longest + 1]);
            if !self.forms.starts_by(&seam, self.carry.len()) {
                let held = Bytes::from(std::mem::take(&mut self.carry));
                return (held, self.pass(piece));
            }
        }
        let mut buf = std::mem::take(&mut self.carry);
        buf.extend_from_slice(&piece);
        (self.emit(buf, false), Bytes::new())
    }

    /// `piece`, nothing held before it: as it is where no form is in it, less a held tail.
    fn pass(&mut self, piece: Bytes) -> Bytes {
        let (edits, safe) = self.forms.plan(&piece, false);
        self.carry.extend_from_slice(&piece[safe..]);
        if edits.is_empty() {
            return piece.slice(..safe);
        }
        Bytes::from(apply(&piece[..safe], &edits))
    }

    /// The end of the body: whatever was held, masked.
    pub fn finish(&mut self) -> Bytes {
        let buf = std::mem::take(&mut self.carry);
        self.emit(buf, true)
    }

    /// Bytes held, waiting for more.
    pub fn held(&self) -> usize {
        self.carry.len()
    }

    fn emit(&mut self, buf: Vec<u8>, end: bool) -> Bytes {
        let (edits, safe) = self.forms.plan(&buf, end);
        self.carry.extend_from_slice(&buf[safe..]);
        if edits.is_empty() {
            let mut buf = buf;
            buf.truncate(safe);
            return Bytes::from(buf);
        }
        Bytes::from(apply(&buf[..safe], &edits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

    const VALUE: &str = "ghp_REALvalue0123456789abcdefABCDEF012345";
    const PLACEHOLDER: &str = "ghp_xPLAceholder9876543210zyxwvuTSRQPO987";

    fn forms() -> Forms {
        Forms::new(&[(VALUE.as_bytes(), PLACEHOLDER.as_bytes())])
    }

    /// Masked through a stream cut into pieces of `cut` bytes.
    fn streamed(forms: &std::sync::Arc<Forms>, data: &[u8], cut: usize) -> Vec<u8> {
        let mut s = StreamMask::new(forms.clone());
        let mut out = Vec::new();
        for piece in data.chunks(cut.max(1)) {
            let (a, b) = s.feed(Bytes::copy_from_slice(piece));
            out.extend_from_slice(&a);
            out.extend_from_slice(&b);
            assert!(s.held() <= forms.longest + 1, "{}", s.held());
        }
        out.extend_from_slice(&s.finish());
        out
    }

    /// What the fuzz target (fuzz/fuzz_targets/mask.rs) checks of one input: a value's
    /// length, the value, the cut, the body; whole and streamed alike at every cut.
    fn fuzz_case(data: &[u8]) {
        let (&n, rest) = data.split_first().unwrap();
        let n = (n as usize % 48).min(rest.len());
        let (value, rest) = rest.split_at(n);
        let value = std::str::from_utf8(value).unwrap();
        let body = &rest[1..];
        let placeholder: String = value
            .bytes()
            .enumerate()
            .map(|(i, b)| (b'A' + (b.wrapping_add(i as u8) % 26)) as char)
            .collect();
        let forms = std::sync::Arc::new(Forms::new(&[(value.as_bytes(), placeholder.as_bytes())]));
        let whole = forms.mask(body).unwrap_or_else(|| body.to_vec());
        assert_eq!(whole.len(), body.len());
        for cut in 1..=body.len() {
            let mut s = StreamMask::new(forms.clone());
            let mut out = Vec::new();
            for piece in body.chunks(cut) {
                let (a, b) = s.feed(Bytes::copy_from_slice(piece));
                out.extend_from_slice(&a);
                out.extend_from_slice(&b);
                assert!(s.held() <= forms.longest + forms.longest_base64() + 2);
            }
            out.extend_from_slice(&s.finish());
            assert_eq!(out, whole, "cut {cut}");
        }
    }

    #[test]
    fn base64_forms_back_to_back_are_both_masked_and_a_stream_agrees() {
        // The character after one core is where the next form starts: the second form's
        // replacement covers it (two edits of one character overlapped here once).
        for data in [
            "BhAAAAAAAAAAAHx8enx8QUFBQUFBQUFBQUFBQUFBQbg6AAAAQQAAAAAAYwkJQUFBQUFBQUFBAAAAAAABAGMJCQnzAA==",
            "NQAAAAAABQUEBQMEAAAAAAAACAAAAABBQUFBQUE2AAAAIDoDMwQGCQYsAAAAQUEJBiwAAABBQUFBQUFBQUFBQUFBLwD7YABUTQAAAAMEAAAAAIr///8AAAAALwA=",
            // A core left for the next piece keeps its lead character with it.
            "BgAAAAAABgAAAARjI2IoAQEwMCUA9fX1/iQBBQAAa0FBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBAEE=",
        ] {
            fuzz_case(&STANDARD.decode(data).unwrap());
        }
        // The same value encoded twice, one right after the other, at every offset.
        let f = std::sync::Arc::new(forms());
        for prefix in ["", "u", "us"] {
            let one = STANDARD.encode(format!("{prefix}{VALUE}"));
            let body = format!("{}{}", one.trim_end_matches('='), one.trim_end_matches('='));
            let got = f.mask(body.as_bytes()).unwrap();
            assert!(!String::from_utf8_lossy(&got).contains(&STANDARD.encode(&VALUE[3..30])[..12]));
            for cut in [1, 2, 5, 13, body.len()] {
                assert_eq!(
                    streamed(&f, body.as_bytes(), cut),
                    got,
                    "{prefix} cut {cut}"
                );
            }
        }
    }

    #[test]
    fn the_placeholder_has_the_values_length_here() {
        assert_eq!(VALUE.len(), PLACEHOLDER.len());
    }

    #[test]
    fn every_encoded_form_becomes_the_placeholders() {
        let f = forms();
        let b64 = |s: &str| STANDARD.encode(s);
        let cases = [
            (VALUE.to_string(), PLACEHOLDER.to_string()),
            (
                format!("Basic {}", b64(&format!("x-access-token:{VALUE}"))),
                format!("Basic {}", b64(&format!("x-access-token:{PLACEHOLDER}"))),
            ),
            (
                format!("Basic {}", b64(&format!("u:{VALUE}"))),
                format!("Basic {}", b64(&format!("u:{PLACEHOLDER}"))),
            ),
            (
                format!("Basic {}", b64(&format!("{VALUE}:x"))),
                format!("Basic {}", b64(&format!("{PLACEHOLDER}:x"))),
            ),
            (b64(VALUE), b64(PLACEHOLDER)),
            (
                URL_SAFE_NO_PAD.encode(format!("ab{VALUE}")),
                URL_SAFE_NO_PAD.encode(format!("ab{PLACEHOLDER}")),
            ),
            (
                VALUE.bytes().map(|b| format!("{b:02x}")).collect(),
                PLACEHOLDER.bytes().map(|b| format!("{b:02x}")).collect(),
            ),
            (
                VALUE.bytes().map(|b| format!("{b:02X}")).collect(),
                PLACEHOLDER.bytes().map(|b| format!("{b:02X}")).collect(),
            ),
        ];
        for (given, want) in cases {
            let got = f
                .mask(given.as_bytes())
                .unwrap_or_else(|| panic!("{given}"));
            assert_eq!(String::from_utf8(got).unwrap(), want, "{given}");
        }
        assert_eq!(f.mask(b"nothing of it here"), None);
    }

    #[test]
    fn many_values_are_searched_by_either_finder_alike() {
        let values: Vec<(String, String)> = (0..40)
            .map(|i| {
                let (v, p) = (
                    format!("value-{i:02}-a/b+c-{i:03}"),
                    format!("place-{i:02}-xyzwv-{i:03}"),
                );
                assert_eq!(v.len(), p.len());
                (v, p)
            })
            .collect();
        let pairs: Vec<(&[u8], &[u8])> = values
            .iter()
            .map(|(v, p)| (v.as_bytes(), p.as_bytes()))
            .collect();
        let many = Forms::new(&pairs);
        assert!(matches!(many.finder, Some(Finder::Automaton(_))));
        let few = Forms::new(&pairs[..1]);
        assert!(matches!(few.finder, Some(Finder::Packed(_))));
        let body = format!("a {} b {} c", values[0].0, STANDARD.encode(&values[39].0));
        let got = String::from_utf8(many.mask(body.as_bytes()).unwrap()).unwrap();
        assert_eq!(
            got,
            format!("a {} b {} c", values[0].1, STANDARD.encode(&values[39].1))
        );
        assert_eq!(
            few.mask(body.as_bytes()).map(String::from_utf8),
            Some(Ok(format!(
                "a {} b {} c",
                values[0].1,
                STANDARD.encode(&values[39].0)
            )))
        );
    }

    #[test]
    fn a_value_with_odd_characters_is_found_escaped() {
        let value = "s3cr3t/with+odd=chars \"and\" <more>&";
        let placeholder = "a3bc3d_withxoddxcharsxxandxxxmorexx";
        let f = Forms::new(&[(value.as_bytes(), placeholder.as_bytes())]);
        for given in [
            "s3cr3t%2Fwith%2Bodd%3Dchars%20%22and%22%20%3Cmore%3E%26",
            "s3cr3t%2fwith%2bodd%3dchars%20%22and%22%20%3cmore%3e%26",
            "s3cr3t%2Fwith%2Bodd%3Dchars+%22and%22+%3Cmore%3E%26",
            "s3cr3t/with+odd=chars \\\"and\\\" <more>&",
            "s3cr3t\\/with+odd=chars \\\"and\\\" <more>&",
            "s3cr3t/with+odd=chars \\\"and\\\" \\u003cmore\\u003e\\u0026",
        ] {
            let body = format!("{{\"echo\": \"{given}\"}}");
            let got = String::from_utf8(f.mask(body.as_bytes()).unwrap()).unwrap();
            assert!(
                got.contains(placeholder) && !got.contains("s3cr3t"),
                "{given}: {got}"
            );
        }
    }

    #[test]
    fn a_placeholder_of_another_length_leaves_no_bit_of_a_base64_value() {
        let value = "hunter2!";
        let placeholder = "abcdefgh12345678";
        let f = Forms::new(&[(value.as_bytes(), placeholder.as_bytes())]);
        for prefix in ["", "u", "us", "use"] {
            let given = STANDARD.encode(format!("{prefix}:{value}:rest"));
            let got = f.mask(given.as_bytes()).unwrap();
            let decoded = STANDARD.decode(&got).unwrap_or_default();
            assert!(
                memchr::memmem::find(&decoded, b"unter").is_none(),
                "{prefix}: {}",
                String::from_utf8_lossy(&decoded)
            );
        }
    }

    #[test]
    fn a_stream_is_masked_across_its_pieces_and_holds_little() {
        let f = std::sync::Arc::new(forms());
        let basic = STANDARD.encode(format!("x-access-token:{VALUE}"));
        let pct: String = VALUE.bytes().map(|b| format!("{b:02x}")).collect();
        let body = format!(
            "{}{VALUE}{}{basic}=\n{}\"{pct}\"{}",
            "a".repeat(5000),
            "b".repeat(3000),
            "c".repeat(100),
            "d".repeat(50)
        );
        let want = f.mask(body.as_bytes()).unwrap();
        assert!(!String::from_utf8_lossy(&want).contains("REAL"));
        for cut in [1, 2, 3, 7, 40, 41, 64, 4096, 5003, 8050, 8060, body.len()] {
            assert_eq!(streamed(&f, body.as_bytes(), cut), want, "cut {cut}");
        }
        // Text that ends without any form's beginning goes on whole at once.
        let mut s = StreamMask::new(f.clone());
        let line = Bytes::from_static(b"data: {\"type\":\"ping\"}\n\n");
        assert_eq!(s.feed(line.clone()), (line, Bytes::new()));
        assert_eq!(s.held(), 0);
        // A tail that may begin the value waits for the next piece.
        let part = Bytes::copy_from_slice(&VALUE.as_bytes()[..10]);
        assert_eq!(s.feed(part), (Bytes::new(), Bytes::new()));
        assert_eq!(s.held(), 10);
        let (rest, more) = s.feed(Bytes::copy_from_slice(&VALUE.as_bytes()[10..]));
        let end = s.finish();
        assert_eq!([rest, more, end].concat(), PLACEHOLDER.as_bytes());
    }
}
