package handlers

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"palaver/accounts"
	"palaver/models"
	"palaver/throttle"
)

// Throttling of sign-in (API.md "Limits and headers") and registration.
// Failed sign-ins count against the username (in any case or form: its
// accounts.Key) and against the client's address; a key that has had its
// Max within the window is refused, a correct password included, until the
// oldest failure leaves the window. Registrations count against the address:
// each one that passes the form's checks, a taken name included, since each
// costs a bcrypt hash; ten an hour is plenty for a household or an office
// behind one address and little for a script.
var (
	signInNameLimit   = throttle.Limit{Name: "sign-in username", Max: 5, Window: 15 * time.Minute}
	signInAddrLimit   = throttle.Limit{Name: "sign-in address", Max: 20, Window: 15 * time.Minute}
	registerLimit     = throttle.Limit{Name: "registration address", Max: 10, Window: time.Hour}
	errBadCredentials = errors.New("wrong username or password")
)

// throttledError is an attempt refused by the throttle, and how long until
// the next is let in.
type throttledError struct{ wait time.Duration }

func (e *throttledError) Error() string { return fmt.Sprintf("throttled for %v", e.wait) }

// seconds is the Retry-After value: whole seconds, rounded up.
func (e *throttledError) seconds() int { return int(math.Ceil(e.wait.Seconds())) }

// in says when, for a person: "in 14 minutes", "in 30 seconds".
func (e *throttledError) in() string {
	switch s := e.seconds(); {
	case s <= 1:
		return "in a second"
	case s < 60:
		return fmt.Sprintf("in %d seconds", s)
	}
	m := int(math.Ceil(e.wait.Minutes()))
	if m == 1 {
		return "in a minute"
	}
	return fmt.Sprintf("in %d minutes", m)
}

// signInAttempt checks a password under the throttle: the attempt counts as
// a failure for the name and the address before the password is checked
// (so parallel attempts cannot slip past the limit), and is taken back when
// the password is right, which also clears the name's earlier failures (its
// owner's typing). Other names and the address's other failures are left as
// they are. Errors: *throttledError, errBadCredentials.
func (h *Handlers) signInAttempt(c *fiber.Ctx, username, password string) (*models.User, error) {
	ctx := c.UserContext()
	addr := h.clientAddr(c)
	name := throttle.Key{Limit: signInNameLimit, ID: nameKey(username)}
	from := throttle.Key{Limit: signInAddrLimit, ID: addrKey(addr)}
	wait, err := h.throttle.Take(ctx, name, from)
	if err != nil {
		return nil, err
	}
	if wait > 0 {
		h.log.Warn("sign-in refused: too many failed attempts", "username", logName(username), "addr", addr.String(),
			"retry_after", wait.Round(time.Second))
		return nil, &throttledError{wait}
	}
	u, err := h.store.UserByUsername(ctx, username)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return nil, errors.Join(err, h.throttle.Undo(ctx, name, from)) // no attempt was made
	}
	hash := ""
	if err == nil {
		hash = u.PasswordHash
	}
	if !accounts.CheckPassword(hash, password) {
		h.log.Warn("sign-in failed", "username", logName(username), "addr", addr.String())
		return nil, errBadCredentials
	}
	if err := h.throttle.Undo(ctx, from); err != nil {
		return nil, err
	}
	if err := h.throttle.Reset(ctx, name); err != nil {
		return nil, err
	}
	return u, nil
}

// registrationAttempt counts a registration against the client's address;
// a *throttledError when the address has had its share.
func (h *Handlers) registrationAttempt(c *fiber.Ctx) (*throttledError, error) {
	addr := h.clientAddr(c)
	wait, err := h.throttle.Take(c.UserContext(), throttle.Key{Limit: registerLimit, ID: addrKey(addr)})
	if err != nil || wait == 0 {
		return nil, err
	}
	h.log.Warn("registration refused: too many from one address", "addr", addr.String(), "retry_after", wait.Round(time.Second))
	return &throttledError{wait}, nil
}

// nameKey is what the throttle counts a username as: a hash of its
// accounts.Key, so every spelling of a name is one counter and a megabyte of
// "name" is 64 bytes of key.
func nameKey(username string) string {
	sum := sha256.Sum256([]byte(accounts.Key(username)))
	return hex.EncodeToString(sum[:])
}

// logName is a username as the log shows it: at most 64 characters.
func logName(username string) string {
	if utf8.RuneCountInString(username) <= 64 {
		return username
	}
	return string([]rune(username)[:64]) + "…"
}
