//! Every escape class of docs/CONFINEMENT.md against reading and writing
//! beneath a root, each also shown to escape without
//! confinement (so the test can fail), links that stay inside, a root that
//! is a link, relative paths, and the rename race.

use std::fs;
use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use rustix::fs::{openat, renameat_with, Mode, OFlags, RenameFlags};

use super::*;

const SECRET: &str = "SECRET outside the root";
const INSIDE: &str = "inside the root";

/// `t/root` (the root), `t/outside` (what must stay out of reach),
/// `t/root_evil` (a prefix look-alike), and links of every kind in the root.
struct Fixture {
    _tmp: tempfile::TempDir,
    t: PathBuf,
    root: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path().canonicalize().unwrap();
        let root = t.join("root");
        for dir in ["root/sub", "outside", "root_evil"] {
            fs::create_dir_all(t.join(dir)).unwrap();
        }
        fs::write(t.join("outside/secret.txt"), SECRET).unwrap();
        fs::write(t.join("root_evil/secret.txt"), SECRET).unwrap();
        fs::write(root.join("inside.txt"), INSIDE).unwrap();
        fs::write(root.join("sub/deep.txt"), INSIDE).unwrap();
        let links: [(&str, PathBuf); 19] = [
            ("leaf_out", "../outside/secret.txt".into()),
            ("leaf_abs_out", t.join("outside/secret.txt")),
            ("dir_out", "../outside".into()),
            ("chain1", "chain2".into()),
            ("chain2", "sub/chain3".into()),
            ("sub/chain3", "../../outside/secret.txt".into()),
            ("dangling_out", "../outside/new.txt".into()),
            ("proc_root", "/proc/self/root".into()),
            ("proc_cwd", "/proc/self/cwd".into()),
            ("leaf_in", "inside.txt".into()),
            ("sub/up", "../inside.txt".into()),
            ("dir_in", "sub".into()),
            ("dangling_in", "created.txt".into()),
            ("chain_in", "leaf_in".into()),
            ("abs_in", root.join("inside.txt")),
            ("abs_dir_in", root.join("sub")),
            ("abs_dangling_in", root.join("made.txt")),
            ("sub/abs_chain_in", root.join("abs_in")),
            ("abs_climb_out", root.join("../outside/secret.txt")),
        ];
        for (name, target) in links {
            symlink(target, root.join(name)).unwrap();
        }
        Fixture { _tmp: tmp, t, root }
    }

    /// The roots, with the working directory at the root.
    fn roots(&self) -> Roots {
        Roots::from_paths_in([&self.root], Some(&self.root)).unwrap()
    }

    /// `path` as an unconfined tool opens it (relative to the root, where
    /// the working directory is).
    fn unconfined(&self, path: &str) -> PathBuf {
        self.root.join(path)
    }

    /// Whether `path`, opened unconfined, leads outside the root: where the
    /// kernel ends up for an existing file, or where writing would create
    /// one for a new (or dangling) name.
    fn escapes_unconfined(&self, path: &str) -> bool {
        let p = self.unconfined(path);
        let landed = match fs::canonicalize(&p) {
            Ok(real) => real,
            Err(_) => {
                // New or dangling: where `echo > path` would create it.
                let mut target = p.clone();
                while let Ok(next) = fs::read_link(&target) {
                    target = target.parent().unwrap().join(next);
                }
                let parent = fs::canonicalize(target.parent().unwrap()).unwrap();
                parent.join(target.file_name().unwrap())
            }
        };
        !landed.starts_with(&self.root)
    }
}

/// Every escape class of the contract, spelled as the model may spell it.
fn escapes(f: &Fixture) -> Vec<(&'static str, String)> {
    let t = f.t.display();
    vec![
        ("dot-dot out", "../outside/secret.txt".to_owned()),
        ("dot-dot out from deeper", "sub/../../outside/secret.txt".to_owned()),
        ("absolute path outside", format!("{t}/outside/secret.txt")),
        ("absolute path with dot-dot", format!("{t}/root/../outside/secret.txt")),
        ("prefix look-alike", format!("{t}/root_evil/secret.txt")),
        ("link out as the leaf", "leaf_out".to_owned()),
        ("absolute link out as the leaf", "leaf_abs_out".to_owned()),
        ("link out as a directory", "dir_out/secret.txt".to_owned()),
        ("link out at the end of a chain", "chain1".to_owned()),
        ("dangling link out", "dangling_out".to_owned()),
        ("/proc/self/root", format!("/proc/self/root{t}/outside/secret.txt")),
        ("/proc/self/cwd/..", "/proc/self/cwd/../outside/secret.txt".to_owned()),
        ("link to /proc/self/root", format!("proc_root{t}/outside/secret.txt")),
        ("link to /proc/self/cwd", "proc_cwd/../outside/secret.txt".to_owned()),
        (
            "dot-dot out after an absolute link inside",
            "abs_dir_in/../../outside/secret.txt".to_owned(),
        ),
    ]
}

/// Escapes that only exist for writing: a new file.
fn write_escapes(f: &Fixture) -> Vec<(&'static str, String)> {
    let mut all = escapes(f);
    all.push(("new file under a linked directory", "dir_out/new.txt".to_owned()));
    all.push(("new file by dot-dot", "../outside/new.txt".to_owned()));
    all
}

fn assert_refused(roots: &Roots, what: &str, path: &str, err: ConfineError) {
    match &err {
        ConfineError::Outside { path: p, roots: r, .. } => {
            assert_eq!(p, path, "{what}");
            assert_eq!(r, &roots.shown(), "{what}");
            let message = err.message();
            assert!(message.contains("outside the allowed roots"), "{what}: {message}");
            assert!(message.contains(&roots.shown()), "{what}: {message}");
        }
        other => panic!("{what} ({path}): refused with {other:?}, not as outside the roots"),
    }
}

#[test]
fn every_escape_class_is_refused_for_reading() {
    let f = Fixture::new();
    let roots = f.roots();
    for (what, path) in escapes(&f) {
        match roots.open_read(&path) {
            Ok(mut file) => {
                let mut got = String::new();
                let _ = file.read_to_string(&mut got);
                panic!("{what} ({path}) was opened: {got:?}");
            }
            Err(err) => assert_refused(&roots, what, &path, err),
        }
    }
}

#[test]
fn every_escape_class_is_refused_for_writing() {
    let f = Fixture::new();
    let roots = f.roots();
    for (what, path) in write_escapes(&f) {
        match roots.open_parent(&path) {
            Ok(parent) => panic!("{what} ({path}) gave a directory to write in: {parent:?}"),
            Err(err) => assert_refused(&roots, what, &path, err),
        }
    }
    assert!(!f.t.join("outside/new.txt").exists());
}

/// The other half of each escape test: without confinement the same
/// spelling does reach outside, so the tests above would fail if the
/// protection were off (a plain open in place of openat2).
#[test]
fn without_confinement_every_escape_class_reaches_outside() {
    let f = Fixture::new();
    for (what, path) in write_escapes(&f) {
        if path.contains("cwd") {
            // Relative to the test's own working directory, not the root;
            // a tool whose working directory is the root would get out.
            continue;
        }
        assert!(f.escapes_unconfined(&path), "{what} ({path}) stays inside even unconfined");
    }
    for (what, path) in escapes(&f) {
        if path.contains("new.txt") || path.starts_with("dangling") || path.contains("cwd") {
            continue;
        }
        let read = fs::read_to_string(f.unconfined(&path));
        assert_eq!(read.as_deref().ok(), Some(SECRET), "{what} ({path})");
    }
    // And a dangling link out, written unconfined, creates a file outside.
    fs::write(f.unconfined("dangling_out"), "x").unwrap();
    assert!(f.t.join("outside/new.txt").exists());
}

#[test]
fn links_that_stay_inside_work() {
    let f = Fixture::new();
    let roots = f.roots();
    for path in
        ["inside.txt", "leaf_in", "chain_in", "sub/up", "dir_in/deep.txt", "sub/../inside.txt"]
    {
        let mut got = String::new();
        let mut file = roots.open_read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        file.read_to_string(&mut got).unwrap();
        assert_eq!(got, INSIDE, "{path}");
    }
    let abs = f.root.join("dir_in/deep.txt");
    assert!(roots.open_read(abs.to_str().unwrap()).is_ok());
    // The root itself and a directory below it open as directories.
    assert_eq!(roots.open_dir(f.root.to_str().unwrap()).unwrap().rel, PathBuf::new());
    assert_eq!(roots.open_dir("dir_in").unwrap().rel, PathBuf::from("dir_in"));
    assert!(roots.open_dir("abs_dir_in").is_ok());
}

#[test]
fn writing_through_links_inside_reaches_the_final_name() {
    let f = Fixture::new();
    let roots = f.roots();
    let cases = [
        ("inside.txt", "", "inside.txt"),
        ("leaf_in", "", "inside.txt"),
        ("chain_in", "", "inside.txt"),
        ("sub/up", "", "inside.txt"),
        ("dir_in/new.txt", "sub", "new.txt"),
        ("dangling_in", "", "created.txt"),
        ("abs_in", "", "inside.txt"),
        ("sub/abs_chain_in", "", "inside.txt"),
        ("abs_dir_in/new.txt", "sub", "new.txt"),
        ("abs_dangling_in", "", "made.txt"),
    ];
    for (path, dir, name) in cases {
        let parent = roots.open_parent(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(parent.name, name, "{path}");
        let expected = rustix::fs::stat(f.root.join(dir)).unwrap().st_ino;
        assert_eq!(rustix::fs::fstat(&parent.dir).unwrap().st_ino, expected, "{path}");
    }
    // A dangling link inside creates its target inside, as `echo > link`.
    let parent = roots.open_parent("dangling_in").unwrap();
    assert_eq!(parent.stat_leaf().unwrap_err().raw_os_error(), Some(libc::ENOENT));
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    drop(openat(&parent.dir, parent.name.as_os_str(), flags, Mode::from_raw_mode(0o644)).unwrap());
    assert!(f.root.join("created.txt").is_file());
    // The leaf opens through the parent, never through a link put there.
    let parent = roots.open_parent("leaf_in").unwrap();
    assert!(parent.open_leaf(OFlags::RDONLY, Mode::empty()).is_ok());
    // A directory is not a file to write.
    let err = roots.open_parent("sub/..").unwrap_err();
    assert!(
        matches!(&err, ConfineError::Io(e) if e.raw_os_error() == Some(libc::EISDIR)),
        "{err:?}"
    );
}

#[test]
fn a_root_that_is_a_link_works_by_either_name() {
    let f = Fixture::new();
    let link = f.t.join("rootlink");
    symlink(&f.root, &link).unwrap();
    let roots = Roots::from_paths_in([&link], None).unwrap();
    assert_eq!(roots.roots()[0].path(), f.root);
    for path in [link.join("inside.txt"), f.root.join("inside.txt")] {
        assert!(roots.open_read(path.to_str().unwrap()).is_ok(), "{}", path.display());
    }
    assert!(roots.open_read("leaf_in").is_ok());
    for (what, path) in escapes(&f) {
        if path.starts_with("/") || path.starts_with('.') {
            if let Ok(file) = roots.open_read(&path) {
                panic!("{what} ({path}) was opened: {file:?}");
            }
        }
    }
    let through_link = format!("{}/../outside/secret.txt", link.display());
    assert!(roots.open_read(&through_link).unwrap_err().is_refusal());
}

#[test]
fn relative_paths_follow_the_working_directory_inside_else_the_first_root() {
    let f = Fixture::new();
    let sub = f.root.join("sub");
    let in_sub = Roots::from_paths_in([&f.root], Some(&sub)).unwrap();
    assert_eq!(in_sub.working_dir(), sub);
    assert!(in_sub.open_read("deep.txt").is_ok());
    assert!(in_sub.open_read("../inside.txt").is_ok());
    assert!(in_sub.open_read("../../outside/secret.txt").unwrap_err().is_refusal());
    let elsewhere = Roots::from_paths_in([&f.root], Some(Path::new("/"))).unwrap();
    assert_eq!(elsewhere.working_dir(), f.root);
    assert!(elsewhere.open_read("inside.txt").is_ok());
    assert!(elsewhere.open_read("sub/deep.txt").is_ok());
    // Two roots: relative paths go to the first; absolute ones to theirs.
    let two = Roots::from_paths_in([f.root.join("sub"), f.t.join("root_evil")], None).unwrap();
    assert!(two.open_read("deep.txt").is_ok());
    assert!(two.open_read(f.t.join("root_evil/secret.txt").to_str().unwrap()).is_ok());
    assert!(!two.open_read("secret.txt").unwrap_err().is_refusal());
}

#[test]
fn the_walker_opens_links_inside_and_refuses_links_out() {
    let f = Fixture::new();
    let roots = f.roots();
    let dir = roots.open_dir(".").unwrap();
    // An entry that is not a link opens from its directory.
    let flags = OFlags::RDONLY;
    assert!(open_entry(dir.fd.as_fd(), "inside.txt".as_ref(), flags).is_ok());
    // An entry that is a link is never followed from its directory …
    let err = open_entry(dir.fd.as_fd(), "leaf_in".as_ref(), flags).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ELOOP));
    assert!(open_entry(dir.fd.as_fd(), "..".as_ref(), flags).is_err());
    // … but by its path from the root: inside works, out is refused.
    assert!(roots.open_below(dir.root, Path::new("leaf_in"), flags).is_ok());
    assert!(roots.open_below(dir.root, Path::new("dir_in"), flags | OFlags::DIRECTORY).is_ok());
    for out in ["leaf_out", "dir_out", "chain1", "proc_root"] {
        let err = roots.open_below(dir.root, Path::new(out), flags).unwrap_err();
        assert!(err.is_refusal(), "{out}: {err:?}");
    }
    assert!(roots.open_dir("dir_out").unwrap_err().is_refusal());
    assert!(roots.open_dir("..").unwrap_err().is_refusal());
}

/// A directory inside the root (`d`, holding `f`) and a link out of it
/// (`swap` → the outside directory holding an `f` too) trade places in a
/// tight loop while `d/f` is read: not one read may return the outside.
/// The same read unconfined, in the same loop, does leak (counted).
#[test]
fn renaming_a_link_into_place_during_reads_never_leaks() {
    race(500, false);
}

/// The same with an absolute link, which takes the component walk.
#[test]
fn renaming_an_absolute_link_into_place_during_reads_never_leaks() {
    race(500, true);
}

#[test]
#[ignore = "long trial: 20000 reads of the rename race"]
fn renaming_a_link_into_place_during_reads_never_leaks_long() {
    race(20_000, false);
    race(20_000, true);
}

fn race(min_reads: usize, absolute: bool) {
    let f = Fixture::new();
    fs::create_dir(f.root.join("d")).unwrap();
    fs::write(f.root.join("d/f"), INSIDE).unwrap();
    fs::write(f.t.join("outside/f"), SECRET).unwrap();
    let out: PathBuf = if absolute { f.t.join("outside") } else { "../outside".into() };
    symlink(out, f.root.join("swap")).unwrap();
    let outside_dir = rustix::fs::stat(f.t.join("outside")).unwrap().st_ino;
    let mut parents_outside = 0usize;
    let roots = f.roots();

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let swapper = {
        let (stop, swaps) = (Arc::clone(&stop), Arc::clone(&swaps));
        let dir = fs::File::open(&f.root).unwrap();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                renameat_with(&dir, "d", &dir, "swap", RenameFlags::EXCHANGE).unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let (mut inside, mut refused, mut other, mut leaks) = (0usize, 0usize, 0usize, 0usize);
    let (mut plain_inside, mut plain_leaks) = (0usize, 0usize);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut reads = 0;
    // At least `min_reads` reads, and on until both states were met often: on a
    // busy machine the two threads may take turns in whole time slices.
    let exercised = |inside: usize, refused: usize, plain_leaks: usize| {
        inside >= 100 && refused >= 100 && plain_leaks > 0
    };
    while reads < min_reads
        || (!exercised(inside, refused, plain_leaks) && std::time::Instant::now() < deadline)
    {
        reads += 1;
        // Give the swapper a turn even where both threads share one core.
        if reads % 4 == 0 {
            std::thread::yield_now();
        }
        match roots.open_read("d/f") {
            Ok(mut file) => {
                let mut got = String::new();
                file.read_to_string(&mut got).unwrap();
                if got == SECRET {
                    leaks += 1;
                } else {
                    inside += 1;
                }
            }
            Err(e) if e.is_refusal() => refused += 1,
            Err(_) => other += 1,
        }
        // The directory a write would go to: never the outside one.
        if let Ok(parent) = roots.open_parent("d/f") {
            if rustix::fs::fstat(&parent.dir).unwrap().st_ino == outside_dir {
                parents_outside += 1;
            }
        }
        // The same read without confinement, to show the race is real.
        match fs::read_to_string(f.root.join("d/f")) {
            Ok(got) if got == SECRET => plain_leaks += 1,
            Ok(_) => plain_inside += 1,
            Err(_) => {}
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    eprintln!(
        "race ({}): {reads} reads, {} swaps; confined: {inside} inside, {refused} refused, \
         {other} other errors, {leaks} leaks, {parents_outside} parents outside; unconfined: {plain_inside} inside, {plain_leaks} leaks",
        if absolute { "absolute link" } else { "relative link" },
        swaps.load(Ordering::Relaxed)
    );
    assert_eq!(leaks, 0, "a confined read returned the outside content");
    assert_eq!(parents_outside, 0, "a write would have gone to the outside directory");
    assert!(exercised(inside, refused, plain_leaks), "the race was not exercised");
}

/// What confinement costs a small read: open + read + close of a 1 KiB
/// file five directories down, plain `open` against `openat2` from the
/// root, and what setting up the roots costs a tool's start. It asserts
/// what it measures, never how long it took: each way reads the whole
/// file, and the confined ones refuse the file outside the root.
/// `cargo test --lib confine::beneath::tests::cost -- --ignored --nocapture`
#[test]
#[ignore = "measurement: prints what confinement costs a small read"]
fn cost_of_a_confined_small_read() {
    let f = Fixture::new();
    let dir = f.root.join("a/b/c/d");
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join("file.rs");
    fs::write(&file, vec![b'x'; 1024]).unwrap();
    let path = file.to_str().unwrap().to_owned();
    let roots = f.roots();
    let rel = Path::new("a/b/c/d/file.rs");
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY;
    let read = |mut file: fs::File| {
        let mut buf = Vec::new();
        file.read_to_end(&mut buf).unwrap();
        buf
    };
    let beneath = |rel: &Path| openat_beneath(roots.roots()[0].fd(), rel, flags, Mode::empty());
    assert_eq!(read(fs::File::open(&path).unwrap()), [b'x'; 1024]);
    assert_eq!(read(roots.open_read(&path).unwrap()), [b'x'; 1024]);
    assert_eq!(read(fs::File::from(beneath(rel).unwrap())), [b'x'; 1024]);
    let secret = f.t.join("outside/secret.txt");
    assert!(roots.open_read(secret.to_str().unwrap()).is_err(), "a confined read left the root");
    assert!(beneath(Path::new("../outside/secret.txt")).is_err(), "openat2 left the root");
    let per_op = |f: &mut dyn FnMut()| {
        const N: u32 = 20_000;
        let start = std::time::Instant::now();
        for _ in 0..N {
            f();
        }
        start.elapsed().as_nanos() as f64 / f64::from(N)
    };
    let (mut plain, mut confined, mut bare) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..7 {
        bare.push(per_op(&mut || {
            let mut buf = Vec::new();
            let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY;
            let fd = openat_beneath(roots.roots()[0].fd(), rel, flags, Mode::empty()).unwrap();
            fs::File::from(fd).read_to_end(&mut buf).unwrap();
        }));
        plain.push(per_op(&mut || {
            let mut buf = Vec::new();
            fs::File::open(&path).unwrap().read_to_end(&mut buf).unwrap();
        }));
        confined.push(per_op(&mut || {
            let mut buf = Vec::new();
            roots.open_read(&path).unwrap().read_to_end(&mut buf).unwrap();
        }));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (plain, confined, bare) = (median(&mut plain), median(&mut confined), median(&mut bare));
    let start = std::time::Instant::now();
    for _ in 0..1000 {
        drop(Roots::from_paths_in([&f.root], Some(&f.root)).unwrap());
    }
    let setup = start.elapsed().as_nanos() as f64 / 1000.0;
    eprintln!(
        "small read: open {plain:.0} ns, Roots::open_read {confined:.0} ns ({:.2}x), \
         of which openat2 itself {bare:.0} ns ({:.2}x); setting up one root: {setup:.0} ns",
        confined / plain,
        bare / plain
    );
}
