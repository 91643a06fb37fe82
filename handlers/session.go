package handlers

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/alexedwards/scs/postgresstore"
	"github.com/alexedwards/scs/sqlite3store"
	"github.com/alexedwards/scs/v2"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"palaver/models"
	"palaver/paths"
	"palaver/screens"
)

// NewSessions builds the session manager over the app's own database
// ("sqlite" or "postgres" dialect). cleanup is how often expired sessions are
// deleted; 0 runs no background cleanup (tests).
func NewSessions(db *sql.DB, dialect string, secure bool, cleanup time.Duration) *scs.SessionManager {
	sm := scs.New()
	if dialect == "postgres" {
		sm.Store = postgresstore.NewWithCleanupInterval(db, cleanup)
	} else {
		sm.Store = sqlite3store.NewWithCleanupInterval(db, cleanup)
	}
	// A conversation is still there when its person comes back next week.
	// Sessions left idle end sooner: sessionIdle (below) is checked
	// without rewriting the session on every request, as scs's IdleTimeout
	// would.
	sm.Lifetime = 30 * 24 * time.Hour
	sm.Cookie.Name = "palaver_session"
	sm.Cookie.HttpOnly = true
	sm.Cookie.SameSite = http.SameSiteLaxMode
	sm.Cookie.Secure = secure
	return sm
}

// Session keys.
const (
	sessUserID   = "user_id"
	sessCSRF     = "csrf"
	sessExchange = "exchange" // the current general exchange; 0 = a new chat
	sessEpoch    = "epoch"    // the account's session epoch when it signed in
	sessSeen     = "seen"     // when the session was last used, in Unix seconds (sessionTouch)
)

// A session ends after sessionIdle without use (and in any case at the end
// of its lifetime, NewSessions). Its last use is written at most once per
// sessionTouch: scs's own IdleTimeout would rewrite the session row, and
// wait for the disk, on every request that carries the cookie.
const (
	sessionIdle  = 14 * 24 * time.Hour
	sessionTouch = time.Hour
)

// visitorLifetime bounds a session without a signed-in user. Visitors get no
// session row at all for what they need (their CSRF token is a signed
// cookie, visitorToken); one is written only when something is kept for a
// session whose user was signed out (disabled, deleted), and then for at
// most a day.
const visitorLifetime = 24 * time.Hour

// Locals keys.
const (
	localUser         = "user"
	localSession      = "session"       // set once the session is loaded
	localVisitorToken = "visitor_token" // this response's visitor CSRF token
)

// session loads the scs session before the handler and commits it after,
// natively on fiber (scs's net/http LoadAndSave loses writes behind fiber's
// adaptor). Errors are rendered here, before the commit, so that what an
// error page put in the session (a fresh CSRF token) is kept.
func (h *Handlers) session(c *fiber.Ctx) error {
	sm := h.sessions
	// fiber strings alias fasthttp buffers that are reused; scs keeps the token.
	token := utils.CopyString(c.Cookies(sm.Cookie.Name))
	ctx, err := sm.Load(c.UserContext(), token)
	if err != nil {
		return err
	}
	if err := h.touchSession(ctx); err != nil {
		return err
	}
	c.SetUserContext(ctx)
	c.Locals(localSession, true)
	c.Vary(fiber.HeaderCookie)
	if err := c.Next(); err != nil {
		if err := c.App().Config().ErrorHandler(c, err); err != nil {
			return err
		}
	}
	switch sm.Status(ctx) {
	case scs.Modified:
		if !signedIn(sm, ctx) {
			if !keepsVisitorData(sm, ctx) {
				if token == "" {
					return nil // nothing was stored, and nothing is worth storing
				}
				return h.endSession(c, ctx) // a stored session with nothing left in it
			}
			if limit := time.Now().Add(visitorLifetime); sm.Deadline(ctx).After(limit) {
				sm.SetDeadline(ctx, limit)
			}
		}
		sm.Put(ctx, sessSeen, time.Now().Unix()) // written anyway
		tok, exp, err := sm.Commit(ctx)
		if err != nil {
			return err
		}
		c.Cookie(&fiber.Cookie{
			Name: sm.Cookie.Name, Value: tok, Path: "/", Expires: exp,
			MaxAge: int(time.Until(exp).Seconds() + 1), HTTPOnly: true,
			SameSite: fiber.CookieSameSiteLaxMode, Secure: sm.Cookie.Secure,
		})
		c.Set(fiber.HeaderCacheControl, `no-cache="Set-Cookie"`)
	case scs.Destroyed:
		expireCookie(c, sm.Cookie.Name, sm.Cookie.Secure)
	}
	return nil
}

// endSession deletes the stored session and expires its cookie.
func (h *Handlers) endSession(c *fiber.Ctx, ctx context.Context) error {
	if err := h.sessions.Destroy(ctx); err != nil {
		return err
	}
	expireCookie(c, h.sessions.Cookie.Name, h.sessions.Cookie.Secure)
	return nil
}

func expireCookie(c *fiber.Ctx, name string, secure bool) {
	c.Cookie(&fiber.Cookie{
		Name: name, Path: "/", Expires: time.Unix(1, 0), MaxAge: -1,
		HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode, Secure: secure,
	})
}

// signedIn says whether the session belongs to a signed-in user.
func signedIn(sm *scs.SessionManager, ctx context.Context) bool {
	return sm.GetInt64(ctx, sessUserID) != 0
}

// keepsVisitorData says whether a session without a user holds anything
// beyond the bookkeeping of a signed-in session (its CSRF token, epoch and
// last use), which is worth nothing once no one is signed in.
func keepsVisitorData(sm *scs.SessionManager, ctx context.Context) bool {
	for _, k := range sm.Keys(ctx) {
		switch k {
		case sessCSRF, sessEpoch, sessSeen:
		default:
			return true
		}
	}
	return false
}

// touchSession ends a stored session unused for sessionIdle, and marks one
// last used over sessionTouch ago as used now (to be written after the
// request). A session stored without a last use gets one. A session without
// a user is not kept alive by use: it ends at its deadline.
func (h *Handlers) touchSession(ctx context.Context) error {
	sm := h.sessions
	if !signedIn(sm, ctx) {
		return nil
	}
	now := time.Now()
	seen := sm.GetInt64(ctx, sessSeen)
	switch age := now.Sub(time.Unix(seen, 0)); {
	case seen != 0 && age > sessionIdle:
		return sm.Destroy(ctx) // as if it had expired: a fresh session follows
	case age > sessionTouch: // also when seen is 0
		sm.Put(ctx, sessSeen, now.Unix())
	}
	return nil
}

// loadUser puts the signed-in user, if any, in Locals. A session whose user
// no longer exists, is disabled, or moved to another session epoch since the
// session signed in (disabled or its password reset by an administrator) is
// signed out: scs sessions are opaque, so they end here, on their next request.
func (h *Handlers) loadUser(c *fiber.Ctx) error {
	ctx := c.UserContext()
	id := h.sessions.GetInt64(ctx, sessUserID)
	if id == 0 {
		return c.Next()
	}
	u, err := h.store.UserByID(ctx, id)
	switch {
	case errors.Is(err, models.ErrNotFound):
		h.sessions.Remove(ctx, sessUserID)
	case err != nil:
		return err
	case u.Disabled || h.sessions.GetInt64(ctx, sessEpoch) != u.SessionEpoch:
		h.sessions.Remove(ctx, sessUserID)
		h.sessions.Remove(ctx, sessEpoch)
	default:
		c.Locals(localUser, u)
	}
	return c.Next()
}

// currentUser is the signed-in user, or nil.
func currentUser(c *fiber.Ctx) *models.User {
	u, _ := c.Locals(localUser).(*models.User)
	return u
}

// requireUser sends visitors who are not signed in to the login page.
func (h *Handlers) requireUser(c *fiber.Ctx) error {
	if currentUser(c) == nil {
		return redirect(c, paths.Login)
	}
	return c.Next()
}

// csrfToken returns the CSRF token the page's forms and htmx send back: a
// signed-in session's own (made on first use), or for a visitor, the signed
// token of their CSRF cookie (visitorToken), so that showing a visitor a form
// stores nothing. An error raised before the session loaded (an over-size
// body) has none.
func (h *Handlers) csrfToken(c *fiber.Ctx) string {
	if c.Locals(localSession) == nil {
		return ""
	}
	ctx := c.UserContext()
	if !signedIn(h.sessions, ctx) {
		return h.visitorToken(c)
	}
	if t := h.sessions.GetString(ctx, sessCSRF); t != "" {
		return t
	}
	t := base64.RawURLEncoding.EncodeToString(randomBytes(32))
	h.sessions.Put(ctx, sessCSRF, t)
	return t
}

// visitorCookie holds a visitor's CSRF token: a random nonce and its HMAC
// under the server's key (Deps.CSRFKey). A post must carry the same token in
// its body or header as in the cookie (double submit): another site can make
// a browser send the cookie but cannot read it to put it in the form. The
// signature means a made-up cookie (written into the browser from a sibling
// subdomain, say) does not pass; a genuine one issued to someone else still
// would, and all that buys is signing a visitor in to the planter's own
// account, the known limit of double submit without a session.
const visitorCookie = "palaver_csrf"

// visitorToken is the visitor's valid token from their cookie, or a new one
// set in the cookie by this response.
func (h *Handlers) visitorToken(c *fiber.Ctx) string {
	if t, ok := c.Locals(localVisitorToken).(string); ok {
		return t
	}
	t := c.Cookies(visitorCookie)
	if h.validVisitorToken(t) {
		t = strings.Clone(t) // fiber's strings alias reused buffers
	} else {
		nonce := randomBytes(18)
		t = base64.RawURLEncoding.EncodeToString(nonce) + "." + base64.RawURLEncoding.EncodeToString(h.visitorMAC(nonce))
		c.Cookie(&fiber.Cookie{
			Name: visitorCookie, Value: t, Path: "/", HTTPOnly: true,
			SameSite: fiber.CookieSameSiteLaxMode, Secure: h.sessions.Cookie.Secure,
		})
	}
	c.Locals(localVisitorToken, t)
	return t
}

func (h *Handlers) visitorMAC(nonce []byte) []byte {
	m := hmac.New(sha256.New, h.csrfKey)
	m.Write([]byte("palaver visitor csrf\x00"))
	m.Write(nonce)
	return m.Sum(nil)
}

// validVisitorToken says whether t is a token this server signed.
func (h *Handlers) validVisitorToken(t string) bool {
	n, sig, ok := strings.Cut(t, ".")
	if !ok {
		return false
	}
	nonce, err1 := base64.RawURLEncoding.DecodeString(n)
	mac, err2 := base64.RawURLEncoding.DecodeString(sig)
	return err1 == nil && err2 == nil && len(nonce) > 0 && hmac.Equal(mac, h.visitorMAC(nonce))
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return b
}

// errCSRF is the answer to an unsafe request without the session's token.
var errCSRF = fiber.NewError(fiber.StatusForbidden, "The form has expired or did not come from Palaver. Reload the page and try again.")

// checkCSRF refuses unsafe requests that do not carry the CSRF token, in the
// X-CSRF-Token header or the body's csrf_token field. Never from the URL's
// query: a token there leaks through logs, history and Referer headers.
func (h *Handlers) checkCSRF(c *fiber.Ctx) error {
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return c.Next()
	}
	got := c.Get("X-CSRF-Token")
	if got == "" {
		got = formValue(c, "csrf_token")
	}
	if !h.csrfMatches(c, got) {
		return errCSRF
	}
	return c.Next()
}

// csrfMatches compares a presented token, in constant time, with the
// session's (signed in) or with the visitor's signed cookie.
func (h *Handlers) csrfMatches(c *fiber.Ctx, got string) bool {
	want := h.sessions.GetString(c.UserContext(), sessCSRF)
	if !signedIn(h.sessions, c.UserContext()) {
		want = c.Cookies(visitorCookie)
		if !h.validVisitorToken(want) {
			return false
		}
	}
	return want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(got)) == 1
}

// formValue is a field of a posted form (URL-encoded or multipart), never of
// the URL's query string as fiber's FormValue also reads.
func formValue(c *fiber.Ctx, key string) string {
	if bytes.HasPrefix(c.Request().Header.ContentType(), []byte(fiber.MIMEMultipartForm)) {
		f, err := c.MultipartForm()
		if err != nil || len(f.Value[key]) == 0 {
			return ""
		}
		return f.Value[key][0]
	}
	return string(c.Request().PostArgs().Peek(key))
}

// confirmed says whether the form's body confirms the action: never the
// URL's query (c.FormValue reads it too), so a link or a foreign form's
// action URL cannot stand in for the person's own confirmation.
func confirmed(c *fiber.Ctx) bool {
	return formValue(c, "confirmed") == "1"
}

// signIn starts a signed-in session for u with a new token (no fixation).
func (h *Handlers) signIn(c *fiber.Ctx, u *models.User) error {
	ctx := c.UserContext()
	if err := h.sessions.RenewToken(ctx); err != nil {
		return err
	}
	h.sessions.Put(ctx, sessUserID, u.ID)
	h.sessions.Put(ctx, sessEpoch, u.SessionEpoch)
	h.sessions.Put(ctx, sessSignedInAt, time.Now().Unix())
	h.sessions.Remove(ctx, sessCSRF) // a new token for the new identity
	return nil
}

// The session state of the screens: the general chat's current exchange
// (sessExchange, above) and, below, the page editor's.

// Per page, the scs session keeps the page's current conversation (as the
// general chat's sessExchange does; it replaces Galaxy's localStorage) and
// the proposals the person dismissed there, by server message id. The
// panel's open or closed state is one flag for all pages.
const (
	sessPanelClosed = "page_panel_closed"
	// maxDismissed bounds the dismissed ids kept per page (the oldest go
	// first); a rejection is also stored durably, so none comes back.
	maxDismissed = 500
)

func sessPageExchange(pageID int64) string { return "page_exchange:" + strconv.FormatInt(pageID, 10) }
func sessDismissed(pageID int64) string    { return "dismissed:" + strconv.FormatInt(pageID, 10) }

// pageCurrentExchange is the conversation the page's panel shows: the one
// the session names (0: a new chat), or when it names none yet, the page's
// most recent conversation (0: none).
func (h *Handlers) pageCurrentExchange(c *fiber.Ctx, pageID int64) (int64, error) {
	ctx := c.UserContext()
	if h.sessions.Exists(ctx, sessPageExchange(pageID)) {
		return h.sessions.GetInt64(ctx, sessPageExchange(pageID)), nil
	}
	return h.screens.LatestPageChat(ctx, currentUser(c).ID, pageID)
}

// panelState is what the session keeps about the page's chat panel (its
// current conversation resolved only when the panel is open).
func (h *Handlers) panelState(c *fiber.Ctx, pageID int64) (screens.PanelState, error) {
	st := screens.PanelState{Open: h.panelOpen(c)}
	if !st.Open {
		return st, nil
	}
	var err error
	st.Current, err = h.pageCurrentExchange(c, pageID)
	st.Dismissed = h.dismissed(c.UserContext(), pageID)
	return st, err
}

// setPageExchange makes id the page's current conversation (0: a new chat).
func (h *Handlers) setPageExchange(c *fiber.Ctx, pageID, id int64) {
	h.sessions.Put(c.UserContext(), sessPageExchange(pageID), id)
}

// dismissed is the set of the page's proposals dismissed in this session.
func (h *Handlers) dismissed(ctx context.Context, pageID int64) map[int64]bool {
	out := map[int64]bool{}
	for _, s := range strings.Split(h.sessions.GetString(ctx, sessDismissed(pageID)), ",") {
		if id, err := strconv.ParseInt(s, 10, 64); err == nil {
			out[id] = true
		}
	}
	return out
}

// dismiss adds a proposal to the page's dismissed ones. The ids are kept as
// a comma-joined string: no gob registration, and easy to bound.
func (h *Handlers) dismiss(ctx context.Context, pageID, messageID int64) {
	key := sessDismissed(pageID)
	ids := strings.Split(h.sessions.GetString(ctx, key), ",")
	if ids[0] == "" {
		ids = ids[:0]
	}
	id := strconv.FormatInt(messageID, 10)
	for _, s := range ids {
		if s == id {
			return
		}
	}
	ids = append(ids, id)
	if len(ids) > maxDismissed {
		ids = ids[len(ids)-maxDismissed:]
	}
	h.sessions.Put(ctx, key, strings.Join(ids, ","))
}

// forgetPage drops what the session keeps about a deleted page.
func (h *Handlers) forgetPage(ctx context.Context, pageID int64) {
	h.sessions.Remove(ctx, sessPageExchange(pageID))
	h.sessions.Remove(ctx, sessDismissed(pageID))
}

// panelOpen says whether the chat panel shows beside the editor.
func (h *Handlers) panelOpen(c *fiber.Ctx) bool {
	return !h.sessions.GetBool(c.UserContext(), sessPanelClosed)
}
