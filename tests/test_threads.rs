//! How many tests run at once. Most of them wait on the processes they
//! start (a server, a shell, a timeout) more than they compute: at
//! libtest's default, one test per core, the suite took 110 s on 2 cores;
//! four at once, 80 s. So, unless told (`RUST_TEST_THREADS`, or
//! `--test-threads`, which libtest prefers to the variable), at least four
//! run at once, and one per core where there are more cores.

/// Run by the loader before `main`, as every `.init_array` entry is: the
/// variable must be set before libtest reads it.
#[used]
#[link_section = ".init_array"]
static AT_LEAST_FOUR_AT_ONCE: extern "C" fn() = at_least_four_at_once;

extern "C" fn at_least_four_at_once() {
    if std::env::var_os("RUST_TEST_THREADS").is_none() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        // Before main, the process has one thread: nothing reads the
        // environment while it changes.
        std::env::set_var("RUST_TEST_THREADS", cores.max(4).to_string());
    }
}
