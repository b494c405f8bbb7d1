//! `IKIGAI_TOOLS_CONFINE=outer`: "the container is the boundary"
//! (docs/CONFINEMENT.md, "Where a layer is missing"). Where the kernel or
//! the container withholds a layer of bash's sandbox (Landlock under
//! gVisor, seccomp filters, namespaces under Docker's default profile), a
//! confined command runs with every layer that is there instead of being
//! refused; the file tools still need openat2, which nothing replaces.
//! Unset, or any other value, confinement fails closed as it always did.

/// The variable, and the one value that relaxes confinement.
pub const CONFINE_VAR: &str = "IKIGAI_TOOLS_CONFINE";
pub const OUTER: &str = "outer";

/// Whether `IKIGAI_TOOLS_CONFINE=outer` is set for this process.
pub fn outer() -> bool {
    std::env::var_os(CONFINE_VAR).is_some_and(|v| v == OUTER)
}
