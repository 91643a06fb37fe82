package handlers

import (
	"bytes"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"palaver/views"
)

// isFragment says whether to answer with a fragment rather than a full page:
// only for an htmx request that is neither boosted nor a history restore.
func isFragment(c *fiber.Ctx) bool {
	return c.Get("HX-Request") == "true" &&
		c.Get("HX-Boosted") != "true" &&
		c.Get("HX-History-Restore-Request") != "true"
}

// followsLive says whether the request's tab follows a turn's reply live
// (/live) rather than waiting for it: an htmx request for a fragment,
// never the JSON API.
func followsLive(c *fiber.Ctx) bool {
	return isFragment(c) && !isAPI(c)
}

// render writes one component as HTML. It renders to a buffer first so that
// a failure halfway through becomes an error page, not a truncated one.
func render(c *fiber.Ctx, status int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.UserContext(), &buf); err != nil {
		return err
	}
	c.Vary("HX-Request")
	c.Type("html", "utf-8")
	return c.Status(status).Send(buf.Bytes())
}

// done ends a request that changed something, the one way every such
// request ends. Without JavaScript the browser goes to url (303). For htmx,
// fragment answers in place; without one (nil), or for a request that
// wants no fragment (boosted), the tab goes to url (HX-Redirect), which htmx
// follows as a navigation rather than swapping a page into a fragment.
func done(c *fiber.Ctx, url string, fragment func() error) error {
	c.Vary("HX-Request")
	switch {
	case inPlace(c, fragment):
		return fragment()
	case c.Get("HX-Request") == "true":
		c.Set("HX-Redirect", url)
		return c.SendStatus(fiber.StatusNoContent)
	default:
		return c.Redirect(url, fiber.StatusSeeOther)
	}
}

// inPlace says whether done answers with the fragment.
func inPlace(c *fiber.Ctx, fragment func() error) bool { return fragment != nil && isFragment(c) }

// redirect sends the browser to url: done without a fragment.
func redirect(c *fiber.Ctx, url string) error { return done(c, url, nil) }

// fragmentOrFull answers a read: the fragment for htmx (isFragment), the
// full screen otherwise.
func fragmentOrFull(c *fiber.Ctx, fragment, full func() error) error {
	c.Vary("HX-Request")
	if isFragment(c) {
		return fragment()
	}
	return full()
}

// removed is the htmx answer that leaves the target to its hx-swap
// ("delete"): an empty 200.
func removed(c *fiber.Ctx) func() error {
	return func() error { return c.Status(fiber.StatusOK).Send(nil) }
}

// unchanged is the htmx answer that swaps nothing: the tab follows what
// happens another way (/live).
func unchanged(c *fiber.Ctx) func() error {
	return func() error {
		c.Set("HX-Reswap", "none")
		return c.SendStatus(fiber.StatusNoContent)
	}
}

// base is the chrome every full page needs.
func (h *Handlers) base(c *fiber.Ctx, title, nav string) views.Base {
	b := views.Base{Title: title, CSRF: h.csrfToken(c), Assets: h.assets, Nav: nav}
	if u := currentUser(c); u != nil {
		b.User = &views.User{Name: u.Username, IsAdmin: u.IsAdmin}
	}
	return b
}
