package handlers

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/gofiber/fiber/v2"

	"palaver/paths"
	"palaver/views"
)

// sessAdminFlash holds the message an admin action leaves for the next
// screen.
const sessAdminFlash = "admin_flash"

// requireAdmin guards every /admin route: visitors who are not signed in go
// to the login page; anyone else who is not an administrator gets the same
// 404 as a page that does not exist.
func (h *Handlers) requireAdmin(c *fiber.Ctx) error {
	u := currentUser(c)
	if u == nil {
		return redirect(c, paths.Login)
	}
	if !u.IsAdmin {
		return fiber.ErrNotFound
	}
	return c.Next()
}

// adminChrome is the frame of an admin page, with the message the last
// action left (taken from the session: it shows once).
func (h *Handlers) adminChrome(c *fiber.Ctx, title, section string) views.AdminChrome {
	ch := views.AdminChrome{Base: h.base(c, title, "admin"), Section: section}
	msg := h.sessions.PopString(c.UserContext(), sessAdminFlash)
	if rest, ok := strings.CutPrefix(msg, "!"); ok {
		ch.Flash, ch.FlashError = rest, true
	} else {
		ch.Flash = msg
	}
	return ch
}

// adminFlash leaves a message for the next admin page ("!" marks a refusal).
func (h *Handlers) adminFlash(c *fiber.Ctx, msg string) {
	h.sessions.Put(c.UserContext(), sessAdminFlash, msg)
}

// adminDone ends an admin action as done does, with msg for the admin page
// the browser goes to; a fragment shows the outcome itself, and leaves none
// (it would wait for whichever admin page comes next).
func (h *Handlers) adminDone(c *fiber.Ctx, back, msg string, fragment func() error) error {
	if !inPlace(c, fragment) {
		h.adminFlash(c, msg)
	}
	return done(c, back, fragment)
}

// adminIDParam reads the :id of an admin route; anything but a positive
// integer names nothing: 404.
func adminIDParam(c *fiber.Ctx) (int64, error) {
	return pathID(c, "id")
}

// adminBackPath matches the admin pages an action may send the browser back to.
var adminBackPath = regexp.MustCompile(`^/admin(/(users|housekeeping|exchanges|audit|models|usage))?/?$`)

// adminBackTo is where a plain admin form goes when done: the admin page it
// was posted from (the Referer, if it is one, with its query), else fallback.
func adminBackTo(c *fiber.Ctx, fallback string) string {
	ref, err := url.Parse(c.Get(fiber.HeaderReferer))
	if err != nil || !adminBackPath.MatchString(ref.Path) || (ref.Host != "" && ref.Host != c.Hostname()) {
		return fallback
	}
	if ref.RawQuery != "" {
		return ref.Path + "?" + ref.RawQuery
	}
	return ref.Path
}
