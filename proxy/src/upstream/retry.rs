//! The one retry rule of the upstream client: a call is sent again only
//! when it cannot have acted, or when acting twice is harmless.
//!
//! | what happened | what is known | done |
//! |---|---|---|
//! | connect refused or timed out, name not resolved, TLS refused | nothing reached the agent | reported (unreachable, timeout, TLS): a new connect a moment later meets the same agent |
//! | a pooled connection found closed before the request's writing began (hyper hands the request back); an h2 agent refusing the stream (`REFUSED_STREAM`, or, toward a gRPC agent, a GOAWAY whose last stream id is below it; RFC 9113 §8.7: not processed) | the agent did not get the request | sent once more on a new connection, any call |
//! | written (or its writing failed part way), then the connection ended before any answer | it may have arrived | a read ([`Repeat::Safe`]) is sent once more on a new connection; any other call is not: [`Failure::OutcomeUnknown`] |
//! | written, then no answer within the read or answer timeout | it may have arrived | not sent again: a read gets [`Failure::UpstreamTimeout`], any other call [`Failure::OutcomeUnknown`] (timed out) |
//! | an answer came (any status: 4xx declined, 5xx failed; JSON-RPC errors), or failed inside its body | the agent answered | never sent again: the answer (or the failure) is the client's |
//!
//! A pooled connection the agent closed while idle is dropped before
//! anything is written to it (the call goes on a new one). One call is sent
//! at most twice.
//!
//! The card fetch and the proxy's own GetTask calls (`crate::card::cache`,
//! on the same pool) are reads under the same table; webhook posts
//! (`crate::push`, a pool of their own) too, a push being delivered at
//! least once. Calls to gRPC agents (`crate::grpc::upstream`: unary calls,
//! the ListTasks page's GetTask, stream opens) follow it through
//! [`Attempts`] and [`Repeat::of`]: a failed connect is final; a stream
//! the agent refused unprocessed (RST_STREAM `REFUSED_STREAM`, or a GOAWAY
//! below it) is [`Lost::Refused`], sent once more on a new channel
//! whatever the call; any other request lost before the answer's head is
//! in doubt, a read then asked once more on a new channel.

use crate::error::Failure;

/// Whether a call can be sent twice without the agent acting twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    /// Reads: GetTask, the list calls, a push config's get, the extended
    /// card, a subscribe.
    Safe,
    /// SendMessage, streaming sends, CancelTask, push-config create and
    /// delete, and any operation the proxy does not know.
    Never,
}

impl Repeat {
    /// The rule for `op` (`None`: an operation the proxy does not know,
    /// never repeated).
    pub fn of(op: Option<translate::method::Method>) -> Repeat {
        use translate::method::Method as Op;
        match op {
            Some(
                Op::GetTask
                | Op::ListTasks
                | Op::GetPushConfig
                | Op::ListPushConfigs
                | Op::GetExtendedCard
                | Op::SubscribeToTask,
            ) => Repeat::Safe,
            Some(
                Op::SendMessage
                | Op::SendStreamingMessage
                | Op::CancelTask
                | Op::CreatePushConfig
                | Op::DeletePushConfig,
            )
            | None => Repeat::Never,
        }
    }
}

/// How an attempt failed, as far as the agent is concerned.
#[derive(Debug)]
pub(crate) enum Lost {
    /// No whole request reached the agent (the write failed).
    NotSent(Failure),
    /// The agent refused it unprocessed (h2 `REFUSED_STREAM`): it did not
    /// act, on a pooled connection or a new one.
    Refused(Failure),
    /// Written, then the connection ended (or, `timed_out`, no answer came
    /// in time) before any byte of an answer: the agent may have acted.
    InDoubt { failure: Failure, timed_out: bool },
    /// The agent answered (or failed inside its answer), or the failure
    /// is the connection's own (TLS): final.
    Answered(Failure),
}

impl Lost {
    /// The agent's answer was not what HTTP/1.x allows.
    pub(super) fn bad(detail: impl Into<String>) -> Lost {
        Lost::Answered(Failure::BadUpstreamResponse {
            detail: detail.into(),
        })
    }
}

/// The attempts of one call: the table above, applied to each failure.
pub(crate) struct Attempts {
    repeat: Repeat,
    again: bool,
}

impl Attempts {
    pub(crate) fn new(repeat: Repeat) -> Attempts {
        Attempts {
            repeat,
            again: true,
        }
    }

    /// `Ok(())`: send the call once more, on a new connection; else the
    /// failure the client is told. `reused`: the failed attempt ran on a
    /// pooled connection.
    pub(crate) fn next(&mut self, lost: Lost, reused: bool) -> Result<(), Failure> {
        let first = std::mem::replace(&mut self.again, false);
        match lost {
            Lost::NotSent(f) if first && reused => {
                tracing::debug!(failure = ?f, "pooled upstream connection lost before the request was sent; sent on a new one");
                Ok(())
            }
            Lost::Refused(f) if first => {
                tracing::debug!(failure = ?f, "the agent refused the request unprocessed; sent on a new connection");
                Ok(())
            }
            Lost::NotSent(f) | Lost::Refused(f) | Lost::Answered(f) => Err(f),
            Lost::InDoubt {
                failure,
                timed_out: false,
            } if first && self.repeat == Repeat::Safe => {
                tracing::debug!(failure = ?failure, "upstream connection ended before an answer; a read, so sent again on a new one");
                Ok(())
            }
            Lost::InDoubt { failure, .. } if self.repeat == Repeat::Safe => Err(failure),
            Lost::InDoubt { failure, timed_out } => Err(Failure::OutcomeUnknown {
                detail: match failure {
                    Failure::UpstreamUnavailable { detail } => detail,
                    other => format!("{other:?}"),
                },
                timed_out,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unavailable() -> Failure {
        Failure::UpstreamUnavailable { detail: "x".into() }
    }

    #[test]
    fn the_table() {
        use Repeat::*;
        let in_doubt = |timed_out| Lost::InDoubt {
            failure: if timed_out {
                Failure::UpstreamTimeout
            } else {
                unavailable()
            },
            timed_out,
        };
        for r in [Safe, Never] {
            // Nothing sent: again only when the pooled connection was lost,
            // and once.
            assert!(Attempts::new(r)
                .next(Lost::NotSent(unavailable()), true)
                .is_ok());
            assert_eq!(
                Attempts::new(r).next(Lost::NotSent(unavailable()), false),
                Err(unavailable())
            );
            let mut a = Attempts::new(r);
            assert!(a.next(Lost::NotSent(unavailable()), true).is_ok());
            assert_eq!(
                a.next(Lost::NotSent(unavailable()), true),
                Err(unavailable())
            );
            // Refused unprocessed: again once, on any connection.
            for reused in [false, true] {
                let mut a = Attempts::new(r);
                assert!(a.next(Lost::Refused(unavailable()), reused).is_ok());
                assert_eq!(
                    a.next(Lost::Refused(unavailable()), reused),
                    Err(unavailable())
                );
            }
            // Answered: final, on any connection.
            for reused in [false, true] {
                assert_eq!(
                    Attempts::new(r).next(Lost::Answered(unavailable()), reused),
                    Err(unavailable())
                );
            }
        }
        // In doubt: a read once more (on any connection), not after a
        // timeout; anything else's outcome is unknown.
        for reused in [false, true] {
            assert!(Attempts::new(Safe).next(in_doubt(false), reused).is_ok());
        }
        let mut a = Attempts::new(Safe);
        assert!(a.next(in_doubt(false), false).is_ok());
        assert_eq!(a.next(in_doubt(false), false), Err(unavailable()));
        assert_eq!(
            Attempts::new(Safe).next(in_doubt(true), false),
            Err(Failure::UpstreamTimeout)
        );
        for t in [false, true] {
            for reused in [false, true] {
                assert!(matches!(
                    Attempts::new(Never).next(in_doubt(t), reused),
                    Err(Failure::OutcomeUnknown { timed_out, .. }) if timed_out == t
                ));
            }
        }
    }
}
