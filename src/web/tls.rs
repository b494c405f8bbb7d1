//! The CA certificates a fetch trusts: the system's (rustls-native-certs),
//! plus the file of `IKIGAI_TOOLS_FETCH_CA`; webpki-roots' (Mozilla's set,
//! built in) only when the system has none (docs/CONFINEMENT.md, "The web
//! tools' network").

use std::path::Path;

use ureq::tls::{parse_pem, Certificate, PemItem, RootCerts, TlsConfig};

use super::io_reason;
use super::policy::CA_VAR;
use crate::error::ToolError;

/// The TLS settings of a fetch: verification always on, SNI sent.
pub fn config(extra_ca: Option<&Path>) -> Result<TlsConfig, ToolError> {
    let mut certs: Vec<Certificate<'static>> = rustls_native_certs::load_native_certs()
        .certs
        .iter()
        .map(|der| Certificate::from_der(der.as_ref()).to_owned())
        .collect();
    let system_has_none = certs.is_empty();
    if let Some(path) = extra_ca {
        certs.extend(read_ca_file(path)?);
    }
    let roots = if system_has_none && extra_ca.is_none() {
        RootCerts::WebPki
    } else {
        RootCerts::new_with_certs(&certs)
    };
    Ok(TlsConfig::builder().root_certs(roots).build())
}

/// The certificates of a PEM file; a file that cannot be read or holds
/// none is `INVALID_ARG` naming the setting.
fn read_ca_file(path: &Path) -> Result<Vec<Certificate<'static>>, ToolError> {
    let bad = |why: String| {
        ToolError::InvalidArg(format!(
            "{CA_VAR}={}: {why} (a PEM file of CA certificates is needed)",
            path.display()
        ))
    };
    let pem = std::fs::read(path).map_err(|err| bad(io_reason(&err)))?;
    let mut certs = Vec::new();
    for item in parse_pem(&pem) {
        match item {
            Ok(PemItem::Certificate(cert)) => certs.push(cert),
            Ok(_) => {}
            Err(err) => return Err(bad(err.to_string())),
        }
    }
    if certs.is_empty() {
        return Err(bad("it holds no certificate".to_owned()));
    }
    Ok(certs)
}
