//! The client's requests in flight: each id as the client wrote it, mapped
//! to an internal integer rmcp sees (so any JSON-RPC id, an integer beyond
//! 64 bits or a float included, comes back byte for byte), one request per
//! id at a time, the batches waiting for their answers, and the revision
//! the `initialize` response negotiated (docs/MCP.md, "Protocol").

use std::collections::HashMap;

pub struct Request {
    /// The id as the client wrote it (JSON text).
    pub raw: String,
    pub batch: Option<u64>,
    initialize: bool,
}

impl Request {
    pub fn is_initialize(&self) -> bool {
        self.initialize
    }
}

struct Batch {
    /// Requests of the batch not answered yet.
    waiting: usize,
    /// Still being read: not complete even when nothing waits.
    open: bool,
    answers: Vec<String>,
}

#[derive(Default)]
pub struct InFlight {
    next: i64,
    requests: HashMap<i64, Request>,
    by_raw: HashMap<String, i64>,
    batches: HashMap<u64, Batch>,
    next_batch: u64,
    revision: Option<String>,
}

impl InFlight {
    /// Takes a request in: its internal id, or `None` while another request
    /// with this id waits for its answer.
    pub fn admit(&mut self, raw: &str, batch: Option<u64>, initialize: bool) -> Option<i64> {
        if self.by_raw.contains_key(raw) {
            return None;
        }
        self.next += 1;
        let internal = self.next;
        self.by_raw.insert(raw.to_owned(), internal);
        self.requests.insert(internal, Request { raw: raw.to_owned(), batch, initialize });
        if let Some(batch) = batch.and_then(|b| self.batches.get_mut(&b)) {
            batch.waiting += 1;
        }
        Some(internal)
    }

    /// The request `internal` stands for, now answered (its id free again);
    /// `None` if it is not in flight (cancelled).
    pub fn answered(&mut self, internal: i64) -> Option<Request> {
        let request = self.requests.remove(&internal)?;
        self.by_raw.remove(&request.raw);
        Some(request)
    }

    /// The client cancelled the request with this id: its internal id, and
    /// its batch's answer if that completed it. The id is free at once, and
    /// an answer still sent for it is dropped.
    pub fn cancelled(&mut self, raw: &str) -> Option<(i64, Option<String>)> {
        let internal = *self.by_raw.get(raw)?;
        let request = self.answered(internal)?;
        let complete = request.batch.and_then(|batch| {
            if let Some(b) = self.batches.get_mut(&batch) {
                b.waiting = b.waiting.saturating_sub(1);
            }
            self.complete(batch)
        });
        Some((internal, complete))
    }

    pub fn open_batch(&mut self) -> u64 {
        self.next_batch += 1;
        let batch = Batch { waiting: 0, open: true, answers: Vec::new() };
        self.batches.insert(self.next_batch, batch);
        self.next_batch
    }

    /// An answer for `batch`: the whole batch's answer once it is complete.
    /// `answers_a_request` when it answers one of the batch's requests.
    pub fn batch_answer(
        &mut self,
        batch: u64,
        answer: String,
        answers_a_request: bool,
    ) -> Option<String> {
        let b = self.batches.get_mut(&batch)?;
        b.answers.push(answer);
        if answers_a_request {
            b.waiting = b.waiting.saturating_sub(1);
        }
        self.complete(batch)
    }

    /// Every element of `batch` was read: its answer if complete.
    pub fn close_batch(&mut self, batch: u64) -> Option<String> {
        if let Some(b) = self.batches.get_mut(&batch) {
            b.open = false;
        }
        self.complete(batch)
    }

    /// The JSON array of the answers, once every request is answered; none
    /// for a batch of notifications only.
    fn complete(&mut self, batch: u64) -> Option<String> {
        let b = self.batches.get(&batch)?;
        if b.open || b.waiting > 0 {
            return None;
        }
        let b = self.batches.remove(&batch)?;
        (!b.answers.is_empty()).then(|| format!("[{}]", b.answers.join(",")))
    }

    pub fn set_revision(&mut self, revision: &str) {
        self.revision = Some(revision.to_owned());
    }

    /// The revision `initialize` negotiated.
    pub fn revision(&self) -> Option<&str> {
        self.revision.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_admitted_once_until_answered() {
        let mut ids = InFlight::default();
        let first = ids.admit("7", None, false);
        assert!(first.is_some());
        assert_eq!(ids.admit("7", None, false), None);
        assert!(ids.admit("\"7\"", None, false).is_some(), "a string is another id");
        assert_eq!(ids.answered(first.unwrap()).map(|r| r.raw), Some("7".to_owned()));
        assert!(ids.admit("7", None, false).is_some());
    }

    #[test]
    fn a_batch_answers_when_its_last_request_does() {
        let mut ids = InFlight::default();
        let batch = ids.open_batch();
        let a = ids.admit("1", Some(batch), false).unwrap();
        assert_eq!(ids.batch_answer(batch, "{\"e\":1}".into(), false), None);
        assert_eq!(ids.close_batch(batch), None);
        assert!(ids.answered(a).is_some());
        assert_eq!(
            ids.batch_answer(batch, "{\"a\":1}".into(), true).as_deref(),
            Some("[{\"e\":1},{\"a\":1}]")
        );
        let only_notifications = ids.open_batch();
        assert_eq!(ids.close_batch(only_notifications), None);
    }
}
