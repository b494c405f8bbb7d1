//! The one writer of stdout: a task fed by a channel. Sending a message
//! only enqueues its line, so no write is ever cancelled half-way (rmcp
//! drops a pending `receive` whenever a response is ready: a reply written
//! inside it was lost) and lines never interleave.

use std::io;

use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot};

use crate::mcp::tell;

enum Out {
    Line(Vec<u8>),
    /// Answered once every line before it is written and flushed.
    Flush(oneshot::Sender<()>),
}

#[derive(Clone)]
pub struct Writer(mpsc::UnboundedSender<Out>);

impl Writer {
    /// Starts the task; needs the runtime.
    pub fn start() -> Writer {
        let (sender, receiver) = mpsc::unbounded_channel();
        tokio::spawn(write_lines(receiver));
        Writer(sender)
    }

    /// Queues one message's line (without its `\n`). An error once stdout
    /// has failed.
    pub fn line(&self, mut line: Vec<u8>) -> io::Result<()> {
        line.push(b'\n');
        self.0.send(Out::Line(line)).map_err(|_| io::ErrorKind::BrokenPipe.into())
    }

    /// Waits until every line queued so far is written.
    pub async fn flushed(&self) {
        let (done, written) = oneshot::channel();
        if self.0.send(Out::Flush(done)).is_ok() {
            let _ = written.await;
        }
    }
}

async fn write_lines(mut queue: mpsc::UnboundedReceiver<Out>) {
    let mut stdout = super::stdio::output();
    while let Some(out) = queue.recv().await {
        let written = match out {
            Out::Line(line) => match stdout.write_all(&line).await {
                // Flushed when nothing else waits: one flush for a burst.
                Ok(()) if queue.is_empty() => stdout.flush().await,
                other => other,
            },
            Out::Flush(done) => {
                let flushed = stdout.flush().await;
                let _ = done.send(());
                flushed
            }
        };
        if let Err(e) = written {
            tell(format_args!("writing stdout: {e}"));
            return;
        }
    }
}
