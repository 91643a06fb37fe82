package handlers

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
	"palaver/paths"
	"palaver/screens"
	"palaver/throttle"
	"palaver/views"
)

// Share links (issue 28): the viewer's page, the owner's form and the
// account page's and admin's lists.

// shareOpenLimit bounds the opens of share links (page, JSON, continue)
// per address: plenty for people reading, little for a token guesser.
var shareOpenLimit = throttle.Limit{Name: "share open address", Max: 120, Window: time.Minute}

// shareToken is what a share link's token may look like; anything else is
// a 404 before the database is asked.
var shareToken = regexp.MustCompile(`^[A-Za-z0-9_-]{22,64}$`)

// now is the handlers' clock: Config.Now (tests) or the time.
func (h *Handlers) now() time.Time {
	if h.cfg.Now != nil {
		return h.cfg.Now().UTC()
	}
	return time.Now().UTC()
}

// openShare sets a share answer's headers, counts the open against the
// client's address, and loads the live share the path's token names if
// this viewer may open it. Unknown, revoked, expired, and "users" for a
// visitor are all the same 404.
func (h *Handlers) openShare(c *fiber.Ctx) (*models.Share, string, error) {
	// The Referrer-Policy and X-Robots-Tag are setSecurityHeaders'.
	c.Set(fiber.HeaderCacheControl, "private, no-store")
	wait, err := h.throttle.Take(c.UserContext(), throttle.Key{Limit: shareOpenLimit, ID: addrKey(h.clientAddr(c))})
	if err != nil {
		return nil, "", err
	}
	if wait > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(wait.Seconds())+1))
		return nil, "", fiber.NewError(fiber.StatusTooManyRequests, "Too many share links opened from your address. Try again in a minute.")
	}
	token := c.Params("token")
	if !shareToken.MatchString(token) {
		return nil, "", models.ErrNotFound
	}
	sh, owner, err := h.store.ShareByToken(c.UserContext(), token, h.now())
	if err != nil {
		return nil, "", err
	}
	if sh.Visibility == models.ShareUsers && currentUser(c) == nil {
		return nil, "", models.ErrNotFound
	}
	return sh, owner, nil
}

// shareAt is the seq a viewer's page holds (?at=, from before an update),
// else the share's own.
func shareAt(c *fiber.Ctx, sh *models.Share) int64 {
	if at, err := strconv.ParseInt(c.Query("at", formValue(c, "at")), 10, 64); err == nil && at >= 0 && at < sh.AtSeq {
		return at
	}
	return sh.AtSeq
}

// sharePage shows a share link's snapshot, read-only, to anyone it is for.
func (h *Handlers) sharePage(c *fiber.Ctx) error {
	sh, owner, err := h.openShare(c)
	if err != nil {
		return err
	}
	at := shareAt(c, sh)
	msgs, err := h.store.SharedMessages(c.UserContext(), sh, at)
	if err != nil {
		return err
	}
	if c.Method() == fiber.MethodGet { // a HEAD is no one reading it
		if err := h.store.CountShareView(c.UserContext(), sh.ID); err != nil {
			return err
		}
	}
	p := views.ShareScreen{Base: h.base(c, sh.Title, ""), Title: sh.Title, AtSeq: at, Token: sh.Token,
		SignedIn: currentUser(c) != nil}
	p.NoIndex = true
	if sh.ShowOwner {
		p.Owner = owner
	}
	for _, m := range msgs {
		sm := views.SharedMessage{Seq: m.Seq, Role: m.Role, Time: accountTime(m.CreatedAt),
			Files: screens.SharedFileChips(sh.Token, m.Files)}
		if m.Role == models.RoleAssistant {
			sm.HTML = h.screens.Markdown(m.Content)
		} else {
			sm.Text = m.Content
		}
		p.Messages = append(p.Messages, sm)
	}
	return render(c, fiber.StatusOK, views.SharePage(p))
}

// shareFile serves a file of the snapshot a share link opens (an image
// shown on its page, or a download), by the link's own route: any file
// that is not the snapshot's answers 404 like an unknown one.
func (h *Handlers) shareFile(c *fiber.Ctx) error { return h.serveSharedFile(c, false) }

// shareFileThumbnail serves an image of a share's snapshot, its thumbnail.
func (h *Handlers) shareFileThumbnail(c *fiber.Ctx) error { return h.serveSharedFile(c, true) }

func (h *Handlers) serveSharedFile(c *fiber.Ctx, thumbnail bool) error {
	sh, _, err := h.openShare(c)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(c.Params("n"), 10, 64)
	if err != nil || id <= 0 {
		return models.ErrNotFound
	}
	f, data, err := h.store.SharedFile(c.UserContext(), sh, id, thumbnail)
	if err != nil {
		return err
	}
	// openShare's no-store stands: a revoked link's files go with it.
	err = sendFile(c, f, data, thumbnail)
	c.Set(fiber.HeaderCacheControl, "private, no-store")
	return err
}

// shareContinue copies the snapshot the viewer's page shows into a new
// conversation of theirs and opens it.
func (h *Handlers) shareContinue(c *fiber.Ctx) error {
	var at *int64
	if n, err := strconv.ParseInt(formValue(c, "at"), 10, 64); err == nil {
		at = &n
	}
	ex, err := h.continueShare(c, at)
	if err != nil {
		return err
	}
	return redirect(c, paths.Chat(ex.ID))
}

// chatShareScreen is the share form of one of the user's conversations.
func (h *Handlers) chatShareScreen(c *fiber.Ctx, id int64) (views.ShareForm, error) {
	ex, err := h.store.Exchange(c.UserContext(), currentUser(c).ID, id)
	if err == nil && ex.Scope == models.ScopeSubRun {
		err = models.ErrNotFound
	}
	if err != nil {
		return views.ShareForm{}, err
	}
	last, err := h.store.LastSeq(c.UserContext(), currentUser(c).ID, id)
	if err != nil {
		return views.ShareForm{}, err
	}
	f := views.ShareForm{Base: h.base(c, "Share “"+ex.Title+"”", "chat"), ExchangeID: id, Title: ex.Title,
		LastSeq: last, AtSeq: last, Visibility: models.ShareLink}
	// From time travel (?at=N, N counted from 1 as its address counts).
	if n, err := strconv.ParseInt(c.Query("at"), 10, 64); err == nil && n >= 1 && n-1 <= last {
		f.AtSeq = n - 1
	}
	return f, nil
}

// chatShareForm shows the share form of a conversation.
func (h *Handlers) chatShareForm(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	f, err := h.chatShareScreen(c, id)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.ShareFormScreen(f))
}

// chatShareCreate makes a share link from the form and shows it with its
// Copy button.
func (h *Handlers) chatShareCreate(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	f, err := h.chatShareScreen(c, id)
	if err != nil {
		return err
	}
	p := apiShareNew{Visibility: formValue(c, "visibility"), ShowOwner: formValue(c, "show_owner") != ""}
	if n, err := strconv.ParseInt(formValue(c, "at_seq"), 10, 64); err == nil {
		p.AtSeq = &n
	}
	if days, err := strconv.ParseInt(formValue(c, "expires_in_days"), 10, 64); err == nil {
		p.ExpiresInDays = &days
	}
	sh, err := h.createShare(c, id, p)
	if err != nil {
		return refusalOf(err, fiber.StatusBadRequest).onPage(func(r *Refusal) error {
			f.Error = r.Reason
			return render(c, r.Status, views.ShareFormScreen(f))
		})
	}
	f.Link = c.BaseURL() + paths.Share(sh.Token)
	f.AtSeq, f.Visibility = sh.AtSeq, sh.Visibility
	return render(c, fiber.StatusCreated, views.ShareFormScreen(f))
}

// accountShares is the account page's list of the user's share links.
func (h *Handlers) accountShares(c *fiber.Ctx) ([]views.AccountShare, error) {
	shares, err := h.store.Shares(c.UserContext(), currentUser(c).ID)
	if err != nil {
		return nil, err
	}
	now := h.now()
	out := make([]views.AccountShare, 0, len(shares))
	for _, sh := range shares {
		out = append(out, newShareRow(c, &sh, now, ""))
	}
	return out, nil
}

// newShareRow is a share as the account page and the admin list show it.
func newShareRow(c *fiber.Ctx, sh *models.Share, now time.Time, owner string) views.AccountShare {
	r := views.AccountShare{ID: sh.ID, ExchangeID: sh.ExchangeID, Title: sh.Title, Link: c.BaseURL() + paths.Share(sh.Token),
		What: "up to message " + strconv.FormatInt(sh.AtSeq+1, 10), Who: "anyone with the link",
		Created: accountTime(sh.CreatedAt), Expires: "never", Views: sh.Views, Live: sh.Live(now), Owner: owner}
	if sh.Visibility == models.ShareUsers {
		r.Who = "signed-in users"
	}
	if sh.ExpiresAt != nil {
		r.Expires = accountTime(*sh.ExpiresAt)
	}
	switch {
	case sh.RevokedAt != nil:
		r.State = "revoked"
	case !r.Live:
		r.State = "expired"
	}
	return r
}

// accountShareRevoke revokes one of the user's share links.
func (h *Handlers) accountShareRevoke(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := h.store.RevokeShare(c.UserContext(), currentUser(c).ID, id, h.now()); err != nil {
		return err
	}
	return h.accountDone(c, "The share link was revoked: it opens nothing now.")
}

// accountShareUpdate re-snapshots one of the user's share links to the
// conversation's latest entry; its address stays.
func (h *Handlers) accountShareUpdate(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if _, err := h.store.UpdateShare(c.UserContext(), currentUser(c).ID, id,
		models.ShareUpdate{Resnapshot: true, At: h.now()}); err != nil {
		return err
	}
	return h.accountDone(c, "The share link now shows the conversation as it is.")
}

// adminShares lists every user's share links, newest first, one batch at a
// time by keyset (?before=ID), as the audit log pages.
func (h *Handlers) adminShares(c *fiber.Ctx) error {
	var before int64
	if v := c.Query("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return fiber.NewError(fiber.StatusBadRequest, "?before= takes a positive number.")
		}
		before = n
	}
	shares, more, err := h.store.AdminShares(c.UserContext(), before, adminListSize)
	if err != nil {
		return err
	}
	p := views.AdminSharesScreen{AdminChrome: h.adminChrome(c, "Share links", views.AdminSharesSection)}
	now := h.now()
	for _, sh := range shares {
		p.Shares = append(p.Shares, newShareRow(c, &sh.Share, now, sh.Username))
	}
	if before > 0 {
		p.FirstURL = paths.AdminShares
	}
	if more {
		p.NextURL = paths.WithQuery(paths.AdminShares, url.Values{"before": {strconv.FormatInt(shares[len(shares)-1].ID, 10)}})
	}
	return render(c, fiber.StatusOK, views.AdminShares(p))
}

// adminShareRevoke revokes anyone's share link; the audit log records it.
func (h *Handlers) adminShareRevoke(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := h.store.AdminRevokeShare(c.UserContext(), currentUser(c).ID, id, h.now()); err != nil {
		return err
	}
	return redirect(c, paths.AdminShares)
}

// safeNext is where signing in or up may send the person back to: a share
// link's page only (the one place a visitor is asked to sign in from),
// never another site.
func safeNext(next string) string {
	token, ok := strings.CutPrefix(next, "/s/")
	if !ok || !shareToken.MatchString(token) {
		return ""
	}
	return next
}

// shareAPIUser lets a script open a "users" share link with its API key:
// the key's user is the viewer, as on the rest of the API. Without a key
// the session's user, if any, is.
func (h *Handlers) shareAPIUser(c *fiber.Ctx) error {
	if c.Get("x-api-key") == "" {
		return c.Next()
	}
	return h.apiAuth(c)
}

// isSharePath says whether a request is for a share link's page or JSON.
func isSharePath(p string) bool {
	return strings.HasPrefix(p, "/s/") || strings.HasPrefix(p, "/api/s/")
}
