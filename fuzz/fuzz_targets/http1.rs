//! The proxy's per-request framing on arbitrary client bytes: no panics, and what the
//! proxy forwards frames again to exactly the requests it checked (so no body, chunk or
//! header spelling can make the server see a request the proxy did not).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../src/egress/wire.rs"]
mod wire;

#[allow(dead_code)]
#[path = "../../src/egress/http1.rs"]
mod http1;

fuzz_target!(|data: &[u8]| {
    let (requests, _) = http1::frame_requests(data);
    let forwarded: Vec<u8> = requests.iter().flat_map(|r| r.forwarded.clone()).collect();
    let (again, error) = http1::frame_requests(&forwarded);
    assert_eq!(error, None, "the proxy's own output does not frame");
    assert_eq!(again.len(), requests.len());
    for (a, b) in again.iter().zip(&requests) {
        assert_eq!(a.head.method, b.head.method);
        assert_eq!(a.head.target, b.head.target);
        assert_eq!(a.body, b.body);
        assert_eq!(a.forwarded, b.forwarded);
        let framing = |name: &str| {
            a.head
                .headers
                .iter()
                .filter(|(n, _)| n.eq_ignore_ascii_case(name))
                .count()
        };
        assert!(framing("content-length") + framing("transfer-encoding") <= 1);
        assert_eq!(framing("proxy-authorization"), 0);
    }
    // Responses: the head parser, the framing rules and the chunk decoder on anything.
    if let Ok(Some(head)) = http1::response_head(data) {
        assert!(head.len <= data.len());
        let _ = http1::response_framing(&head, data.len() % 2 == 0);
    }
    let mut chunked = http1::Chunked::default();
    let mut rest = data;
    for _ in 0..data.len() + 2 {
        match chunked.step(rest) {
            Ok(http1::Step::Emit { used, .. }) => {
                assert!(used <= rest.len());
                rest = &rest[used..];
            }
            Ok(http1::Step::Data(n)) => {
                let take = (n.min(rest.len() as u64)) as usize;
                if take == 0 {
                    break;
                }
                rest = &rest[take..];
                chunked.advance(take as u64);
            }
            Ok(http1::Step::More) | Ok(http1::Step::Done) | Err(_) => break,
        }
    }
});
