//! TLS for every connection hotlab's own client makes, with libpq's sslmode semantics, on
//! rustls (pure Rust: nothing to install on a fresh machine; docs/measurements.md, "First compile", has its
//! cost).
//!
//! | sslmode       | TLS                    | certificate checked                               |
//! |---------------|------------------------|---------------------------------------------------|
//! | `disable`     | never                  | —                                                 |
//! | `allow`       | only if plain is refused | as `require`                                    |
//! | `prefer`      | if the server has it   | as `require`                                      |
//! | `require`     | always                 | chain against the root file, if one exists; else none |
//! | `verify-ca`   | always                 | chain against the root file (which must exist)   |
//! | `verify-full` | always                 | chain, and the host name                          |
//!
//! The root file is `sslrootcert`, else `~/.postgresql/root.crt`; `sslrootcert=system` is the
//! system's trust store and needs `verify-full`, as in libpq. A client certificate
//! (`sslcert`/`sslkey`, else `~/.postgresql/postgresql.crt`/`.key` when present) is sent when
//! the server asks; a key that group or others can read is refused, as libpq does. TLS is never
//! used over a Unix socket (libpq does not either).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, Error as TlsError, SignatureScheme};

use super::conn::ConnInfo;

/// Connects as `cfg` says, with the TLS `conn`'s sslmode asks for.
pub(crate) fn connect(conn: &ConnInfo, mut cfg: postgres::Config) -> Result<postgres::Client> {
    use postgres::config::SslMode;
    let mode = conn.sslmode();
    let socket_only = cfg
        .get_hosts()
        .iter()
        .all(|h| matches!(h, postgres::config::Host::Unix(_)));
    if mode == "disable" || socket_only {
        cfg.ssl_mode(SslMode::Disable);
        return Ok(cancellable(cfg.connect(postgres::NoTls)?, None));
    }
    if conn.get("channel_binding") == Some("require") {
        bail!("channel_binding=require: hotlab's client does not do channel binding; use channel_binding=prefer (the default) or disable");
    }
    let tls = MakeRustls(Arc::new(client_config(conn)?));
    if mode == "allow" {
        cfg.ssl_mode(SslMode::Disable);
        if let Ok(c) = cfg.connect(postgres::NoTls) {
            return Ok(cancellable(c, None));
        }
        cfg.ssl_mode(SslMode::Require);
        let c = cfg.connect(tls.clone()).map_err(|e| explain(e, conn))?;
        return Ok(cancellable(c, Some(tls)));
    }
    cfg.ssl_mode(if mode == "prefer" {
        SslMode::Prefer
    } else {
        SslMode::Require
    });
    let c = cfg.connect(tls.clone()).map_err(|e| explain(e, conn))?;
    Ok(cancellable(c, Some(tls)))
}

/// Registers the connection's cancel with `interrupt`, so an interrupted step blocked in one of
/// its queries gets an error back instead of waiting for the query to end.
fn cancellable(c: postgres::Client, tls: Option<MakeRustls>) -> postgres::Client {
    let token = c.cancel_token();
    crate::interrupt::on_interrupt(move || {
        let _ = match &tls {
            Some(t) => token.cancel_query(t.clone()),
            None => token.cancel_query(postgres::NoTls),
        };
    });
    c
}

/// A TLS failure as one line that names the setting to change.
fn explain(e: postgres::Error, conn: &ConnInfo) -> anyhow::Error {
    let text = format!("{:#}", anyhow::Error::new(e));
    let mode = conn.sslmode();
    let hint = if text.contains("server does not support TLS") {
        format!("the server refused TLS and sslmode={mode} requires it; enable ssl on the server or lower sslmode")
    } else if text.contains("NotValidForName") || text.contains("not valid for name") {
        format!(
            "the server's certificate is not valid for host {} (sslmode={mode}); connect by the name the certificate carries, or use sslmode=verify-ca",
            conn.first_host()
        )
    } else if text.contains("UnknownIssuer") || text.contains("invalid peer certificate") {
        format!("the server's certificate is not signed by the CA in sslrootcert (sslmode={mode}): {text}; fix sslrootcert or PGSSLROOTCERT")
    } else {
        return anyhow::anyhow!(text);
    };
    anyhow::anyhow!(hint)
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn dot_postgresql(file: &str) -> Option<PathBuf> {
    crate::env::var("HOME").map(|h| Path::new(&h).join(".postgresql").join(file))
}

/// The rustls configuration sslmode, sslrootcert, sslcert and sslkey describe.
pub(crate) fn client_config(conn: &ConnInfo) -> Result<rustls::ClientConfig> {
    let mode = conn.sslmode();
    let p = provider();
    let root_setting = conn.get("sslrootcert");
    let roots: Option<rustls::RootCertStore> = match root_setting {
        Some("system") => {
            if mode != "verify-full" {
                bail!("weak sslmode \"{mode}\" may not be used with sslrootcert=system (use \"verify-full\")");
            }
            let found = rustls_native_certs::load_native_certs();
            let mut store = rustls::RootCertStore::empty();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                bail!("sslrootcert=system: no certificate in the system's trust store; install ca-certificates or name a file in sslrootcert");
            }
            Some(store)
        }
        Some(f) => Some(read_roots(Path::new(f), "sslrootcert")?),
        None => match dot_postgresql("root.crt").filter(|p| p.exists()) {
            Some(f) => Some(read_roots(&f, "the default root certificate")?),
            None if mode.starts_with("verify") => bail!(
                "sslmode={mode} needs a root certificate: set sslrootcert (or PGSSLROOTCERT) to the CA's file, or sslrootcert=system, or use sslmode=require"
            ),
            None => None,
        },
    };
    let chain = match roots {
        None => None,
        Some(store) => Some(
            rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(store), p.clone())
                .build()
                .context("building the certificate verifier from sslrootcert")?,
        ),
    };
    let verifier = Arc::new(Check {
        provider: p.clone(),
        chain,
        check_name: mode == "verify-full",
    });
    let builder = rustls::ClientConfig::builder_with_provider(p)
        .with_safe_default_protocol_versions()
        .context("TLS protocol versions")?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let (cert, key) = (
        conn.get("sslcert").map(PathBuf::from),
        conn.get("sslkey").map(PathBuf::from),
    );
    let cert = cert.or_else(|| dot_postgresql("postgresql.crt").filter(|p| p.exists()));
    Ok(match cert {
        None => builder.with_no_client_auth(),
        Some(cert) => {
            let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert)
                .and_then(|it| it.collect::<Result<Vec<_>, _>>())
                .map_err(|e| anyhow::anyhow!("sslcert: cannot read a certificate from {} ({e}); fix sslcert or PGSSLCERT", cert.display()))?;
            let key = key
                .or_else(|| dot_postgresql("postgresql.key"))
                .context("sslcert is set and sslkey is not; set sslkey (or PGSSLKEY)")?;
            check_key_mode(&key)?;
            let der = PrivateKeyDer::from_pem_file(&key).map_err(|e| {
                anyhow::anyhow!(
                    "sslkey: cannot read a private key from {} ({e}); fix sslkey or PGSSLKEY",
                    key.display()
                )
            })?;
            builder
                .with_client_auth_cert(chain, der)
                .context("sslcert and sslkey do not make a client certificate")?
        }
    })
}

fn read_roots(f: &Path, what: &str) -> Result<rustls::RootCertStore> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(f)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| {
            anyhow::anyhow!(
                "{what}: cannot read certificates from {} ({e}); fix sslrootcert or PGSSLROOTCERT",
                f.display()
            )
        })?;
    let mut store = rustls::RootCertStore::empty();
    let (added, _) = store.add_parsable_certificates(certs);
    if added == 0 {
        bail!(
            "{what}: no certificate in {}; fix sslrootcert or PGSSLROOTCERT",
            f.display()
        );
    }
    Ok(store)
}

/// libpq's rule for the client key: `0600` or less, or `0640` or less when root owns it.
fn check_key_mode(key: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(key).map_err(|e| {
        anyhow::anyhow!(
            "sslkey: cannot read {} ({e}); fix sslkey or PGSSLKEY",
            key.display()
        )
    })?;
    let allowed = if m.uid() == 0 { 0o640 } else { 0o600 };
    if m.mode() & 0o777 & !allowed != 0 {
        bail!(
            "sslkey: private key file \"{}\" has group or world access; file must have permissions u=rw (0600) or less if owned by the current user, or u=rw,g=r (0640) or less if owned by root",
            key.display()
        );
    }
    Ok(())
}

/// libpq's certificate check: none (`require`/`prefer` without a root file, as in libpq), the
/// chain against the roots, or the chain and the host name (`verify-full`). The handshake's
/// signatures are always checked.
#[derive(Debug)]
struct Check {
    provider: Arc<CryptoProvider>,
    chain: Option<Arc<rustls::client::WebPkiServerVerifier>>,
    check_name: bool,
}

impl ServerCertVerifier for Check {
    fn verify_server_cert(
        &self,
        end: &CertificateDer<'_>,
        inter: &[CertificateDer<'_>],
        name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end, inter, name, ocsp, now) {
            Err(TlsError::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            r => r,
        }
    }
    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        verify_tls12_signature(m, c, d, &self.provider.signature_verification_algorithms)
    }
    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        verify_tls13_signature(m, c, d, &self.provider.signature_verification_algorithms)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The `postgres` crate's TLS hook on tokio-rustls. No channel binding: the client says so, and
/// SCRAM runs without it (what `channel_binding=prefer` allows).
#[derive(Clone)]
struct MakeRustls(Arc<rustls::ClientConfig>);

struct RustlsConnect {
    host: String,
    config: Arc<rustls::ClientConfig>,
}

struct RustlsStream<S>(tokio_rustls::client::TlsStream<S>);

type Io = std::io::Result<()>;

impl<S> postgres::tls::MakeTlsConnect<S> for MakeRustls
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type TlsConnect = RustlsConnect;
    type Error = std::convert::Infallible;

    fn make_tls_connect(&mut self, host: &str) -> Result<RustlsConnect, Self::Error> {
        Ok(RustlsConnect {
            host: host.to_string(),
            config: self.0.clone(),
        })
    }
}

impl<S> postgres::tls::TlsConnect<S> for RustlsConnect
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type Error = std::io::Error;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = std::io::Result<RustlsStream<S>>> + Send>,
    >;

    fn connect(self, stream: S) -> Self::Future {
        Box::pin(async move {
            let name = ServerName::try_from(self.host)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
            let tls = tokio_rustls::TlsConnector::from(self.config)
                .connect(name, stream)
                .await?;
            Ok(RustlsStream(tls))
        })
    }
}

impl<S> postgres::tls::TlsStream for RustlsStream<S>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    fn channel_binding(&self) -> postgres::tls::ChannelBinding {
        postgres::tls::ChannelBinding::none()
    }
}

impl<S> tokio::io::AsyncRead for RustlsStream<S>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<Io> {
        std::pin::Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<S> tokio::io::AsyncWrite for RustlsStream<S>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.0).poll_write(cx, buf)
    }
    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Io> {
        std::pin::Pin::new(&mut self.0).poll_flush(cx)
    }
    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Io> {
        std::pin::Pin::new(&mut self.0).poll_shutdown(cx)
    }
}
