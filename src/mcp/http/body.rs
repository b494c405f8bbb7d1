//! A request's body, read whole (rmcp parses a message whole) within three
//! bounds: its size ([`super::MAX_REQUEST_BYTES`], 413), its time (the whole
//! body within `Limits::body_wait` of its headers, 408: hyper bounds only
//! the headers' time, and a body trickled a byte at a time would hold its
//! connection and buffer forever), and the bytes every request's body holds
//! at once (the [`Budget`], 503), counted as they arrive, so that stalled
//! bodies hold no more than they sent and never more than the budget.

use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The bytes of request bodies the server may hold at once.
pub struct Budget {
    bytes: Arc<Semaphore>,
    size: usize,
}

/// A request's share of the budget, given back when it is dropped (once
/// the request's answer has been sent: rmcp holds the message meanwhile).
pub struct Held(Option<OwnedSemaphorePermit>);

/// Why a body was not taken.
#[derive(Debug)]
pub enum Refused {
    /// Past `max` bytes.
    TooLarge,
    /// Not whole within the time bound.
    TooSlow(Duration),
    /// The budget has no room for it now.
    Busy(usize),
    /// The connection failed mid-body.
    Broken(String),
}

impl Budget {
    pub fn new(size: usize) -> Budget {
        Budget { bytes: Arc::new(Semaphore::new(size.min(Semaphore::MAX_PERMITS))), size }
    }

    /// `n` more bytes for `held`, if the budget has them now.
    fn take(&self, held: &mut Held, n: usize) -> Result<(), Refused> {
        let Ok(count) = u32::try_from(n) else { return Err(Refused::Busy(self.size)) };
        if count == 0 {
            return Ok(());
        }
        let permit = Arc::clone(&self.bytes)
            .try_acquire_many_owned(count)
            .map_err(|_| Refused::Busy(self.size))?;
        match &mut held.0 {
            Some(more) => more.merge(permit),
            None => held.0 = Some(permit),
        }
        Ok(())
    }
}

/// Reads `body` whole: at most `max` bytes, within `wait`, each byte
/// counted against `budget` as it arrives.
pub async fn read(
    mut body: Incoming,
    max: usize,
    wait: Duration,
    budget: &Budget,
) -> Result<(Bytes, Held), Refused> {
    let deadline = tokio::time::Instant::now() + wait;
    let mut held = Held(None);
    let mut frames: Vec<Bytes> = Vec::new();
    let mut size = 0usize;
    loop {
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Err(_) => return Err(Refused::TooSlow(wait)),
            Ok(None) => break,
            Ok(Some(Err(e))) => return Err(Refused::Broken(e.to_string())),
            Ok(Some(Ok(frame))) => frame,
        };
        // Trailers carry no bytes of the message.
        let Ok(data) = frame.into_data() else { continue };
        size = size.saturating_add(data.len());
        if size > max {
            return Err(Refused::TooLarge);
        }
        budget.take(&mut held, data.len())?;
        frames.push(data);
    }
    let whole = match frames.len() {
        0 => Bytes::new(),
        1 => frames.swap_remove(0),
        _ => {
            let mut whole = BytesMut::with_capacity(size);
            for frame in frames {
                whole.extend_from_slice(&frame);
            }
            whole.freeze()
        }
    };
    Ok((whole, held))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_gives_what_it_has_and_takes_it_back_when_dropped() {
        let budget = Budget::new(10);
        let mut first = Held(None);
        budget.take(&mut first, 6).unwrap();
        budget.take(&mut first, 3).unwrap();
        let mut second = Held(None);
        assert!(matches!(budget.take(&mut second, 2), Err(Refused::Busy(10))));
        drop(first);
        budget.take(&mut second, 10).unwrap();
    }
}
