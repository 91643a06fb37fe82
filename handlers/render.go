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

// page renders the full page, or only the fragment for htmx.
func page(c *fiber.Ctx, full, fragment templ.Component) error {
	if isFragment(c) {
		return render(c, fiber.StatusOK, fragment)
	}
	return render(c, fiber.StatusOK, full)
}

// redirect sends the browser to url: 303 for a plain request, HX-Redirect
// for htmx (which would otherwise swap the target page into a fragment).
func redirect(c *fiber.Ctx, url string) error {
	c.Vary("HX-Request")
	if c.Get("HX-Request") == "true" {
		c.Set("HX-Redirect", url)
		return c.SendStatus(fiber.StatusNoContent)
	}
	return c.Redirect(url, fiber.StatusSeeOther)
}

// base is the chrome every full page needs.
func (h *Handlers) base(c *fiber.Ctx, title, nav string) views.Base {
	b := views.Base{Title: title, CSRF: h.csrfToken(c), Assets: h.assets, Nav: nav}
	if u := currentUser(c); u != nil {
		b.User = &views.User{Name: u.Username, IsAdmin: u.IsAdmin}
	}
	return b
}
