package agents

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// withRetries runs try until it succeeds, retrying what again allows,
// with exponential backoff and jitter (or the server's Retry-After), at
// most attempts times (0: 4) from backoff (0: 500 ms). Once try has
// streamed anything to the user (it calls streamed), a retry would repeat
// it: the error is final. The OpenAI and Anthropic providers share it.
func withRetries[T any](ctx context.Context, attempts int, backoff time.Duration, again func(error) bool,
	try func(streamed func()) (T, error)) (T, error) {
	if attempts <= 0 {
		attempts = 4
	}
	if backoff <= 0 {
		backoff = 500 * time.Millisecond
	}
	var zero T
	for attempt := 1; ; attempt++ {
		streamed := false
		out, err := try(func() { streamed = true })
		if err == nil {
			return out, nil
		}
		if streamed || attempt >= attempts || !again(err) || ctx.Err() != nil {
			if attempt > 1 {
				err = fmt.Errorf("after %d attempts: %w", attempt, err)
			}
			return zero, err
		}
		wait := backoff<<(attempt-1) + rand.N(backoff/2+1)
		var se *httpStatusError
		if errors.As(err, &se) && se.RetryAfter > 0 {
			wait = se.RetryAfter
		}
		select {
		case <-ctx.Done():
			return zero, ctx.Err()
		case <-time.After(wait):
		}
	}
}
