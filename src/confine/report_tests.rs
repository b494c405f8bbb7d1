//! The verdicts on facts no test machine gives at will: the settings that
//! explain a missing user namespace, Landlock off at boot or too old, no
//! seccomp filters, and what bash does then in each mode.

use super::*;

/// Every layer there, as on a plain VM with Linux 6.12.
fn complete() -> Facts {
    Facts {
        kernel: "6.12.0".to_owned(),
        openat2: None,
        landlock: Ok(6),
        seccomp: Ok(()),
        user_namespace: Ok(()),
        mount_namespace: Ok(()),
        filtered: false,
        unprivileged_userns_clone: None,
        max_user_namespaces: Some("63000".to_owned()),
        apparmor_restrict: None,
        network: false,
    }
}

fn detail(report: &Report, name: &str) -> String {
    report.layers.iter().find(|l| l.name == name).map(|l| l.detail.clone()).unwrap_or_default()
}

#[test]
fn a_complete_kernel_adds_nothing_to_the_instructions_and_stands_complete() {
    let report = Report::from_facts(&complete(), false);
    assert_eq!(report.standing(), Standing::Complete);
    assert_eq!(report.sentence(), "");
    assert!(report.missing_lines().is_empty());
    assert_eq!(report.bash.detail, "runs under Landlock ABI 6, seccomp and its own namespaces");
}

#[test]
fn a_missing_user_namespace_names_the_setting_that_took_it() {
    let cases = [
        (Some("0"), None, libc::EPERM, "EPERM: kernel.unprivileged_userns_clone=0"),
        (None, Some("0"), libc::ENOSPC, "ENOSPC: user.max_user_namespaces=0"),
        (
            None,
            Some("10"),
            libc::ENOSPC,
            "ENOSPC: the user's count (user.max_user_namespaces) is used up",
        ),
        (None, None, libc::EPERM, "EPERM: unshare(CLONE_NEWUSER) refused"),
    ];
    for (clone, max, errno, want) in cases {
        let facts = Facts {
            user_namespace: Err(errno),
            mount_namespace: Err(errno),
            unprivileged_userns_clone: clone.map(str::to_owned),
            max_user_namespaces: max.map(str::to_owned),
            ..complete()
        };
        let report = Report::from_facts(&facts, false);
        assert_eq!(detail(&report, "user_namespace"), want);
        assert_eq!(report.standing(), Standing::Reduced);
    }
}

#[test]
fn apparmor_restricting_user_namespaces_is_named_on_the_mount_namespace() {
    let facts = Facts {
        mount_namespace: Err(libc::EACCES),
        apparmor_restrict: Some("1".to_owned()),
        ..complete()
    };
    let report = Report::from_facts(&facts, false);
    assert_eq!(
        detail(&report, "mount_namespace"),
        "EACCES: AppArmor restricts unprivileged user namespaces \
         (kernel.apparmor_restrict_unprivileged_userns=1)"
    );
}

#[test]
fn landlock_off_at_boot_refuses_bash_unless_outer() {
    let facts = Facts { landlock: Err(libc::EOPNOTSUPP), ..complete() };
    let report = Report::from_facts(&facts, false);
    assert_eq!(
        detail(&report, "landlock"),
        "EOPNOTSUPP: built in but not enabled at boot (add landlock to lsm=)"
    );
    assert_eq!(report.standing(), Standing::Refusing);
    assert!(!report.bash.runs);
    let outer = Report::from_facts(&facts, true);
    assert_eq!(outer.standing(), Standing::Reduced);
    assert_eq!(outer.bash_outer.layers, ["seccomp", "namespaces"]);
    assert_eq!(outer.sentence(), " Here confined bash runs under seccomp and its own namespaces.");
}

#[test]
fn landlock_abi_3_with_the_network_shut_runs_its_file_rules_under_outer() {
    let facts = Facts { landlock: Ok(3), ..complete() };
    let report = Report::from_facts(&facts, false);
    assert!(report
        .bash
        .detail
        .starts_with("refused: the kernel has Landlock ABI 3, but shutting TCP"));
    assert_eq!(report.bash_outer.layers, ["landlock", "seccomp", "namespaces"]);
    let open = Report::from_facts(&Facts { network: true, ..facts }, false);
    assert!(open.bash.runs, "{}", open.bash.detail);
}

#[test]
fn no_seccomp_filters_refuse_bash_unless_outer() {
    let facts = Facts { seccomp: Err(libc::EINVAL), ..complete() };
    let report = Report::from_facts(&facts, false);
    assert_eq!(report.bash.detail, "refused: the kernel gives no seccomp filters (EINVAL)");
    assert_eq!(report.bash_outer.layers, ["landlock", "namespaces"]);
}

#[test]
fn without_openat2_the_file_tools_are_refused_in_either_mode() {
    let facts = Facts { openat2: Some(libc::ENOSYS), ..complete() };
    for outer in [false, true] {
        let report = Report::from_facts(&facts, outer);
        assert!(!report.file_tools.runs);
        assert_eq!(report.standing(), Standing::Refusing);
        assert_eq!(
            report.sentence(),
            " Here confined bash runs under Landlock ABI 6, seccomp and its own namespaces; \
             confined file tools are refused."
        );
    }
}
