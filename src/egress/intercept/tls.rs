//! The run's CA and the TLS configurations: certificates per bound host toward the sandbox, rustls verified against the host's trust store toward servers.

use super::*;

/// How long the run's certificates are valid: longer than any run lasts.
pub(super) const VALIDITY_DAYS: i64 = 30;

/// The TLS side of one run: its CA, the certificates it signs, and how servers are
/// verified.
pub struct Tls {
    issuer: rcgen::CertifiedIssuer<'static, rcgen::KeyPair>,
    /// The key of every host certificate of this run (one key: making one is the slow part).
    leaf_key: rcgen::KeyPair,
    ca_pem: String,
    servers: Mutex<HashMap<String, Arc<rustls::ServerConfig>>>,
    client: OnceLock<Result<Arc<rustls::ClientConfig>, String>>,
    /// The operator's `network.upstream_ca`, trusted upstream besides the host's store.
    extra_roots: Vec<CertificateDer<'static>>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls").finish_non_exhaustive()
    }
}

pub(super) fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

impl Tls {
    /// A new CA for loop `id`'s run. Its key never leaves this process.
    pub fn new(id: &str, extra_roots: Vec<CertificateDer<'static>>) -> Result<Tls, String> {
        let err = |e: rcgen::Error| format!("cannot make the run's certificate authority: {e}");
        let now = time::OffsetDateTime::now_utc();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).map_err(err)?;
        params.distinguished_name.push(
            rcgen::DnType::CommonName,
            format!("git-loop sandbox CA (loop {id}, this run only)"),
        );
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, "git-loop");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Constrained(0));
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        params.not_before = now - time::Duration::hours(1);
        params.not_after = now + time::Duration::days(VALIDITY_DAYS);
        let key = rcgen::KeyPair::generate().map_err(err)?;
        let issuer = rcgen::CertifiedIssuer::self_signed(params, key).map_err(err)?;
        let ca_pem = issuer.pem();
        let leaf_key = rcgen::KeyPair::generate().map_err(err)?;
        Ok(Tls {
            issuer,
            leaf_key,
            ca_pem,
            servers: Mutex::new(HashMap::new()),
            client: OnceLock::new(),
            extra_roots,
        })
    }

    /// The CA's certificate (PEM), which the sandbox trusts.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The server side toward the sandbox for `host`: a certificate for it, signed by the
    /// run's CA; HTTP/2 and HTTP/1.1.
    pub(super) fn server_config(&self, host: &str) -> Result<Arc<rustls::ServerConfig>, String> {
        if let Some(c) = self.servers.lock().expect("not poisoned").get(host) {
            return Ok(c.clone());
        }
        let err = |e: String| format!("cannot make a certificate for {host}: {e}");
        let now = time::OffsetDateTime::now_utc();
        let mut params = rcgen::CertificateParams::new(vec![host.to_string()])
            .map_err(|e| err(e.to_string()))?;
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, host);
        params.is_ca = rcgen::IsCa::NoCa;
        params.key_usages = vec![rcgen::KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        params.not_before = now - time::Duration::hours(1);
        params.not_after = now + time::Duration::days(VALIDITY_DAYS);
        let cert = params
            .signed_by(&self.leaf_key, &self.issuer)
            .map_err(|e| err(e.to_string()))?;
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.leaf_key.serialize_der()));
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| err(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone()], key)
            .map_err(|e| err(e.to_string()))?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let config = Arc::new(config);
        self.servers
            .lock()
            .expect("not poisoned")
            .insert(host.to_string(), config.clone());
        Ok(config)
    }

    /// The client side toward servers: the host's trust store (read once, when the first
    /// bound host is met) and the operator's extra CA.
    pub(super) fn client_config(&self) -> Result<Arc<rustls::ClientConfig>, String> {
        self.client
            .get_or_init(|| {
                let mut roots = rustls::RootCertStore::empty();
                let native = rustls_native_certs::load_native_certs();
                roots.add_parsable_certificates(native.certs);
                roots.add_parsable_certificates(self.extra_roots.iter().cloned());
                if roots.is_empty() {
                    return Err(
                        "the host has no trusted certificates to verify servers with".to_string(),
                    );
                }
                let mut config = rustls::ClientConfig::builder_with_provider(provider())
                    .with_safe_default_protocol_versions()
                    .map_err(|e| e.to_string())?
                    .with_root_certificates(roots)
                    .with_no_client_auth();
                config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
                Ok(Arc::new(config))
            })
            .clone()
    }
}

/// The certificates of a PEM file (the operator's `network.upstream_ca`).
pub fn read_ca_file(path: &std::path::Path) -> Result<Vec<CertificateDer<'static>>, String> {
    use rustls::pki_types::pem::PemObject;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{} is not a PEM file of certificates: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{} holds no certificate", path.display()));
    }
    Ok(certs)
}

// ---------------------------------------------------------------------------------------
// A connection the proxy ends
// ---------------------------------------------------------------------------------------
