//! The confinement report (`ikigai-tools doctor`, the MCP server's start;
//! docs/CONFINEMENT.md, "What doctor reports"): each layer the kernel and
//! the container give bash's sandbox and the file tools, available or not
//! and why (the errno or the setting that said so), and what a confined
//! call will therefore do, failing closed and with
//! `IKIGAI_TOOLS_CONFINE=outer`.
//!
//! [`Facts`] are what `probe` found; [`Report::from_facts`] judges them
//! without touching the kernel, so that every verdict can be tested.

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::outer::{CONFINE_VAR, OUTER};
use super::probe::{self, MIN_FS_ABI, NET_ABI};
use super::{landlock::SCOPE_ABI, NETWORK_VAR};

/// What the probes found, with the settings that explain a refusal.
#[derive(Debug, Clone)]
pub struct Facts {
    /// The kernel's release (`/proc/sys/kernel/osrelease`).
    pub kernel: String,
    /// The errno openat2 with RESOLVE_BENEATH was refused with.
    pub openat2: Option<i32>,
    /// The Landlock ABI, or the errno.
    pub landlock: Result<i32, i32>,
    pub seccomp: Result<(), i32>,
    pub user_namespace: Result<(), i32>,
    pub mount_namespace: Result<(), i32>,
    /// This process runs under a seccomp filter (a container's): an ENOSYS
    /// or EPERM may be its doing.
    pub filtered: bool,
    /// `kernel.unprivileged_userns_clone` (Debian's, older kernels).
    pub unprivileged_userns_clone: Option<String>,
    /// `user.max_user_namespaces`.
    pub max_user_namespaces: Option<String>,
    /// `kernel.apparmor_restrict_unprivileged_userns` (Ubuntu's).
    pub apparmor_restrict: Option<String>,
    /// `IKIGAI_TOOLS_NETWORK=on`: bash keeps TCP, so needs less Landlock.
    pub network: bool,
}

/// One layer: available or not, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    /// The JSON name (`openat2`, `landlock`, `user_namespace` …).
    pub name: &'static str,
    /// The name a person reads.
    pub label: &'static str,
    pub available: bool,
    /// What it gives, or why it is missing.
    pub detail: String,
}

/// What a confined call of a kind will do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub runs: bool,
    /// The layers in force when it runs.
    pub layers: Vec<&'static str>,
    /// One sentence: under what it runs, or why it is refused.
    pub detail: String,
}

/// The whole report.
#[derive(Debug, Clone)]
pub struct Report {
    pub kernel: String,
    pub layers: Vec<Layer>,
    /// `IKIGAI_TOOLS_CONFINE=outer` is in force in this process.
    pub outer: bool,
    pub network: bool,
    pub file_tools: Verdict,
    /// bash failing closed (without the setting).
    pub bash: Verdict,
    /// bash with `IKIGAI_TOOLS_CONFINE=outer`.
    pub bash_outer: Verdict,
}

/// How the report ends a `doctor` run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Every layer is there.
    Complete,
    /// Some layer is missing; every confined call still runs.
    Reduced,
    /// A confined call is refused here (in the mode in force).
    Refusing,
}

impl Facts {
    /// Asks this kernel and container (a few system calls and two forked
    /// children; no shell is run).
    pub fn probe() -> Facts {
        let read = |path: &str| std::fs::read_to_string(path).ok().map(|s| s.trim().to_owned());
        let filtered = read("/proc/self/status").is_some_and(|status| {
            status.lines().any(|l| l.starts_with("Seccomp:") && l.trim_end().ends_with('2'))
        });
        Facts {
            kernel: read("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".to_owned()),
            openat2: probe::openat2_refused(),
            landlock: probe::landlock_version(),
            seccomp: probe::seccomp_available(),
            user_namespace: probe::user_namespace(),
            mount_namespace: probe::mount_namespace(),
            filtered,
            unprivileged_userns_clone: read("/proc/sys/kernel/unprivileged_userns_clone"),
            max_user_namespaces: read("/proc/sys/user/max_user_namespaces"),
            apparmor_restrict: read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
            network: std::env::var_os(NETWORK_VAR).is_some_and(|v| v == "on"),
        }
    }
}

/// `EPERM`, `ENOSYS` …: the errno's name.
fn name(errno: i32) -> String {
    format!("{:?}", nix::errno::Errno::from_raw(errno))
}

impl Facts {
    fn by_filter(&self) -> &'static str {
        if self.filtered {
            "a seccomp filter of the container refused it"
        } else {
            "refused"
        }
    }

    fn openat2_layer(&self) -> Layer {
        let detail = match self.openat2 {
            None => "RESOLVE_BENEATH works".to_owned(),
            Some(libc::ENOSYS) if !self.filtered => {
                "ENOSYS: the kernel predates openat2 (Linux 5.6), or is gVisor before 2026-09"
                    .to_owned()
            }
            Some(e) => format!("{}: {}", name(e), self.by_filter()),
        };
        Layer {
            name: "openat2",
            label: "openat2 RESOLVE_BENEATH",
            available: self.openat2.is_none(),
            detail,
        }
    }

    fn landlock_layers(&self) -> [Layer; 3] {
        let (available, detail) = match self.landlock {
            Ok(abi) if abi >= MIN_FS_ABI => (true, format!("ABI {abi}")),
            Ok(abi) => (false, format!("ABI {abi}; bash needs ABI {MIN_FS_ABI} (Linux 6.2)")),
            Err(libc::EOPNOTSUPP) => (
                false,
                "EOPNOTSUPP: built in but not enabled at boot (add landlock to lsm=)".to_owned(),
            ),
            Err(libc::ENOSYS) if self.filtered => (
                false,
                "ENOSYS: not in the kernel, or hidden by a seccomp filter of the container \
                 (gVisor has none)"
                    .to_owned(),
            ),
            Err(libc::ENOSYS) => {
                (false, "ENOSYS: not built into the kernel (gVisor has none)".to_owned())
            }
            Err(e) => (false, format!("{}: {}", name(e), self.by_filter())),
        };
        let abi = self.landlock.unwrap_or(0);
        let since = |need: i32, linux: &str, gives: &str| {
            if abi >= need {
                (true, gives.to_owned())
            } else if abi > 0 {
                (false, format!("needs ABI {need} (Linux {linux}); this kernel has ABI {abi}"))
            } else {
                (false, format!("needs Landlock ABI {need} (Linux {linux})"))
            }
        };
        let (tcp, tcp_detail) = since(NET_ABI, "6.7", "TCP bind and connect refused");
        let (scopes, scopes_detail) =
            since(SCOPE_ABI, "6.12", "signals and abstract Unix sockets kept inside");
        [
            Layer { name: "landlock", label: "Landlock", available, detail },
            Layer {
                name: "landlock_tcp",
                label: "Landlock TCP rules",
                available: tcp,
                detail: tcp_detail,
            },
            Layer {
                name: "landlock_scopes",
                label: "Landlock scopes",
                available: scopes,
                detail: scopes_detail,
            },
        ]
    }

    fn seccomp_layer(&self) -> Layer {
        let detail = match self.seccomp {
            Ok(()) if self.filtered => "filters can be added (the container has one)".to_owned(),
            Ok(()) => "filters can be installed".to_owned(),
            Err(e) => format!("{}: no seccomp filters (CONFIG_SECCOMP_FILTER)", name(e)),
        };
        Layer { name: "seccomp", label: "seccomp", available: self.seccomp.is_ok(), detail }
    }

    fn user_namespace_layer(&self) -> Layer {
        let sysctl = |value: &Option<String>, zero: &str| {
            (value.as_deref() == Some("0")).then(|| zero.to_owned())
        };
        let detail = match self.user_namespace {
            Ok(()) => "unshare(CLONE_NEWUSER) works".to_owned(),
            Err(e) => {
                let why =
                    sysctl(&self.unprivileged_userns_clone, "kernel.unprivileged_userns_clone=0")
                        .or_else(|| sysctl(&self.max_user_namespaces, "user.max_user_namespaces=0"))
                        .unwrap_or_else(|| match e {
                            libc::ENOSPC => {
                                "the user's count (user.max_user_namespaces) is used up".to_owned()
                            }
                            libc::EUSERS => "nested too deep (32 user namespaces)".to_owned(),
                            libc::EINVAL => {
                                "the kernel has no user namespaces (CONFIG_USER_NS)".to_owned()
                            }
                            _ if self.filtered => {
                                "a seccomp filter of the container refused unshare".to_owned()
                            }
                            _ => "unshare(CLONE_NEWUSER) refused".to_owned(),
                        });
                format!("{}: {why}", name(e))
            }
        };
        Layer {
            name: "user_namespace",
            label: "user namespaces",
            available: self.user_namespace.is_ok(),
            detail,
        }
    }

    fn mount_namespace_layer(&self) -> Layer {
        let detail = match (self.user_namespace, self.mount_namespace) {
            (_, Ok(())) => "the outside read-only, IPC of its own".to_owned(),
            (Err(_), Err(_)) => "made inside a user namespace, which is missing".to_owned(),
            (Ok(()), Err(e)) if self.apparmor_restrict.as_deref() == Some("1") => format!(
                "{}: AppArmor restricts unprivileged user namespaces \
                 (kernel.apparmor_restrict_unprivileged_userns=1)",
                name(e)
            ),
            (Ok(()), Err(libc::ENOSYS)) => "ENOSYS: mount_setattr needs Linux 5.12".to_owned(),
            (Ok(()), Err(e)) => format!("{}: making the mounts read-only was refused", name(e)),
        };
        Layer {
            name: "mount_namespace",
            label: "mount namespaces",
            available: self.mount_namespace.is_ok(),
            detail,
        }
    }
}

/// The report of this process, probed once: the MCP server probes it at
/// start, before it starts threads, and its sessions' instructions read it.
pub fn shared() -> &'static Report {
    static REPORT: std::sync::OnceLock<Report> = std::sync::OnceLock::new();
    REPORT.get_or_init(Report::probe)
}

impl Report {
    /// Probes this kernel and container.
    pub fn probe() -> Report {
        Report::from_facts(&Facts::probe(), super::outer::outer())
    }

    /// The report on `facts`, `outer` being the mode in force.
    pub fn from_facts(facts: &Facts, outer: bool) -> Report {
        let mut layers = vec![facts.openat2_layer()];
        layers.extend(facts.landlock_layers());
        layers.push(facts.seccomp_layer());
        layers.push(facts.user_namespace_layer());
        layers.push(facts.mount_namespace_layer());
        let file_tools = match facts.openat2 {
            None => Verdict {
                runs: true,
                layers: vec!["openat2"],
                detail: "confined by openat2 (RESOLVE_BENEATH)".to_owned(),
            },
            Some(_) => Verdict {
                runs: false,
                layers: Vec::new(),
                detail: "refused: they need openat2 (Linux 5.6), which nothing replaces".to_owned(),
            },
        };
        Report {
            kernel: facts.kernel.clone(),
            layers,
            outer,
            network: facts.network,
            file_tools,
            bash: bash_verdict(facts, false),
            bash_outer: bash_verdict(facts, true),
        }
    }

    /// The missing layers.
    pub fn missing(&self) -> impl Iterator<Item = &Layer> {
        self.layers.iter().filter(|l| !l.available)
    }

    /// bash in the mode in force.
    pub fn bash_in_force(&self) -> &Verdict {
        if self.outer {
            &self.bash_outer
        } else {
            &self.bash
        }
    }

    pub fn standing(&self) -> Standing {
        if !self.file_tools.runs || !self.bash_in_force().runs {
            Standing::Refusing
        } else if self.missing().next().is_some() {
            Standing::Reduced
        } else {
            Standing::Complete
        }
    }

    /// For a person.
    pub fn text(&self) -> String {
        let mut out =
            format!("Confinement on Linux {} (what allowed roots get here):\n", self.kernel);
        for layer in &self.layers {
            let yes = if layer.available { "yes" } else { "no " };
            let _ = writeln!(out, "  {:<24} {yes} {}", layer.label, layer.detail);
        }
        let mode = if self.outer { " (in force)" } else { "" };
        let plain = if self.outer { "" } else { " (in force)" };
        let _ = writeln!(out, "A confined call:");
        let _ = writeln!(out, "  file tools: {}", self.file_tools.detail);
        let _ = writeln!(out, "  bash{plain}: {}", self.bash.detail);
        let _ =
            writeln!(out, "  bash with {CONFINE_VAR}={OUTER}{mode}: {}", self.bash_outer.detail);
        out
    }

    /// For a machine: one JSON object.
    pub fn json(&self) -> Value {
        let verdict = |v: &Verdict| json!({"runs": v.runs, "layers": v.layers, "detail": v.detail});
        json!({
            "kernel": self.kernel,
            "layers": self.layers.iter().map(|l| json!({
                "name": l.name, "available": l.available, "detail": l.detail,
            })).collect::<Vec<_>>(),
            "file_tools": verdict(&self.file_tools),
            "bash": verdict(&self.bash),
            "bash_outer": verdict(&self.bash_outer),
            "outer": self.outer,
            "network": self.network,
        })
    }

    /// One line per missing layer, for the MCP server's stderr at start.
    pub fn missing_lines(&self) -> Vec<String> {
        let mut lines: Vec<String> =
            self.missing().map(|l| format!("confinement: no {} ({})", l.label, l.detail)).collect();
        if !lines.is_empty() {
            let mode = if self.outer { format!(" ({CONFINE_VAR}={OUTER})") } else { String::new() };
            lines.push(format!("confinement: bash{mode} {}", self.bash_in_force().detail));
        }
        lines
    }

    /// A sentence for the MCP `instructions`, only where a confined call
    /// runs with fewer layers than bash's three, or is refused: empty
    /// otherwise, so that no host pays for it where all is well.
    pub fn sentence(&self) -> String {
        let bash = self.bash_in_force();
        if self.file_tools.runs && bash.runs && bash.layers.len() == 3 {
            return String::new();
        }
        // The verdict up to its first clause: what it runs under, or why
        // it is refused.
        let verdict = bash.detail.split(';').next().unwrap_or_default();
        let files = if self.file_tools.runs { "" } else { "; confined file tools are refused" };
        let is = if bash.runs { "" } else { "is " };
        format!(" Here confined bash {is}{verdict}{files}.")
    }
}

/// What bash does, failing closed or (`outer`) with every layer there is.
fn bash_verdict(facts: &Facts, outer: bool) -> Verdict {
    let abi = facts.landlock.unwrap_or(0);
    let namespaces = facts.mount_namespace.is_ok();
    if !outer {
        if let Err(e) = facts.seccomp {
            let detail = format!("refused: the kernel gives no seccomp filters ({})", name(e));
            return Verdict { runs: false, layers: Vec::new(), detail };
        }
        if let Err(refusal) = probe::landlock_requirement(abi, facts.network) {
            let why = match refusal {
                super::ConfineError::Unsupported(why) => why,
                other => other.message(),
            };
            return Verdict { runs: false, layers: Vec::new(), detail: format!("refused: {why}") };
        }
    }
    let mut layers = Vec::new();
    if abi >= MIN_FS_ABI {
        layers.push("landlock");
    }
    if facts.seccomp.is_ok() {
        layers.push("seccomp");
    }
    if namespaces {
        layers.push("namespaces");
    }
    let words: Vec<String> = layers
        .iter()
        .map(|layer| match *layer {
            "landlock" => format!("Landlock ABI {abi}"),
            "namespaces" => "its own namespaces".to_owned(),
            other => other.to_owned(),
        })
        .collect();
    let mut detail = match words.as_slice() {
        [] => "runs with no layer of its own: the container is the boundary".to_owned(),
        [one] => format!("runs under {one}"),
        [head @ .., last] => format!("runs under {} and {last}", head.join(", ")),
    };
    if !namespaces && layers.contains(&"landlock") {
        detail.push_str(
            "; without namespaces: metadata outside the roots unprotected, System V IPC refused",
        );
    }
    if !layers.contains(&"landlock") && !layers.is_empty() {
        detail.push_str(if namespaces {
            "; without Landlock: signals and abstract sockets not scoped"
        } else {
            "; without Landlock: it may write wherever the user may"
        });
    }
    Verdict { runs: true, layers, detail }
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
