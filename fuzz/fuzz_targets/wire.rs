//! Every parser of what a sandboxed client sends the proxy, on arbitrary bytes: none may
//! panic, and none may claim more bytes than it was given.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../src/egress/wire.rs"]
mod wire;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some(head)) = wire::request_head(data) {
        assert!(head.len <= data.len());
        let _ = head.single("host");
        if let Ok(Some(v)) = head.single("proxy-authorization") {
            let _ = wire::basic_credentials(v);
        }
        let _ = wire::absolute_uri(&head.target);
        let _ = wire::authority(&head.target, None);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(uri) = wire::absolute_uri(text) {
            assert!(uri.path.starts_with('/'));
        }
        if let Ok((host, _)) = wire::authority(text, Some(80)) {
            assert!(!host.is_empty() && !host.contains('@'));
        }
    }
    let _ = wire::basic_credentials(data);
    if let Ok(Some((_, used))) = wire::socks_greeting(data) {
        assert!(used <= data.len());
    }
    if let Ok(Some((_, _, used))) = wire::socks_userpass(data) {
        assert!(used <= data.len());
    }
    if let Ok(Some(req)) = wire::socks_request(data) {
        assert!(req.len <= data.len());
        let _ = req.target();
    }
    // A ClientHello's verdict never changes once it is complete: more bytes after it are
    // the rest of the tunnel.
    let verdict = wire::client_hello_sni(data);
    if !matches!(verdict, wire::ClientHello::Incomplete) {
        let mut longer = data.to_vec();
        longer.extend_from_slice(b"\x17\x03\x03\x00\x01x");
        assert_eq!(wire::client_hello_sni(&longer), verdict);
    }
});
