package handlers

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
	"palaver/paths"
)

// Share links (issue 28): the JSON API. The owner's routes are scoped to
// the owner like every other; the viewer's (GET /api/s/{token}, continue)
// know the share by its token only, and answer 404 for a link that is
// unknown, revoked, expired or not for this viewer alike.

// newShareToken is a share link's token: 192 random bits, URL-safe.
func newShareToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// shareExpiryDays are the expiries a share may have (besides never).
var shareExpiryDays = map[int64]bool{1: true, 7: true, 30: true}

// shareExpiry turns expires_in_days (nil or 0: never) into a moment.
func shareExpiry(days *int64, now time.Time) (*time.Time, error) {
	if days == nil || *days == 0 {
		return nil, nil
	}
	if !shareExpiryDays[*days] {
		return nil, fiber.NewError(fiber.StatusBadRequest, `"expires_in_days" must be 1, 7 or 30 (or absent: never)`)
	}
	t := now.Add(time.Duration(*days) * 24 * time.Hour)
	return &t, nil
}

// apiShare is a share as its owner sees it.
type apiShare struct {
	ID         int64      `json:"id"`
	Token      string     `json:"token"`
	URL        string     `json:"url"`
	ExchangeID int64      `json:"exchange_id"`
	AtSeq      int64      `json:"at_seq"`
	Visibility string     `json:"visibility"`
	ShowOwner  bool       `json:"show_owner"`
	Title      string     `json:"title"`
	ExpiresAt  *time.Time `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	Views      int64      `json:"views"`
}

func newAPIShare(sh *models.Share) apiShare {
	return apiShare{ID: sh.ID, Token: sh.Token, URL: paths.Share(sh.Token), ExchangeID: sh.ExchangeID, AtSeq: sh.AtSeq,
		Visibility: sh.Visibility, ShowOwner: sh.ShowOwner, Title: sh.Title, ExpiresAt: sh.ExpiresAt,
		RevokedAt: sh.RevokedAt, CreatedAt: sh.CreatedAt, Views: sh.Views}
}

// apiShareNew is POST /api/chat/exchange/{id}/shares's body.
type apiShareNew struct {
	Visibility    string `json:"visibility"`
	AtSeq         *int64 `json:"at_seq"`
	ExpiresInDays *int64 `json:"expires_in_days"`
	ShowOwner     bool   `json:"show_owner"`
}

// createShare makes a share of the user's exchange from the form or body.
func (h *Handlers) createShare(c *fiber.Ctx, exchangeID int64, p apiShareNew) (*models.Share, error) {
	if p.Visibility != models.ShareLink && p.Visibility != models.ShareUsers {
		return nil, fiber.NewError(fiber.StatusBadRequest, `"visibility" must be "link" or "users"`)
	}
	now := h.now()
	expires, err := shareExpiry(p.ExpiresInDays, now)
	if err != nil {
		return nil, err
	}
	token, err := newShareToken()
	if err != nil {
		return nil, err
	}
	sh, err := h.store.CreateShare(c.UserContext(), models.ShareNew{UserID: currentUser(c).ID, ExchangeID: exchangeID,
		AtSeq: p.AtSeq, Visibility: p.Visibility, ShowOwner: p.ShowOwner, ExpiresAt: expires, Token: token, At: now})
	if errors.Is(err, models.ErrNothingToShare) {
		return nil, fiber.NewError(fiber.StatusBadRequest, "This conversation has nothing to share yet")
	}
	return sh, err
}

// apiShareCreate makes a share link of one of the user's exchanges.
func (h *Handlers) apiShareCreate(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var p apiShareNew
	if err := apiDecode(c, &p); err != nil {
		return err
	}
	sh, err := h.createShare(c, id, p)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(newAPIShare(sh))
}

// apiShares lists the user's share links, newest first.
func (h *Handlers) apiShares(c *fiber.Ctx) error {
	shares, err := h.store.Shares(c.UserContext(), currentUser(c).ID)
	if err != nil {
		return err
	}
	out := make([]apiShare, len(shares))
	for i := range shares {
		out[i] = newAPIShare(&shares[i])
	}
	return c.JSON(out)
}

// apiShareUpdate re-snapshots a share ({update: true}) or sets its expiry
// ({expires_in_days}: 0 or null for never).
func (h *Handlers) apiShareUpdate(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var p struct {
		Update        bool   `json:"update"`
		ExpiresInDays *int64 `json:"expires_in_days"`
	}
	if err := apiDecode(c, &p); err != nil {
		return err
	}
	now := h.now()
	u := models.ShareUpdate{Resnapshot: p.Update, At: now}
	if p.ExpiresInDays != nil {
		if u.ExpiresAt, err = shareExpiry(p.ExpiresInDays, now); err != nil {
			return err
		}
		u.SetExpiry = true
	}
	if !u.Resnapshot && !u.SetExpiry {
		return fiber.NewError(fiber.StatusBadRequest, `Send {"update": true} or {"expires_in_days": 1 | 7 | 30 | 0}`)
	}
	sh, err := h.store.UpdateShare(c.UserContext(), currentUser(c).ID, id, u)
	if err != nil {
		return err
	}
	return c.JSON(newAPIShare(sh))
}

// apiShareDelete revokes one of the user's share links.
func (h *Handlers) apiShareDelete(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := h.store.RevokeShare(c.UserContext(), currentUser(c).ID, id, h.now()); err != nil {
		return err
	}
	return c.JSON(apiNotice{Message: "Share link revoked"})
}

// apiSharedMessage is one entry of a share: exactly these fields.
type apiSharedMessage struct {
	Seq         int64           `json:"seq"`
	Role        string          `json:"role"`
	Content     string          `json:"content"`
	Timestamp   time.Time       `json:"timestamp"`
	Attachments []apiSharedFile `json:"attachments,omitempty"`
}

// apiSharedFile is a file a shared entry holds, with its share-scoped url
// (the one place a viewer can fetch it).
type apiSharedFile struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	Width       *int64 `json:"width,omitempty"`
	Height      *int64 `json:"height,omitempty"`
	URL         string `json:"url"`
}

// apiSharedSnapshot is GET /api/s/{token}: the snapshot for scripts.
type apiSharedSnapshot struct {
	Title    string             `json:"title"`
	AtSeq    int64              `json:"at_seq"`
	Messages []apiSharedMessage `json:"messages"`
}

// apiShareOpen answers a share link's snapshot as JSON, under the same
// rules as its page.
func (h *Handlers) apiShareOpen(c *fiber.Ctx) error {
	sh, _, err := h.openShare(c)
	if err != nil {
		return err
	}
	msgs, err := h.store.SharedMessages(c.UserContext(), sh, sh.AtSeq)
	if err != nil {
		return err
	}
	out := apiSharedSnapshot{Title: sh.Title, AtSeq: sh.AtSeq, Messages: make([]apiSharedMessage, len(msgs))}
	for i, m := range msgs {
		out.Messages[i] = apiSharedMessage{Seq: m.Seq, Role: m.Role, Content: m.Content, Timestamp: m.CreatedAt}
		for _, f := range m.Files {
			out.Messages[i].Attachments = append(out.Messages[i].Attachments, apiSharedFile{ID: f.ID, Name: f.Name,
				ContentType: f.ContentType, Size: f.Size, Width: f.Width, Height: f.Height, URL: paths.ShareFile(sh.Token, f.ID)})
		}
	}
	return c.JSON(out)
}

// apiShareContinue copies a share's snapshot (as of ?at= or the body's
// at_seq, an older viewer's seq; default the share's) into a new exchange
// of the signed-in viewer.
func (h *Handlers) apiShareContinue(c *fiber.Ctx) error {
	var p struct {
		AtSeq *int64 `json:"at_seq"`
	}
	if len(c.Body()) > 0 {
		if err := apiDecode(c, &p); err != nil {
			return err
		}
	}
	ex, err := h.continueShare(c, p.AtSeq)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"exchange_id": ex.ID})
}

// continueShare copies the share the path names, as of at (nil: the
// share's own seq), into the signed-in viewer's account.
func (h *Handlers) continueShare(c *fiber.Ctx, at *int64) (*models.Exchange, error) {
	sh, _, err := h.openShare(c)
	if err != nil {
		return nil, err
	}
	seq := sh.AtSeq
	if at != nil && *at >= 0 {
		seq = *at
	}
	ex, err := h.store.ContinueShare(c.UserContext(), currentUser(c).ID, sh, seq, h.now())
	if err != nil {
		return nil, err
	}
	h.publishHeader(ex)
	return ex, nil
}
