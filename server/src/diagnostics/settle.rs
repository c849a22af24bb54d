//! When the diagnostics of an edited document count as settled: the rule the VS Code extension
//! applies (`extension-vscode/src/diagnostics.ts`, `ChangeRecorder.settle`), here for the language
//! servers multiedit starts itself, so that both report alike. A document is settled once its
//! diagnostics changed after the edit and then stayed quiet for `QUIET`; one whose server publishes
//! nothing within its idle time (twice the longest time that server took after an edit, `idle`) is
//! `quiet`, taken as unchanged; at the bound, the others are `pending` and nothing is said of them.
//! A document its server had not checked before the edit has no idle time: it is waited for up to the
//! bound.

use std::time::{Duration, Instant};

/// How long after a document's last diagnostics change it counts as settled: a server that sends a
/// check's results in two updates (syntax, then semantics) sends the second within this.
pub(crate) const QUIET: Duration = Duration::from_millis(60);
/// The idle time of a server that has not yet published after an edit in this session.
pub(crate) const DEFAULT_IDLE: Duration = Duration::from_millis(1000);

/// How long after an edit a document whose server sends no update counts as unchanged: twice the
/// longest time that server took to publish after an edit (at least 300 ms), else `DEFAULT_IDLE`.
pub(crate) fn idle_time(latencies: &[Duration]) -> Duration {
    match latencies.iter().max() {
        Some(max) => (*max * 2 + Duration::from_millis(100)).max(Duration::from_millis(300)),
        None => DEFAULT_IDLE,
    }
}

/// One document being waited for: when its diagnostics last changed since the edit, and its idle
/// time (`None`: not checked before the edit, waited for up to the bound).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Waiting {
    pub(crate) changed: Option<Instant>,
    pub(crate) idle: Option<Duration>,
}

/// How the wait ended, per document in the order given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Settled {
    /// Changed after the edit, then quiet.
    Changed,
    /// No update within its idle time: unchanged.
    Quiet,
    /// Neither by the bound.
    Pending,
}

/// How much longer to wait from `now` (the edit at `started`, the bound `bound` after it); `None` once
/// every document is settled or the bound is reached.
pub(crate) fn wait_more(
    documents: &[Waiting],
    started: Instant,
    bound: Duration,
    now: Instant,
) -> Option<Duration> {
    let end = started + bound;
    if now >= end {
        return None;
    }
    let until = documents
        .iter()
        .map(|d| match (d.changed, d.idle) {
            (Some(at), _) => at + QUIET,
            (None, Some(idle)) => started + idle,
            (None, None) => end,
        })
        .max()?;
    (until > now).then(|| until.min(end) - now)
}

/// Each document's outcome at `now`.
pub(crate) fn outcome(documents: &[Waiting], started: Instant, now: Instant) -> Vec<Settled> {
    documents
        .iter()
        .map(|d| match (d.changed, d.idle) {
            (Some(_), _) => Settled::Changed,
            (None, Some(idle)) if started + idle <= now => Settled::Quiet,
            _ => Settled::Pending,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn a_document_settles_quiet_after_its_change_and_the_wait_ends_at_the_bound() {
        let t0 = Instant::now();
        let bound = MS(2000);
        // Changed at 400 ms: settled 60 ms later.
        let changed = [Waiting {
            changed: Some(t0 + MS(400)),
            idle: Some(MS(1000)),
        }];
        assert_eq!(wait_more(&changed, t0, bound, t0 + MS(410)), Some(MS(50)));
        assert_eq!(wait_more(&changed, t0, bound, t0 + MS(460)), None);
        assert_eq!(outcome(&changed, t0, t0 + MS(460)), [Settled::Changed]);
        // Never changed, checked before: quiet at its idle time.
        let silent = [Waiting {
            changed: None,
            idle: Some(MS(1000)),
        }];
        assert_eq!(wait_more(&silent, t0, bound, t0 + MS(100)), Some(MS(900)));
        assert_eq!(wait_more(&silent, t0, bound, t0 + MS(1000)), None);
        assert_eq!(outcome(&silent, t0, t0 + MS(1000)), [Settled::Quiet]);
        // Not checked before: waited for up to the bound, then pending.
        let fresh = [Waiting {
            changed: None,
            idle: None,
        }];
        assert_eq!(wait_more(&fresh, t0, bound, t0 + MS(1500)), Some(MS(500)));
        assert_eq!(wait_more(&fresh, t0, bound, t0 + MS(2000)), None);
        assert_eq!(outcome(&fresh, t0, t0 + MS(2000)), [Settled::Pending]);
        // An idle time past the bound: pending at the bound.
        let slow = [Waiting {
            changed: None,
            idle: Some(MS(5000)),
        }];
        assert_eq!(outcome(&slow, t0, t0 + MS(2000)), [Settled::Pending]);
    }

    #[test]
    fn the_idle_time_is_twice_the_slowest_publish_as_in_the_extension() {
        assert_eq!(idle_time(&[]), MS(1000));
        assert_eq!(idle_time(&[MS(50)]), MS(300));
        assert_eq!(idle_time(&[MS(400), MS(450)]), MS(1000));
    }
}
