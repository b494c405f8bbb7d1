//! The pool against small and uneven work: results in feeding order with
//! any number of threads, a feeder that outruns the workers, results held
//! ahead within the budget, an item that waits for its turn, a panic.

use super::*;

fn squares(threads: usize, n: u64) -> Vec<u64> {
    let mut out = Vec::new();
    run(
        threads,
        || (),
        |(), x: u64, _| {
            // Uneven work, so that results complete out of order.
            if x.is_multiple_of(7) {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            x * x
        },
        |_| 1,
        |r| out.push(r),
        |feed| (0..n).for_each(&mut *feed),
    );
    out
}

#[test]
fn results_come_in_feeding_order() {
    for threads in [1, 2, 3, 8] {
        for n in [0, 1, 2, 5, 100, 1000] {
            let expected: Vec<u64> = (0..n).map(|x| x * x).collect();
            assert_eq!(squares(threads, n), expected, "{threads} threads, {n} items");
        }
    }
}

#[test]
fn many_quick_items_neither_hang_nor_get_lost() {
    // The feeder outruns the workers, fills the queue and helps.
    for threads in [2, 4] {
        let mut sum = 0u64;
        let mut seen = 0u64;
        run(
            threads,
            || (),
            |(), x: u64, _| x,
            |_| 1,
            |r| {
                assert_eq!(r, seen);
                seen += 1;
                sum += r;
            },
            |feed| (0..200_000).for_each(&mut *feed),
        );
        assert_eq!((seen, sum), (200_000, 199_999 * 200_000 / 2));
    }
}

#[test]
fn heavy_results_wait_for_the_oldest_instead_of_piling_up() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    // Item 0 is slow; the others finish at once, each "holding" a
    // quarter of the budget: only a handful may run ahead of item 0.
    let finished = AtomicUsize::new(0);
    let collected = AtomicUsize::new(0);
    let most_ahead = AtomicUsize::new(0);
    let mut order = Vec::new();
    run(
        4,
        || (),
        |(), x: usize, _| {
            if x == 0 {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            let ahead = finished.fetch_add(1, SeqCst) + 1 - collected.load(SeqCst);
            most_ahead.fetch_max(ahead, SeqCst);
            x
        },
        |_| HELD_MAX / 4,
        |x| {
            collected.fetch_add(1, SeqCst);
            order.push(x);
        },
        |feed| (0..200).for_each(&mut *feed),
    );
    assert_eq!(order, (0..200).collect::<Vec<_>>());
    // Four held within the budget, a fifth that crosses it, and one
    // in the hands of each of the three other threads.
    assert!(most_ahead.load(SeqCst) <= 4 + 1 + 3, "{most_ahead:?}");
}

#[test]
fn an_item_that_waits_for_its_turn_sees_everything_before_it_collected() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    for threads in [1, 2, 4] {
        let collected = AtomicUsize::new(0);
        let mut order = Vec::new();
        run(
            threads,
            || (),
            |(), x: usize, turn| {
                if x.is_multiple_of(3) {
                    turn.wait();
                    assert_eq!(collected.load(SeqCst), x, "waited for its turn");
                }
                x
            },
            |_| 1,
            |x| {
                collected.fetch_add(1, SeqCst);
                order.push(x);
            },
            |feed| (0..300).for_each(&mut *feed),
        );
        assert_eq!(order, (0..300).collect::<Vec<_>>());
    }
}

#[test]
fn a_panicking_item_gives_the_default() {
    let mut out = Vec::new();
    run(
        2,
        || (),
        |(), x: u32, _| {
            assert!(x != 3, "boom");
            x
        },
        |_| 1,
        |r| out.push(r),
        |feed| (0..6).for_each(&mut *feed),
    );
    assert_eq!(out, [0, 1, 2, 0, 4, 5]);
}
