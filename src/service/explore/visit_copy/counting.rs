//! The threads that count over the copies.

use std::sync::OnceLock;

use sea_orm::DbErr;

/// The process's threads that count over the copies: as many as the
/// cores, at the read connections' low priority (`db::priority`), so
/// collect and health checks come first as they do before reads.
fn counters() -> Option<&'static rayon::ThreadPool> {
    static COUNTERS: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    COUNTERS
        .get_or_init(|| {
            let built = rayon::ThreadPoolBuilder::new()
                .thread_name(|at| format!("lt-count-{at}"))
                .start_handler(|_| crate::db::priority::lower_this_thread())
                // Without a handler a panicking count would abort the process.
                .panic_handler(|_| tracing::error!("a count over the copies panicked"))
                .build();
            built
                .inspect_err(|err| tracing::warn!(error = %err, "no counting threads; counts run on the runtime's"))
                .ok()
        })
        .as_ref()
}

/// Runs a count over the copies on a counting thread: a count takes
/// milliseconds to tens of them, which would hold up every other task of
/// its runtime thread, and the explorer page counts its event panels
/// beside its visit panels this way (`explore::dashboard`).
pub(super) async fn counted<R: Send + 'static>(count: impl FnOnce() -> R + Send + 'static) -> Result<R, DbErr> {
    let Some(counters) = counters() else { return Ok(count()) };
    let (done, answer) = tokio::sync::oneshot::channel();
    counters.spawn(move || {
        // A count that panics drops `done`: its query fails, the thread lives on.
        done.send(count()).ok();
    });
    answer.await.map_err(|_| DbErr::Custom("a count over the copies failed".to_owned()))
}
