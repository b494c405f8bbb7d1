//! The CA certificates a fetch trusts: the system's (rustls-native-certs),
//! plus the file of [`super::CA_VAR`]; webpki-roots' only when the system
//! has none.
