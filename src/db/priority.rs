//! Reads yield the CPU to writes and health checks.
//!
//! An SQLite connection runs on a thread of its own. On a machine with few
//! cores, a read connection busy with a 30-day report takes a whole core,
//! and collect's batch writer, its callers and `/health/ready` then wait for
//! the scheduler behind it (on two cores, their p99 tripled). The read
//! connections' threads are given a lower priority (a higher nice value), so
//! the scheduler lets the short, latency-bound work in first; when nothing
//! else wants the CPU, reads still get all of it.

/// The read connections' thread names start with this (at most 15 bytes of
/// a thread name are kept, so the prefix stays short).
pub const READ_THREAD: &str = "lt-read-";

/// How much lower: on Linux's scheduler, nice 5 weighs about a third of nice 0.
#[cfg(target_os = "linux")]
const READ_NICE: i32 = 19;

/// Lowers every read connection thread of this process that is not lowered
/// yet. Runs after each new read connection; a thread that cannot be
/// lowered keeps its priority, which is only slower for the others.
#[cfg(target_os = "linux")]
pub fn lower_read_threads() {
    use rustix::process::{Pid, getpriority_process, setpriority_process};
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return };
    for task in tasks.flatten() {
        let is_read = std::fs::read_to_string(task.path().join("comm")).is_ok_and(|name| name.starts_with(READ_THREAD));
        let tid = task.file_name().to_str().and_then(|tid| tid.parse::<i32>().ok()).and_then(Pid::from_raw);
        if let (true, Some(tid)) = (is_read, tid)
            && getpriority_process(Some(tid)).is_ok_and(|nice| nice < READ_NICE)
        {
            setpriority_process(Some(tid), READ_NICE).ok();
        }
    }
}

/// Lowers the calling thread as the read connections' threads are: the
/// threads that count over Explore's copies are reads too.
#[cfg(target_os = "linux")]
pub fn lower_this_thread() {
    // `None` names the calling thread on Linux, where each thread has its own nice value.
    rustix::process::setpriority_process(None, READ_NICE).ok();
}

#[cfg(not(target_os = "linux"))]
pub fn lower_this_thread() {}
