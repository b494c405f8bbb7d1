//! A memory cgroup of its own with a hard limit, for a test that makes the
//! kernel's OOM killer choose among the processes put in it: cgroup v2
//! (`memory.max`, no swap, `memory.events`) or v1 (`limit_in_bytes`,
//! `memsw` where swap is accounted, `oom_control`), whichever this machine
//! mounts. Only root can make one; where none can be made, `new` says why.

use std::fs;
use std::path::{Path, PathBuf};

pub struct MemoryCage {
    dir: PathBuf,
    v2: bool,
}

impl MemoryCage {
    /// A new cgroup limited to `limit` bytes, or why there is none.
    pub fn new(limit: u64) -> Result<MemoryCage, String> {
        if !super::is_root() {
            return Err("only root makes a memory cgroup".into());
        }
        let name = format!("ikigai-tools-test-{}", std::process::id());
        let (parent, v2) = parent_cgroup()?;
        let dir = parent.join(&name);
        fs::create_dir(&dir)
            .map_err(|e| format!("cannot make a cgroup in {}: {e}", parent.display()))?;
        let cage = MemoryCage { dir, v2 };
        let limit = limit.to_string();
        if v2 {
            cage.write("memory.max", &limit)?;
            // No swap to escape to (the file is absent without swap).
            if cage.dir.join("memory.swap.max").exists() {
                cage.write("memory.swap.max", "0")?;
            }
        } else {
            cage.write("memory.limit_in_bytes", &limit)?;
            if cage.dir.join("memory.memsw.limit_in_bytes").exists() {
                cage.write("memory.memsw.limit_in_bytes", &limit)?;
            }
        }
        Ok(cage)
    }

    /// Moves the process `pid` (all its threads) into the cgroup; what it
    /// forks from then on is born there.
    pub fn admit(&self, pid: i32) {
        self.write("cgroup.procs", &pid.to_string()).expect("move a process into the cgroup");
    }

    /// How many processes the OOM killer killed in the cgroup.
    pub fn oom_kills(&self) -> u64 {
        let file = if self.v2 { "memory.events" } else { "memory.oom_control" };
        let text = fs::read_to_string(self.dir.join(file)).expect("the cgroup's OOM counts");
        text.lines()
            .find_map(|l| l.strip_prefix("oom_kill "))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no oom_kill count in {file}: {text}"))
    }

    fn write(&self, file: &str, value: &str) -> Result<(), String> {
        fs::write(self.dir.join(file), value)
            .map_err(|e| format!("cannot write {value} to {}: {e}", self.dir.join(file).display()))
    }
}

impl Drop for MemoryCage {
    fn drop(&mut self) {
        // Empty once its processes are gone (the test ends its session
        // first); the kernel may take a moment to let go of the last one.
        for _ in 0..100 {
            if fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

/// Where a new memory cgroup can go: under the v1 memory hierarchy, in
/// this process's own cgroup there; under v2, at the root, the one cgroup
/// that may hold processes and children with controllers at once.
fn parent_cgroup() -> Result<(PathBuf, bool), String> {
    let mine = fs::read_to_string("/proc/self/cgroup").map_err(|e| e.to_string())?;
    for line in mine.lines() {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next(), fields.next(), fields.next());
        if controllers.is_some_and(|c| c.split(',').any(|c| c == "memory")) {
            let path = path.unwrap_or("/").trim_start_matches('/');
            return Ok((Path::new("/sys/fs/cgroup/memory").join(path), false));
        }
    }
    let root = Path::new("/sys/fs/cgroup");
    let enabled = fs::read_to_string(root.join("cgroup.subtree_control")).unwrap_or_default();
    if enabled.split_whitespace().any(|c| c == "memory") {
        return Ok((root.to_path_buf(), true));
    }
    Err("no memory controller: neither a v1 memory hierarchy nor v2's enabled at the root".into())
}
