//! The envelope for refusals that actix-http's connection dispatcher writes itself, before any
//! middleware sees a request: 400 for a request that is not valid HTTP (a raw non-ASCII byte in
//! the request line, a control character in a header), 431 for a head over its buffer, 408 for
//! a client too slow to send one. actix writes these with an empty body and offers no hook, so
//! the connection's writer recognises them and sends them again with the contract's envelope.
//!
//! Such a refusal is always the last thing the dispatcher writes on a connection (it closes the
//! connection after it), so it is looked for only at the end of a write, and only in the exact
//! shape actix gives it: a status of 400 or more, `content-length: 0`, at most `connection` and
//! `date` besides, and nothing after it. Every response of the application itself carries
//! `x-request-id` and a content type, so none can be mistaken for one.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use actix_web::http::StatusCode;
use actix_web::web::{Buf as _, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::error::ApiError;

/// A connection whose bare protocol-level refusals go out as enveloped responses, and which
/// tells its requests when the client has gone ([`PeerGone`]).
pub struct EnvelopedIo<T> {
    io: T,
    /// Bytes accepted from the dispatcher (a rewritten refusal) not yet passed to `io`.
    pending: BytesMut,
    peer: PeerGone,
}

impl<T> EnvelopedIo<T> {
    pub fn new(io: T) -> Self {
        Self {
            io,
            pending: BytesMut::new(),
            peer: PeerGone::default(),
        }
    }

    /// The signal that this connection's client has gone, for its requests (the server puts it
    /// in each connection's data).
    pub fn peer(&self) -> PeerGone {
        self.peer.clone()
    }
}

/// Set once the client of a connection has closed it (its end of the stream, or an error
/// reading it). actix keeps running a request whose client has gone until it answers, and
/// reads the socket while it runs, so the connection's reader is where the end is seen; a
/// request that may be held long (a feed `wait`) races its work against [`PeerGone::gone`]
/// and stops at once, holding nothing and reading nothing more for a client no one answers.
#[derive(Debug, Clone, Default)]
pub struct PeerGone(tokio_util::sync::CancellationToken);

impl PeerGone {
    /// Resolves when the client has gone.
    pub async fn gone(&self) {
        self.0.cancelled().await;
    }

    pub fn has_gone(&self) -> bool {
        self.0.is_cancelled()
    }
}

impl<T: AsyncWrite + Unpin> EnvelopedIo<T> {
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.pending.is_empty() {
            let written = ready!(Pin::new(&mut self.io).poll_write(cx, &self.pending))?;
            if written == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.pending.advance(written);
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for EnvelopedIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let (room, filled) = (buf.remaining(), buf.filled().len());
        let read = Pin::new(&mut this.io).poll_read(cx, buf);
        let ended = match &read {
            Poll::Ready(Ok(())) => room > 0 && buf.filled().len() == filled,
            Poll::Ready(Err(_)) => true,
            Poll::Pending => false,
        };
        if ended {
            this.peer.0.cancel();
        }
        read
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for EnvelopedIo<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        let Some((start, status)) = bare_refusal(buf) else {
            return Pin::new(&mut this.io).poll_write(cx, buf);
        };
        this.pending.extend_from_slice(&buf[..start]);
        this.pending.extend_from_slice(&enveloped(status));
        // Whatever the socket does not take now goes out with the next flush.
        if let Poll::Ready(Err(error)) = this.poll_pending(cx) {
            return Poll::Ready(Err(error));
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

/// Where a bare refusal by the dispatcher starts at the end of `buf`, and its status.
fn bare_refusal(buf: &[u8]) -> Option<(usize, StatusCode)> {
    // A write that ends a head ends a line; most writes end a body (`}` of JSON) and are
    // passed on without a search.
    if !buf.ends_with(b"\n") {
        return None;
    }
    // A refusal head is short; only the tail of a write can hold one.
    let tail_start = buf.len().saturating_sub(256);
    let start = tail_start
        + buf[tail_start..]
            .windows(7)
            .rposition(|window| window == b"HTTP/1.")?;
    let mut headers = [httparse::EMPTY_HEADER; 4];
    let mut response = httparse::Response::new(&mut headers);
    let parsed = response.parse(&buf[start..]).ok()?;
    if parsed != httparse::Status::Complete(buf.len() - start) {
        return None;
    }
    let status = StatusCode::from_u16(response.code?).ok()?;
    let mut has_empty_length = false;
    for header in response.headers.iter() {
        match header.name.to_ascii_lowercase().as_str() {
            "content-length" if header.value == b"0" => has_empty_length = true,
            "connection" | "date" => {}
            _ => return None,
        }
    }
    (has_empty_length && (status.is_client_error() || status.is_server_error()))
        .then_some((start, status))
}

/// The refusal with the envelope, closing the connection as actix would.
fn enveloped(status: StatusCode) -> Vec<u8> {
    let error = match status {
        StatusCode::BAD_REQUEST => ApiError::malformed_http(),
        status => ApiError::for_status(status),
    };
    tracing::info!(
        target: "deckhand::request",
        status = status.as_u16(),
        error = error.code(),
        "refused before routing"
    );
    let body = error.body().to_string();
    let date = httpdate::fmt_http_date(std::time::SystemTime::now());
    let request_id = uuid::Uuid::new_v4();
    let head = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\nx-request-id: {request_id}\r\ndate: {date}\r\n\r\n",
        status.as_str(),
        status.canonical_reason().unwrap_or(""),
        body.len(),
    );
    let mut response = head.into_bytes();
    response.extend_from_slice(body.as_bytes());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    const DATE: &str = "date: Mon, 23 Nov 2026 07:39:34 GMT\r\n";

    #[test]
    fn bare_refusals_are_found_at_the_end_of_a_write() {
        let refusal = format!(
            "HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n{DATE}\r\n"
        );
        assert_eq!(
            bare_refusal(refusal.as_bytes()),
            Some((0, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE))
        );
        let after_a_response = format!(
            "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n{DATE}\r\n{{}}HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n{DATE}\r\n"
        );
        let (start, status) = bare_refusal(after_a_response.as_bytes()).unwrap();
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(after_a_response[start..].starts_with("HTTP/1.1 400"));
    }

    #[test]
    fn responses_of_the_application_are_left_alone() {
        for response in [
            format!("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n{DATE}\r\n"),
            format!(
                "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 0\r\n{DATE}\r\n"
            ),
            format!("HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n{DATE}\r\nbody"),
            format!("HTTP/1.1 400 Bad Request\r\ncontent-length: 5\r\n{DATE}\r\n"),
            "HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n".to_owned(),
        ] {
            assert_eq!(bare_refusal(response.as_bytes()), None, "{response}");
        }
    }

    #[test]
    fn the_envelope_is_complete_json_with_a_request_id() {
        let response = String::from_utf8(enveloped(StatusCode::REQUEST_TIMEOUT)).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap();
        assert!(
            head.starts_with("HTTP/1.1 408 Request Timeout\r\n"),
            "{head}"
        );
        assert!(head.contains(&format!("content-length: {}\r\n", body.len())));
        assert!(head.contains("x-request-id: "));
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(body["error"], "SERVICE_REQUEST_TIMEOUT");
    }
}
