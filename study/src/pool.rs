//! Jobs of very different lengths on a few cores, longest first.
//!
//! A sweep's runs differ by up to twenty times in length. `par_iter` over the plan splits
//! it into halves (the second thread starts in the middle of the list) and the sweep then
//! waits at its end for whichever long run started last, with the other cores idle; the
//! extra runs waited for the main runs' last one the same way. Here every worker takes the
//! costliest job not yet started (greedy longest-processing-time scheduling), so the tail
//! is the shortest jobs, and one pool holds every job that can run at once. The order
//! changes no figure: each run is computed alone.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Run `run(i)` for every `i < costs.len()` on `threads` workers, costliest first (ties in
/// index order); the results in index order.
pub(crate) fn longest_first<T: Send>(
    costs: &[f64],
    threads: usize,
    run: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by(|&a, &b| costs[b].total_cmp(&costs[a]));
    let next = AtomicUsize::new(0);
    let worker = || {
        let mut done = Vec::new();
        while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            done.push((i, run(i)));
        }
        done
    };
    let threads = threads.clamp(1, costs.len().max(1));
    let mut slots: Vec<Option<T>> = (0..costs.len()).map(|_| None).collect();
    std::thread::scope(|s| {
        let workers: Vec<_> = (1..threads).map(|_| s.spawn(worker)).collect();
        // This thread works too; a worker that panicked panics the sweep.
        let mine = worker();
        for done in workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .chain([mine])
        {
            for (i, r) in done {
                slots[i] = Some(r);
            }
        }
    });
    slots
        .into_iter()
        .map(|r| r.expect("every job ran"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn every_job_runs_once_and_results_keep_the_index_order() {
        let costs = [1.0, 5.0, 3.0, 5.0, 0.5];
        for threads in 1..4 {
            let out = longest_first(&costs, threads, |i| i * 10);
            assert_eq!(out, vec![0, 10, 20, 30, 40]);
        }
        assert!(longest_first(&[], 2, |i| i).is_empty());
    }

    #[test]
    fn one_worker_takes_the_costliest_first() {
        let started = Mutex::new(Vec::new());
        longest_first(&[1.0, 5.0, 3.0, 5.0, 0.5], 1, |i| {
            started.lock().unwrap().push(i)
        });
        assert_eq!(started.into_inner().unwrap(), vec![1, 3, 2, 0, 4]);
    }
}
