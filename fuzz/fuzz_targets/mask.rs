//! The masker of answers (src/egress/sentinel/mask.rs) on arbitrary values and bodies cut
//! at arbitrary places: no panics, what a stream hands on is what the whole body masked
//! at once is, whatever the cuts, and a stream never holds more than a base64 core and the longest form.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../src/egress/sentinel/mask.rs"]
mod mask;

use bytes::Bytes;
use mask::{Forms, StreamMask};

fuzz_target!(|data: &[u8]| {
    // The input: a value's length (1 byte), the value, the cuts' lengths (1 byte), then
    // the body.
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let n = (n as usize % 48).min(rest.len());
    let (value, rest) = rest.split_at(n);
    let Ok(value) = std::str::from_utf8(value) else {
        return;
    };
    let Some((&cut, body)) = rest.split_first() else {
        return;
    };
    // A placeholder of the value's length, of letters and digits as placeholders are.
    let placeholder: String = value
        .bytes()
        .enumerate()
        .map(|(i, b)| (b'A' + (b.wrapping_add(i as u8) % 26)) as char)
        .collect();
    let forms = std::sync::Arc::new(Forms::new(&[(value.as_bytes(), placeholder.as_bytes())]));
    let whole = forms.mask(body).unwrap_or_else(|| body.to_vec());
    let mut stream = StreamMask::new(forms.clone());
    let mut out = Vec::new();
    let cut = usize::from(cut).max(1);
    for piece in body.chunks(cut) {
        let (a, b) = stream.feed(Bytes::copy_from_slice(piece));
        out.extend_from_slice(&a);
        out.extend_from_slice(&b);
        // At most a base64 core held back with the longest form after it.
        let bound = forms.longest_base64() + value.len() * 6 + 2;
        assert!(stream.held() <= bound, "{} > {bound}", stream.held());
    }
    out.extend_from_slice(&stream.finish());
    assert_eq!(out, whole, "cut {cut}");
    if forms.keeps_length() {
        assert_eq!(whole.len(), body.len());
    }
});
