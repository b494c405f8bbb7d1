//! Work done in parallel, results taken in order: the caller feeds items
//! (grep: the files the walk finds, as it finds them), threads work on them
//! as they come, and each result is handed to `collect` in the order its
//! item was fed.
//!
//! Cheap where it counts, since grep runs this once per file: one lock
//! taken to claim an item and one to deliver its result, no channel, and
//! no wake-up call unless a thread is actually asleep. Whichever thread
//! completes the oldest outstanding item collects it (and any later ones
//! already done), so no thread exists only to wait for results.
//!
//! Memory stays bounded: at most `QUEUE_PER_THREAD` items wait per thread
//! (when the queue is full the feeding thread works on one itself), and
//! results done ahead of the oldest outstanding item are at most `WINDOW`
//! and hold at most `HELD_MAX` (by the caller's `weight`): a thread that
//! would run further ahead waits instead. The window is wide because items
//! can be tiny (a grep of a small file takes microseconds, a wake-up as
//! long), the budget is what bounds memory when results are large.
//!
//! A result that grows large while its item is worked on can be bounded
//! too: the work may wait for its `Turn` (until every item fed before it
//! has been collected) and then hand what it has over to wherever
//! `collect` puts results, since nothing is collected meanwhile.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::Scope;

/// Items handed over by the feeder at a time (one lock for several).
const FEED_BATCH: usize = 8;
/// Items fed and not yet claimed, per thread, before the feeder helps.
const QUEUE_PER_THREAD: usize = 64;
/// Items claimed ahead of the oldest outstanding one, at most.
const WINDOW: usize = 1024;
/// Weight of the results done ahead of the oldest outstanding item beyond
/// which no more items are claimed (for grep: bytes of output).
const HELD_MAX: usize = 8 * 1024 * 1024;

/// Where an item stands in the order of results, for its work.
pub struct Turn<'a> {
    pool: &'a dyn WaitForTurn,
    index: usize,
}

impl Turn<'_> {
    /// Waits until every item fed before this one has been collected: from
    /// then until this item's result is delivered, nothing is collected.
    pub fn wait(&self) {
        self.pool.wait_until_next(self.index);
    }
}

trait WaitForTurn: Sync {
    fn wait_until_next(&self, index: usize);
}

/// Runs `work` on every item `feed` produces, on up to `threads` threads
/// (the calling thread included), each thread with its own `state()`, and
/// calls `collect` with the results in feeding order. `weight` tells how
/// much memory a result holds. A panic in `work` gives `R::default()` for
/// its item. Extra threads are only started once items are waiting for them.
pub fn run<T, R, S>(
    threads: usize,
    state: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, T, &Turn<'_>) -> R + Sync,
    weight: fn(&R) -> usize,
    collect: impl FnMut(R) + Send,
    feed: impl FnOnce(&mut dyn FnMut(T)),
) where
    T: Send,
    R: Send + Default,
{
    let threads = threads.max(1);
    let pool = Pool {
        inner: Mutex::new(Inner {
            queue: VecDeque::new(),
            claimed: 0,
            fed_all: false,
            next: 0,
            done: VecDeque::new(),
            held: 0,
            collect,
            sleepers: 0,
        }),
        wake: Condvar::new(),
        weight,
        queue_max: threads * QUEUE_PER_THREAD,
    };
    let (pool, state, work) = (&pool, &state, &work);
    std::thread::scope(|scope| {
        let mut own = state();
        let mut spawned = 0;
        // Hands the batch over; starts another thread when items wait for
        // one (worth its start-up only then); how many items wait.
        let mut hand_over = |batch: &mut Vec<T>| {
            let waiting = pool.push(batch);
            if spawned + 1 < threads && waiting > spawned + 1 {
                spawn_worker(scope, pool, state, work);
                spawned += 1;
            }
            waiting
        };
        let mut batch = Vec::with_capacity(FEED_BATCH);
        feed(&mut |item| {
            batch.push(item);
            if batch.len() < FEED_BATCH {
                return;
            }
            if hand_over(&mut batch) >= pool.queue_max {
                // The feeder may wait for the window, never for the queue:
                // it is the one that fills it.
                if let Some((index, item)) = pool.deliver_and_claim(None, false) {
                    pool.deliver_only(index, work_on(pool, work, &mut own, index, item));
                }
            }
        });
        hand_over(&mut batch);
        pool.finish_feeding();
        work_until_done(pool, work, &mut own);
    });
}

fn spawn_worker<'scope, T, R, S, C>(
    scope: &'scope Scope<'scope, '_>,
    pool: &'scope Pool<T, R, C>,
    state: &'scope (impl Fn() -> S + Sync),
    work: &'scope (impl Fn(&mut S, T, &Turn<'_>) -> R + Sync),
) where
    T: Send,
    R: Send + Default,
    C: FnMut(R) + Send,
{
    scope.spawn(move || work_until_done(pool, work, &mut state()));
}

/// Claims and works on items until all are claimed.
fn work_until_done<T: Send, R: Default + Send, S, C: FnMut(R) + Send>(
    pool: &Pool<T, R, C>,
    work: &impl Fn(&mut S, T, &Turn<'_>) -> R,
    state: &mut S,
) {
    let mut result = None;
    while let Some((index, item)) = pool.deliver_and_claim(result.take(), true) {
        result = Some((index, work_on(pool, work, state, index, item)));
    }
}

fn work_on<T: Send, R: Default + Send, S, C: FnMut(R) + Send>(
    pool: &Pool<T, R, C>,
    work: &impl Fn(&mut S, T, &Turn<'_>) -> R,
    state: &mut S,
    index: usize,
    item: T,
) -> R {
    let turn = Turn { pool, index };
    catch_unwind(AssertUnwindSafe(|| work(state, item, &turn))).unwrap_or_default()
}

impl<T: Send, R: Send, C: FnMut(R) + Send> WaitForTurn for Pool<T, R, C> {
    fn wait_until_next(&self, index: usize) {
        let mut inner = self.lock();
        while inner.next < index {
            inner = self.sleep(inner);
        }
    }
}

struct Pool<T, R, C> {
    inner: Mutex<Inner<T, R, C>>,
    wake: Condvar,
    weight: fn(&R) -> usize,
    queue_max: usize,
}

struct Inner<T, R, C> {
    /// Fed, not yet claimed.
    queue: VecDeque<T>,
    /// Items claimed so far: the index of the next one claimed.
    claimed: usize,
    fed_all: bool,
    /// The index of the next result to collect.
    next: usize,
    /// Results of items `next..claimed`, `None` while being worked on.
    done: VecDeque<Option<R>>,
    /// The weight of the results in `done`.
    held: usize,
    collect: C,
    /// Threads waiting on `wake`.
    sleepers: usize,
}

impl<T, R, C: FnMut(R)> Pool<T, R, C> {
    fn lock(&self) -> MutexGuard<'_, Inner<T, R, C>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn sleep<'a>(
        &self,
        mut inner: MutexGuard<'a, Inner<T, R, C>>,
    ) -> MutexGuard<'a, Inner<T, R, C>> {
        inner.sleepers += 1;
        let mut inner = self.wake.wait(inner).unwrap_or_else(PoisonError::into_inner);
        inner.sleepers -= 1;
        inner
    }

    fn wake_sleepers(&self, inner: &Inner<T, R, C>) {
        if inner.sleepers > 0 {
            self.wake.notify_all();
        }
    }

    /// Adds the items of `batch` (emptied); how many now wait to be claimed.
    fn push(&self, batch: &mut Vec<T>) -> usize {
        let mut inner = self.lock();
        inner.queue.extend(batch.drain(..));
        self.wake_sleepers(&inner);
        inner.queue.len()
    }

    fn finish_feeding(&self) {
        let mut inner = self.lock();
        inner.fed_all = true;
        self.wake_sleepers(&inner);
    }

    /// Delivers a result (its index and itself), collecting every result
    /// now next in order, then claims the next item under the same lock:
    /// waits while the window is full or (when `wait_for_items`) the queue
    /// is empty; `None` once everything fed has been claimed, or when the
    /// queue is empty and not waited for.
    fn deliver_and_claim(
        &self,
        result: Option<(usize, R)>,
        wait_for_items: bool,
    ) -> Option<(usize, T)> {
        let mut inner = self.lock();
        if let Some((index, result)) = result {
            self.deliver(&mut inner, index, result);
        }
        loop {
            if inner.claimed < inner.next + WINDOW && inner.held <= HELD_MAX {
                if let Some(item) = inner.queue.pop_front() {
                    let index = inner.claimed;
                    inner.claimed += 1;
                    inner.done.push_back(None);
                    return Some((index, item));
                }
                if inner.fed_all || !wait_for_items {
                    return None;
                }
            }
            inner = self.sleep(inner);
        }
    }

    fn deliver_only(&self, index: usize, result: R) {
        self.deliver(&mut self.lock(), index, result);
    }

    fn deliver(&self, inner: &mut Inner<T, R, C>, index: usize, result: R) {
        if index != inner.next {
            // Done ahead of an older item: held until that one is collected.
            inner.held += (self.weight)(&result);
            if let Some(slot) = inner.done.get_mut(index - inner.next) {
                *slot = Some(result);
            }
            return;
        }
        inner.done.pop_front();
        (inner.collect)(result);
        inner.next += 1;
        while let Some(Some(_)) = inner.done.front() {
            if let Some(Some(result)) = inner.done.pop_front() {
                inner.held -= (self.weight)(&result);
                (inner.collect)(result);
            }
            inner.next += 1;
        }
        self.wake_sleepers(inner);
    }
}

#[cfg(test)]
#[path = "ordered_tests.rs"]
mod tests;
