//! The batch writer: one task owns every write of visitor activity. Handlers
//! enqueue and answer; the writer drains the queue in batches, one
//! transaction per batch. An enqueued operation is never dropped: a failed
//! batch is retried until the database takes it, and shutdown drains the
//! queue first.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use sea_orm::{DatabaseConnection, DbErr};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, broadcast, mpsc, oneshot};

use crate::{
    error::{AppError, AppResult},
    service::tracking::{self, Activity, ClickCommand, CollectedEvent, IdentifyCommand, VisitorCache, WriteOp},
};

/// Recently active visitors the writer keeps in memory.
const CACHED_VISITORS: usize = 50_000;
/// Events per transaction at most.
const MAX_BATCH_EVENTS: usize = 2_000;
/// How long an identify call waits for its write.
const IDENTIFY_WAIT: Duration = Duration::from_secs(10);
/// Seconds a client is told to wait when the queue is full or the database is down.
const RETRY_AFTER_SECS: u64 = 2;

enum Command {
    /// `done` learns whether the operation was stored.
    Write {
        op: WriteOp,
        done: Option<oneshot::Sender<bool>>,
        _permit: Option<OwnedSemaphorePermit>,
    },
    Shutdown(oneshot::Sender<()>),
}

#[derive(Clone)]
pub struct Writer {
    inner: Arc<Inner>,
}

struct Inner {
    queue: mpsc::UnboundedSender<Command>,
    /// One permit per queued event: the queue's bound.
    capacity: Arc<Semaphore>,
    /// False while the last write failed; new events are refused meanwhile.
    healthy: Arc<AtomicBool>,
    closed: AtomicBool,
}

impl Writer {
    /// Starts the writer task.
    pub fn spawn(db: DatabaseConnection, capacity: usize, live: broadcast::Sender<Activity>) -> Self {
        let (queue, commands) = mpsc::unbounded_channel();
        let healthy = Arc::new(AtomicBool::new(true));
        tokio::spawn(run(db, commands, healthy.clone(), live));
        Self {
            inner: Arc::new(Inner {
                queue,
                capacity: Arc::new(Semaphore::new(capacity)),
                healthy,
                closed: AtomicBool::new(false),
            }),
        }
    }

    fn refuse(&self) -> AppResult<()> {
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(AppError::unavailable("the server is shutting down", RETRY_AFTER_SECS));
        }
        if !self.inner.healthy.load(Ordering::Acquire) {
            return Err(AppError::unavailable("the database is unavailable, retry shortly", RETRY_AFTER_SECS));
        }
        Ok(())
    }

    fn send(&self, command: Command) -> AppResult<()> {
        self.inner.queue.send(command).map_err(|_| AppError::unavailable("the writer has stopped", RETRY_AFTER_SECS))
    }

    /// Queues events; once this returns Ok they will be stored.
    pub fn enqueue(&self, events: Vec<CollectedEvent>) -> AppResult<()> {
        self.queue(WriteOp::Events(events))
    }

    /// Queues a tracking-link click; once this returns Ok it will be stored.
    pub fn enqueue_click(&self, click: ClickCommand) -> AppResult<()> {
        self.queue(WriteOp::Click(Box::new(click)))
    }

    fn queue(&self, op: WriteOp) -> AppResult<()> {
        self.refuse()?;
        let count = u32::try_from(op.event_count()).unwrap_or(u32::MAX);
        let permit = self
            .inner
            .capacity
            .clone()
            .try_acquire_many_owned(count)
            .map_err(|_| AppError::unavailable("the write queue is full, retry shortly", RETRY_AFTER_SECS))?;
        self.send(Command::Write { op, done: None, _permit: Some(permit) })
    }

    /// Queues an identify and waits until it is stored.
    pub async fn identify(&self, command: IdentifyCommand) -> AppResult<()> {
        self.refuse()?;
        let (done, stored) = oneshot::channel();
        self.send(Command::Write { op: WriteOp::Identify(Box::new(command)), done: Some(done), _permit: None })?;
        match tokio::time::timeout(IDENTIFY_WAIT, stored).await {
            Ok(Ok(true)) => Ok(()),
            // The database refused it (the writer logged why); it was not stored.
            Ok(Ok(false)) => Err(AppError::internal("an identify was refused by the database")),
            Ok(Err(_)) => Err(AppError::unavailable("the writer has stopped", RETRY_AFTER_SECS)),
            // Still queued: it will be stored, but the caller should not wait longer.
            Err(_) => Err(AppError::unavailable("the database is slow to answer, retry shortly", RETRY_AFTER_SECS)),
        }
    }

    /// Waits until everything queued before this call is stored.
    pub async fn flush(&self) {
        let (done, stored) = oneshot::channel();
        let barrier = Command::Write { op: WriteOp::Events(Vec::new()), done: Some(done), _permit: None };
        if self.inner.queue.send(barrier).is_ok() {
            stored.await.ok();
        }
    }

    /// Refuses new work, then waits until everything queued is stored.
    pub async fn shutdown(&self) {
        self.inner.closed.store(true, Ordering::Release);
        let (done, drained) = oneshot::channel();
        if self.inner.queue.send(Command::Shutdown(done)).is_ok() {
            drained.await.ok();
        }
    }
}

async fn run(
    db: DatabaseConnection,
    mut commands: mpsc::UnboundedReceiver<Command>,
    healthy: Arc<AtomicBool>,
    live: broadcast::Sender<Activity>,
) {
    let mut cache = VisitorCache::new(CACHED_VISITORS);
    let mut shutdown = None;
    while shutdown.is_none() {
        let Some(first) = commands.recv().await else {
            break;
        };
        let mut batch = Vec::new();
        let mut events = 0;
        let mut next = Some(first);
        while let Some(command) = next.take() {
            match command {
                Command::Shutdown(done) => {
                    // Everything sent before shutdown is already in the queue.
                    while let Ok(command) = commands.try_recv() {
                        if let Command::Write { op, done, _permit } = command {
                            batch.push((op, done, _permit));
                        }
                    }
                    shutdown = Some(done);
                }
                Command::Write { op, done, _permit } => {
                    events += op.event_count();
                    batch.push((op, done, _permit));
                    if events < MAX_BATCH_EVENTS {
                        next = commands.try_recv().ok();
                    }
                }
            }
        }
        let mut stored = Vec::with_capacity(batch.len());
        for chunk in batch.chunks(if shutdown.is_some() { 64 } else { usize::MAX }) {
            let ops: Vec<&WriteOp> = chunk.iter().map(|(op, _, _)| op).collect();
            let (activities, chunk_stored) = write_until_stored(&db, &mut cache, &ops, &healthy).await;
            for activity in activities {
                live.send(activity).ok();
            }
            stored.extend(chunk_stored);
        }
        for ((_, done, _), stored) in batch.into_iter().zip(stored) {
            if let Some(done) = done {
                done.send(stored).ok();
            }
        }
    }
    if let Some(done) = shutdown {
        done.send(()).ok();
    }
}

/// Transient failures (a locked SQLite file, a lost PostgreSQL connection)
/// are retried with backoff until they pass. Any other failure means one
/// operation is bad: the batch is split so the others still get stored.
/// Returns the stored activity and, per operation, whether it was stored.
async fn write_until_stored(
    db: &DatabaseConnection,
    cache: &mut VisitorCache,
    ops: &[&WriteOp],
    healthy: &AtomicBool,
) -> (Vec<Activity>, Vec<bool>) {
    let mut backoff = Duration::from_millis(50);
    loop {
        let started = std::time::Instant::now();
        match tracking::apply(db, cache, ops).await {
            Ok(activities) => {
                healthy.store(true, Ordering::Release);
                tracing::debug!(
                    ops = ops.len(),
                    events = ops.iter().map(|op| op.event_count()).sum::<usize>(),
                    ms = started.elapsed().as_secs_f64() * 1000.0,
                    "batch stored"
                );
                return (activities, vec![true; ops.len()]);
            }
            Err(err) if is_transient(&err) => {
                healthy.store(false, Ordering::Release);
                tracing::warn!(error = %err, retry_in_ms = backoff.as_millis() as u64, "write failed, retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(2));
            }
            Err(err) if ops.len() > 1 => {
                tracing::error!(error = %err, "batch failed, writing its operations one by one");
                let mut activities = Vec::new();
                let mut stored = Vec::with_capacity(ops.len());
                for op in ops {
                    let (op_activities, op_stored) = Box::pin(write_until_stored(db, cache, &[*op], healthy)).await;
                    activities.extend(op_activities);
                    stored.extend(op_stored);
                }
                return (activities, stored);
            }
            Err(err) => {
                tracing::error!(error = %err, "dropping an operation the database refuses");
                return (Vec::new(), vec![false]);
            }
        }
    }
}

fn is_transient(err: &DbErr) -> bool {
    if matches!(err, DbErr::ConnectionAcquire(_) | DbErr::Conn(_)) {
        return true;
    }
    let text = err.to_string().to_lowercase();
    ["locked", "busy", "connection", "closed", "terminating", "timed out", "broken pipe", "shutting down"]
        .iter()
        .any(|sign| text.contains(sign))
}
