//! An upstream's subscription stream read a turn at a time (issue 54).
//! The gateways run on one thread (`main.rs`), and tokio polls the IO
//! driver only after 61 tasks were polled or when none is ready. A stream
//! whose bytes are always there (an event that never ends, sent as fast as
//! the socket takes it) kept its connection's task and its reader ready:
//! the driver waited for about 2 MB of it each time (four 500 KB socket
//! reads, 8 ms median, measured with perf), and every other upstream's
//! calls with it. tokio's yield puts the reader behind the other ready
//! tasks and the driver's next poll (then 0.4 ms median).

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll};

/// The turns of a stream whose bytes another crate reads (rmcp's event
/// streams): each poll of it comes after a yield.
#[derive(Debug, Default)]
pub(crate) struct Turns {
    yielded: bool,
}

impl Turns {
    /// Pending once (the task woken after the others and the driver had
    /// their turn), then ready for one poll of the stream.
    pub(crate) fn poll_turn(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if std::mem::take(&mut self.yielded) {
            return Poll::Ready(());
        }
        self.yielded = pin!(tokio::task::yield_now()).poll(cx).is_pending();
        match self.yielded {
            true => Poll::Pending,
            false => Poll::Ready(()),
        }
    }
}

/// A task that counts its turns on the test's thread, for the tests that a
/// reader gives way.
#[cfg(test)]
pub(crate) fn ticker() -> std::sync::Arc<std::sync::atomic::AtomicUsize> {
    let turns = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = turns.clone();
    tokio::spawn(async move {
        loop {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            tokio::task::yield_now().await;
        }
    });
    turns
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering::Relaxed;

    use super::*;

    /// Each poll after the first of a turn is the stream's.
    #[tokio::test]
    async fn a_turn_is_taken_after_a_yield() {
        let turns = ticker();
        let mut t = Turns::default();
        for round in 1..=5 {
            std::future::poll_fn(|cx| t.poll_turn(cx)).await;
            assert!(turns.load(Relaxed) >= round, "round {round}");
        }
    }
}
