//! Taking confinement layers away from the real binary, as a container
//! would, rather than trusting the probe: the binary runs under a seccomp
//! filter of the test's, installed between fork and exec, that makes
//! `landlock_create_ruleset` fail with ENOSYS (gVisor; a kernel without
//! Landlock) and `unshare`/`clone` with `CLONE_NEWUSER` fail with EPERM
//! (Docker's default profile). `clone3`, whose flags a filter cannot read,
//! fails with ENOSYS, on which libc falls back to `clone`.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// The layers taken away.
#[derive(Debug, Clone, Copy, Default)]
pub struct Without {
    pub landlock: bool,
    pub user_namespaces: bool,
}

fn compile(rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32) -> BpfProgram {
    let arch = TargetArch::try_from(std::env::consts::ARCH).expect("a seccomp architecture");
    let filter =
        SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(errno as u32), arch)
            .expect("filter");
    BpfProgram::try_from(filter).expect("bpf")
}

impl Without {
    /// The filters: what fails with ENOSYS, what with EPERM.
    fn programs(self) -> Vec<BpfProgram> {
        let mut missing: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        missing.insert(libc::SYS_clone3, Vec::new());
        if self.landlock {
            for nr in [
                libc::SYS_landlock_create_ruleset,
                libc::SYS_landlock_add_rule,
                libc::SYS_landlock_restrict_self,
            ] {
                missing.insert(nr, Vec::new());
            }
        }
        let mut programs = vec![compile(missing, libc::ENOSYS)];
        if self.user_namespaces {
            let new_user = libc::CLONE_NEWUSER as u64;
            let mut refused: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
            for nr in [libc::SYS_unshare, libc::SYS_clone] {
                let cond = SeccompCondition::new(
                    0,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::MaskedEq(new_user),
                    new_user,
                )
                .expect("condition");
                refused.insert(nr, vec![SeccompRule::new(vec![cond]).expect("rule")]);
            }
            programs.push(compile(refused, libc::EPERM));
        }
        programs
    }

    /// `program` under these filters, as `nobody` when the tests run as
    /// root (confined tools are run as a normal user: docs/CONFINEMENT.md).
    pub fn command(self, program: &Path) -> Command {
        let programs = self.programs();
        let mut command = Command::new(program);
        if super::is_root() {
            // std drops the supplementary groups before setuid.
            command.uid(super::procs::NOBODY).gid(super::procs::NOBODY);
        }
        // SAFETY: between fork and exec the hook only makes system calls
        // (prctl and seccomp, through seccompiler) on programs built before
        // the fork.
        unsafe {
            command.pre_exec(move || {
                for program in &programs {
                    seccompiler::apply_filter(program).map_err(std::io::Error::other)?;
                }
                Ok(())
            });
        }
        command
    }
}

/// Whether the kernel gives every layer when the test takes none away
/// (`doctor` exits 0): a machine that already lacks one cannot show it
/// taken away, which is said, not passed in silence.
pub fn every_layer_here(env: &super::Env) -> bool {
    let out = Without::default()
        .command(&env.link("ikigai-tools"))
        .arg("doctor")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run doctor");
    let complete = out.status.code() == Some(0);
    if !complete {
        super::skipped(&format!(
            "this kernel already lacks a layer:\n{}",
            String::from_utf8_lossy(&out.stdout)
        ));
    }
    complete
}
