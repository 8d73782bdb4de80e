//! The HTTP/1 server around the router: a cap on open connections, and
//! timeouts so that a slow or silent client cannot hold a connection.
//!
//! - **Header timeout**: from the first byte of a request to the end of its
//!   head. A client that stalls inside its head gets 408 and the connection
//!   closes.
//! - **Body timeout**: from the end of the head to the end of the body, in
//!   total, however the bytes trickle in: 408.
//! - **Idle timeout**: a kept-alive connection with no request on it, or an
//!   answer the client stops reading, closes without a word.
//!
//! hyper's own header timer closes silently and runs from the moment it
//! waits for a head, idle time included, so the clock is kept here: the
//! socket wrapper sees bytes arrive and leave, and the service marks where a
//! request starts and its answer ends.

use std::{
    io,
    net::SocketAddr,
    pin::Pin,
    sync::{Arc, Mutex},
    task::{Context, Poll},
    time::Duration,
};

use axum::{
    Router,
    body::Body,
    extract::{ConnectInfo, FromRef},
    http::{Request, Response, StatusCode, header},
    response::IntoResponse,
};
use http_body_util::BodyExt;
use hyper::{body::Incoming, server::conn::http1, service::service_fn};
use hyper_util::rt::TokioIo;
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::{TcpListener, TcpStream},
    sync::{OwnedSemaphorePermit, Semaphore, watch},
    task::JoinSet,
    time::{Instant, Sleep},
};
use tower::ServiceExt;

use crate::{
    config::Config,
    error::{AppError, ErrorCode},
    graphql::AppSchema,
    state::AppState,
};

/// What route handlers can extract with `State`.
#[derive(Clone, FromRef)]
pub struct RouterState {
    pub app: AppState,
    pub schema: AppSchema,
}

/// The largest body any route takes (collect's batch); larger ones are
/// refused before they are read.
pub const MAX_BODY: usize = 1024 * 1024;

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub header_timeout: Duration,
    pub body_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
}

impl Limits {
    pub fn of(config: &Config) -> Self {
        Limits {
            header_timeout: Duration::from_secs(config.header_timeout_secs.max(1)),
            body_timeout: Duration::from_secs(config.body_timeout_secs.max(1)),
            idle_timeout: Duration::from_secs(config.idle_timeout_secs.max(1)),
            max_connections: config.max_connections.max(1),
        }
    }
}

/// Where a connection is in its request cycle, and since when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Between requests (or before the first): the idle timeout runs.
    Idle,
    /// Part of a request head has arrived: the header timeout runs.
    Head,
    /// The service has the request (its body has its own deadline).
    Busy,
    /// Handed over to a WebSocket, which keeps its own time.
    Upgraded,
}

struct Clock {
    phase: Mutex<(Phase, Instant)>,
}

impl Clock {
    fn set(&self, phase: Phase) {
        if let Ok(mut current) = self.phase.lock() {
            *current = (phase, Instant::now());
        }
    }

    /// Bytes came in: between requests, a new head has started.
    fn read(&self) {
        if let Ok(mut current) = self.phase.lock()
            && current.0 == Phase::Idle
        {
            *current = (Phase::Head, Instant::now());
        }
    }

    /// Bytes went out: an answer still flowing is not idleness.
    fn wrote(&self) {
        if let Ok(mut current) = self.phase.lock()
            && current.0 == Phase::Idle
        {
            current.1 = Instant::now();
        }
    }

    fn deadline(&self, limits: &Limits) -> Option<(Phase, Instant)> {
        let (phase, since) = *self.phase.lock().ok()?;
        match phase {
            Phase::Idle => Some((phase, since + limits.idle_timeout)),
            Phase::Head => Some((phase, since + limits.header_timeout)),
            Phase::Busy | Phase::Upgraded => None,
        }
    }
}

/// The answer to a stalled head, written straight to the socket: hyper has
/// no request to answer yet.
fn head_timeout_response() -> Vec<u8> {
    let body = serde_json::json!({
        "code": ErrorCode::RequestTimeout.as_str(),
        "message": "the request head did not arrive in time",
    })
    .to_string();
    format!(
        "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A client socket whose reads time out by the connection's phase.
struct Watched {
    io: TcpStream,
    clock: Arc<Clock>,
    limits: Limits,
    timer: Pin<Box<Sleep>>,
    /// Holds the connection's place under the cap until the socket closes,
    /// WebSocket included.
    _place: OwnedSemaphorePermit,
}

impl AsyncRead for Watched {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    this.clock.read();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(err)) => Poll::Ready(Err(err)),
            Poll::Pending => {
                let Some((phase, deadline)) = this.clock.deadline(&this.limits) else { return Poll::Pending };
                // The timer moves only when it must ring earlier, or when it
                // rang early: resetting it on every request put the runtime's
                // shared timer wheel on the redirect's path.
                if this.timer.deadline() > deadline {
                    this.timer.as_mut().reset(deadline);
                }
                if this.timer.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                if Instant::now() < deadline {
                    this.timer.as_mut().reset(deadline);
                    // Polled once so it wakes this task when it rings.
                    let _ = this.timer.as_mut().poll(cx);
                    return Poll::Pending;
                }
                if phase == Phase::Idle {
                    // End of stream: hyper closes a quiet connection quietly.
                    return Poll::Ready(Ok(()));
                }
                // Best effort: a client too slow to take 200 bytes misses it.
                let _ = Pin::new(&mut this.io).poll_write(cx, &head_timeout_response());
                Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, "request head timed out")))
            }
        }
    }
}

impl AsyncWrite for Watched {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.io).poll_write(cx, buf);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            this.clock.wrote();
        }
        written
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            this.clock.wrote();
        }
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// Serves `router` on `listener` until `shutdown` resolves, then lets the
/// requests in flight finish.
pub async fn run(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let places = Arc::new(Semaphore::new(limits.max_connections));
    let (stopping, stop) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        while connections.try_join_next().is_some() {}
        // At the cap, new connections wait in the kernel's backlog.
        let place = tokio::select! {
            place = places.clone().acquire_owned() => place.map_err(io::Error::other)?,
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of descriptors, or a connection reset before it was
                    // taken: wait a moment rather than spin.
                    tracing::warn!(error = %err, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        connections.spawn(connection(stream, peer, place, router.clone(), limits, stop.clone()));
    }
    drop(listener);
    stopping.send(true).ok();
    while connections.join_next().await.is_some() {}
    Ok(())
}

async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    place: OwnedSemaphorePermit,
    router: Router,
    limits: Limits,
    mut stop: watch::Receiver<bool>,
) {
    let clock = Arc::new(Clock { phase: Mutex::new((Phase::Idle, Instant::now())) });
    let io = Watched {
        io: stream,
        clock: clock.clone(),
        limits,
        timer: Box::pin(tokio::time::sleep_until(Instant::now() + limits.idle_timeout)),
        _place: place,
    };
    let service = service_fn(move |request: Request<Incoming>| {
        let router = router.clone();
        let clock = clock.clone();
        async move {
            clock.set(Phase::Busy);
            let mut response = match with_whole_body(request, limits.body_timeout).await {
                Ok(mut request) => {
                    request.extensions_mut().insert(ConnectInfo(peer));
                    router.oneshot(request).await.unwrap_or_else(|never| match never {})
                }
                Err(refusal) => refusal,
            };
            if response.status() == StatusCode::SWITCHING_PROTOCOLS {
                clock.set(Phase::Upgraded);
            } else {
                clock.set(Phase::Idle);
            }
            if response.status() == StatusCode::REQUEST_TIMEOUT {
                response.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
            }
            Ok::<_, std::convert::Infallible>(response)
        }
    });
    let conn = http1::Builder::new().serve_connection(TokioIo::new(io), service).with_upgrades();
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = stop.wait_for(|stopping| *stopping) => {}
    }
    conn.as_mut().graceful_shutdown();
    conn.await.ok();
}

/// The request with its whole body read, within the body timeout and
/// `MAX_BODY`. Every route reads its body whole anyway; reading it here puts
/// one deadline on all of them. A request without a body passes untouched.
async fn with_whole_body(request: Request<Incoming>, timeout: Duration) -> Result<Request<Body>, Response<Body>> {
    use hyper::body::Body as _;
    let (parts, body) = request.into_parts();
    if body.is_end_stream() {
        return Ok(Request::from_parts(parts, Body::new(body)));
    }
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared.is_some_and(|length| length > MAX_BODY as u64) {
        return Err(too_large());
    }
    let limited = http_body_util::Limited::new(body, MAX_BODY);
    match tokio::time::timeout(timeout, limited.collect()).await {
        Ok(Ok(collected)) => Ok(Request::from_parts(parts, Body::from(collected.to_bytes()))),
        Ok(Err(err)) if err.downcast_ref::<http_body_util::LengthLimitError>().is_some() => Err(too_large()),
        Ok(Err(_)) => Err(AppError::bad_request("the request body was cut off").into_response()),
        Err(_) => {
            Err(AppError::new(ErrorCode::RequestTimeout, "the request body did not arrive in time").into_response())
        }
    }
}

fn too_large() -> Response<Body> {
    AppError::new(ErrorCode::PayloadTooLarge, format!("the request body is over {} KB", MAX_BODY / 1024))
        .into_response()
}
