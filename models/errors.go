package models

import (
	"errors"
	"fmt"
)

// ErrNotFound means the row does not exist or belongs to another user: the two
// are deliberately indistinguishable.
var ErrNotFound = errors.New("not found")

// ErrTurnRunning means a turn is already running on the exchange.
var ErrTurnRunning = errors.New("a reply is still being written in this conversation")

// ErrSeqTaken means another writer appended at the same log position first.
var ErrSeqTaken = errors.New("another writer appended to this conversation first")

// ErrUsernameTaken means the username is already registered.
var ErrUsernameTaken = errors.New("that username is taken")

// ErrNoAssistantMessage means an exchange has no assistant message to rate.
var ErrNoAssistantMessage = errors.New("this conversation has no reply to rate yet")

// ErrLeaseLost means the turn's lease was taken from its owner (it was judged
// dead and failed), so the owner must not write to the exchange any more.
var ErrLeaseLost = errors.New("the turn's lease was lost")

// ErrExchangeGone means the exchange was deleted (alone, or with its page or
// its account) while its turn ran: the lease went with it. It is also an
// ErrLeaseLost, so what stops writing on a lost lease stops on it too.
var ErrExchangeGone = fmt.Errorf("the conversation was deleted while its reply was being written: %w", ErrLeaseLost)

// ErrBadCursor means a keyset cursor (where the next batch starts) could
// not be read.
var ErrBadCursor = errors.New("invalid cursor")

// ErrNothingToRetry means the exchange has no failed turn to run again.
var ErrNothingToRetry = errors.New("the last reply in this conversation did not fail: there is nothing to retry")

// ErrRetryLimit means a failed turn was tried as often as allowed.
var ErrRetryLimit = errors.New("this message was tried too many times; send it again to start over")

// ErrBadSeq means a fork or a regeneration named a position the log does not
// have (beyond its end), or one where it cannot be made (no reply there to
// answer again).
var ErrBadSeq = errors.New("that message is not in this conversation")

// ErrLogMoved means a message was written against an older view of the log:
// entries were added after the seq the writer had seen (TurnStart.AfterSeq).
var ErrLogMoved = errors.New("the conversation has newer messages than the ones answered")
