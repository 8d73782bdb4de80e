//! The batch writer: one task owns every write of visitor activity, and
//! commits in groups. Requests queue their operation and wait; the writer
//! takes everything that arrived while the previous batch was being written,
//! applies it in one transaction, and wakes each request with the outcome only
//! after the commit. So an answer that says "stored" survives a crash.
//!
//! A request that stops waiting (its deadline passed) withdraws its operation
//! if the writer has not taken it yet; once taken, the request waits for the
//! commit. An answer therefore never says "not stored" about a write that was.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU8, Ordering},
    },
    time::{Duration, Instant},
};

use sea_orm::DatabaseConnection;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};

use crate::{
    db::checkpoint::Checkpoints,
    error::{AppError, AppResult, is_transient},
    service::alerts::due::AlertsDue,
    service::tracking::{
        self, Activity, ClickCommand, CollectedEvent, IdentifyCommand, WriteOp, live::LiveStream,
        quiet_sites::QuietSites, visitor_values::WrittenValues,
    },
};

/// Events per transaction at most.
const MAX_BATCH_EVENTS: usize = 2_000;
/// How long collect and identify wait for their commit before giving up.
const COMMIT_WAIT: Duration = Duration::from_secs(10);
/// How long a transient failure is retried before a batch is given up.
const RETRY_FOR: Duration = Duration::from_secs(5);
/// Seconds a client is told to wait when the queue is full or the database is down.
const RETRY_AFTER_SECS: u64 = 2;

/// Where a queued operation is: the writer and the waiting request race to
/// move it out of `QUEUED`, and exactly one of them wins.
const QUEUED: u8 = 0;
const TAKEN: u8 = 1;
const WITHDRAWN: u8 = 2;

/// What happened to one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Committed,
    /// Not stored, and trying again later may work (database down, shutdown).
    NotStored,
    /// Not stored: the database refuses this operation.
    Refused,
}

struct Pending {
    op: WriteOp,
    state: Arc<AtomicU8>,
    done: oneshot::Sender<Outcome>,
    _permit: Option<OwnedSemaphorePermit>,
}

enum Command {
    Write(Pending),
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
    /// False from a failed write until the database answers again.
    healthy: Arc<AtomicBool>,
    closed: AtomicBool,
}

/// A queued operation the caller can wait on.
struct Ticket {
    state: Arc<AtomicU8>,
    done: oneshot::Receiver<Outcome>,
}

impl Ticket {
    /// Waits until `deadline` for the outcome. Past it, withdraws the
    /// operation if the writer has not taken it (`None`: never stored), or
    /// else waits for the batch that holds it.
    async fn wait(mut self, deadline: Instant) -> Option<Outcome> {
        let left = deadline.saturating_duration_since(Instant::now());
        if let Ok(outcome) = tokio::time::timeout(left, &mut self.done).await {
            return Some(outcome.unwrap_or(Outcome::NotStored));
        }
        if self.state.compare_exchange(QUEUED, WITHDRAWN, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            return None;
        }
        Some(self.done.await.unwrap_or(Outcome::NotStored))
    }
}

impl Writer {
    /// Starts the writer task.
    pub fn spawn(
        db: DatabaseConnection,
        capacity: usize,
        live: LiveStream,
        alerts_due: AlertsDue,
        checkpoints: Checkpoints,
        quiet: Arc<QuietSites>,
    ) -> Self {
        let (queue, commands) = mpsc::unbounded_channel();
        let healthy = Arc::new(AtomicBool::new(true));
        let after_commit = AfterCommit { live, alerts_due, checkpoints };
        tokio::spawn(run(db, commands, healthy.clone(), after_commit, quiet));
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

    fn send(&self, op: WriteOp, permit: Option<OwnedSemaphorePermit>) -> Option<Ticket> {
        let state = Arc::new(AtomicU8::new(QUEUED));
        let (done, receiver) = oneshot::channel();
        let pending = Pending { op, state: state.clone(), done, _permit: permit };
        self.inner.queue.send(Command::Write(pending)).ok()?;
        Some(Ticket { state, done: receiver })
    }

    /// Stores events and answers once they are committed. A full queue or an
    /// unavailable database is refused at once, before anything is accepted.
    pub async fn store_events(&self, events: Vec<CollectedEvent>) -> AppResult<()> {
        self.store(WriteOp::Events(events)).await
    }

    /// Stores an identify and answers once it is committed.
    pub async fn identify(&self, command: IdentifyCommand) -> AppResult<()> {
        self.store(WriteOp::Identify(Box::new(command))).await
    }

    async fn store(&self, op: WriteOp) -> AppResult<()> {
        self.refuse()?;
        let count = u32::try_from(op.event_count()).unwrap_or(u32::MAX);
        let permit = self
            .inner
            .capacity
            .clone()
            .try_acquire_many_owned(count)
            .map_err(|_| AppError::unavailable("the write queue is full, retry shortly", RETRY_AFTER_SECS))?;
        let ticket = self
            .send(op, Some(permit))
            .ok_or_else(|| AppError::unavailable("the writer has stopped", RETRY_AFTER_SECS))?;
        match ticket.wait(Instant::now() + COMMIT_WAIT).await {
            Some(Outcome::Committed) => Ok(()),
            Some(Outcome::Refused) => Err(AppError::internal("the database refused a write")),
            Some(Outcome::NotStored) | None => {
                Err(AppError::unavailable("the database did not store this in time, retry shortly", RETRY_AFTER_SECS))
            }
        }
    }

    /// Records a click, waiting at most `wait` for a place in the queue and
    /// its commit. True once it is committed; false when it was not recorded
    /// (the redirect goes ahead either way).
    pub async fn record_click(&self, click: ClickCommand, wait: Duration) -> bool {
        if self.inner.closed.load(Ordering::Acquire) {
            return false;
        }
        let deadline = Instant::now() + wait;
        // A timer only when the queue is full: registering one costs more
        // than the rest of taking a place.
        let permit = match self.inner.capacity.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => match tokio::time::timeout(wait, self.inner.capacity.clone().acquire_owned()).await {
                Ok(Ok(permit)) => permit,
                _ => return false,
            },
        };
        let Some(ticket) = self.send(WriteOp::Click(Box::new(click)), Some(permit)) else {
            return false;
        };
        ticket.wait(deadline).await == Some(Outcome::Committed)
    }

    /// Waits until everything queued before this call is stored.
    pub async fn flush(&self) {
        if let Some(ticket) = self.send(WriteOp::Events(Vec::new()), None) {
            ticket.done.await.ok();
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

/// Who hears about a committed batch.
struct AfterCommit {
    live: LiveStream,
    alerts_due: AlertsDue,
    checkpoints: Checkpoints,
}

impl AfterCommit {
    fn committed(&self, alerts_queued: u64) {
        if alerts_queued > 0 {
            self.alerts_due.wake();
        }
        self.checkpoints.committed();
    }

    /// Tells live subscribers here and on every other instance.
    fn publish(&self, activities: Vec<Activity>) {
        self.live.publish(activities);
    }
}

async fn run(
    db: DatabaseConnection,
    mut commands: mpsc::UnboundedReceiver<Command>,
    healthy: Arc<AtomicBool>,
    after_commit: AfterCommit,
    quiet: Arc<QuietSites>,
) {
    let written = WrittenValues::default();
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
                        if let Command::Write(pending) = command {
                            take(&mut batch, pending);
                        }
                    }
                    shutdown = Some(done);
                }
                Command::Write(pending) => {
                    events += pending.op.event_count();
                    take(&mut batch, pending);
                    if events < MAX_BATCH_EVENTS {
                        next = commands.try_recv().ok();
                    }
                }
            }
        }
        let chunk_size = if shutdown.is_some() { 64 } else { usize::MAX };
        let mut rest = batch;
        while !rest.is_empty() {
            let tail = rest.split_off(chunk_size.min(rest.len()));
            let ops: Vec<&WriteOp> = rest.iter().map(|pending| &pending.op).collect();
            let (activities, outcomes) = write_with_retries(&db, &ops, &healthy, &after_commit, &quiet, &written).await;
            after_commit.publish(activities);
            for (pending, outcome) in rest.into_iter().zip(outcomes) {
                pending.done.send(outcome).ok();
            }
            rest = tail;
        }
    }
    if let Some(done) = shutdown {
        done.send(()).ok();
    }
}

/// Adds an operation to the batch unless its request has withdrawn it.
fn take(batch: &mut Vec<Pending>, pending: Pending) {
    if pending.state.compare_exchange(QUEUED, TAKEN, Ordering::AcqRel, Ordering::Acquire).is_ok() {
        batch.push(pending);
    }
}

/// Transient failures (a locked SQLite file, a lost PostgreSQL connection, a
/// deadlock) are retried with backoff for a while, then the batch is given up
/// and the database marked unavailable until it answers a ping. Any other
/// failure means one operation is bad: the batch is split so the others
/// still get stored. Returns the stored activity and each operation's outcome.
async fn write_with_retries(
    db: &DatabaseConnection,
    ops: &[&WriteOp],
    healthy: &Arc<AtomicBool>,
    after_commit: &AfterCommit,
    quiet: &QuietSites,
    written: &WrittenValues,
) -> (Vec<Activity>, Vec<Outcome>) {
    let started = Instant::now();
    let mut backoff = Duration::from_millis(20);
    loop {
        match tracking::batch::apply(db, ops, quiet, written).await {
            Ok(applied) => {
                healthy.store(true, Ordering::Release);
                after_commit.committed(applied.alerts_queued);
                let activities = applied.activities;
                tracing::debug!(
                    ops = ops.len(),
                    events = ops.iter().map(|op| op.event_count()).sum::<usize>(),
                    ms = started.elapsed().as_secs_f64() * 1000.0,
                    "batch committed"
                );
                return (activities, vec![Outcome::Committed; ops.len()]);
            }
            Err(err) if is_transient(&err) => {
                if started.elapsed() + backoff > RETRY_FOR {
                    tracing::error!(error = %err, ops = ops.len(), "giving up a batch; its requests are told to retry");
                    mark_unhealthy(db, healthy);
                    return (Vec::new(), vec![Outcome::NotStored; ops.len()]);
                }
                tracing::warn!(error = %err, retry_in_ms = backoff.as_millis() as u64, "write failed, retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
            }
            Err(err) if ops.len() > 1 => {
                tracing::error!(error = %err, "batch failed, writing its operations one by one");
                let mut activities = Vec::new();
                let mut outcomes = Vec::with_capacity(ops.len());
                for op in ops {
                    let (op_activities, op_outcomes) =
                        Box::pin(write_with_retries(db, &[*op], healthy, after_commit, quiet, written)).await;
                    activities.extend(op_activities);
                    outcomes.extend(op_outcomes);
                }
                return (activities, outcomes);
            }
            Err(err) => {
                tracing::error!(error = %err, "the database refuses an operation; it is not stored");
                return (Vec::new(), vec![Outcome::Refused]);
            }
        }
    }
}

/// New writes are refused from now until the database answers a ping again.
fn mark_unhealthy(db: &DatabaseConnection, healthy: &Arc<AtomicBool>) {
    if !healthy.swap(false, Ordering::AcqRel) {
        return;
    }
    let (db, healthy) = (db.clone(), healthy.clone());
    tokio::spawn(async move {
        while db.ping().await.is_err() {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        healthy.store(true, Ordering::Release);
    });
}
