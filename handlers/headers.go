package handlers

import (
	"strings"

	"github.com/gofiber/fiber/v2"
)

// contentSecurityPolicy lets a page load only what Palaver itself serves:
// its own scripts, stylesheet, images and connections (fetch and the /live
// websocket; 'self' covers the same-origin ws: and wss: URLs in current
// browsers). No inline script or style is allowed, so the pages carry none,
// and the layout's htmx-config keeps htmx from making any: its indicator
// style is off (the rules live in app.css), it evaluates no code, and it
// does not settle the style attribute (copying one that a script set through
// element.style is an inline style the policy refuses). Nothing may frame a
// page. It is the same string on every
// response: the JSON and static answers do not need it, but sending it there
// costs nothing and leaves no response type to forget.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; " +
	"img-src 'self'; connect-src 'self'; font-src 'self'; object-src 'none'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// policyWithForms is the policy with form-action widened to the origins
// (single sign-on's providers: signing out and linking an identity answer
// a form with a redirect to one).
func policyWithForms(origins []string) string {
	if len(origins) == 0 {
		return contentSecurityPolicy
	}
	return strings.Replace(contentSecurityPolicy, "form-action 'self'", "form-action 'self' "+strings.Join(origins, " "), 1)
}

// securityHeaders sets the headers every response carries. It runs first, so
// that a response from any later handler or middleware has them; the error
// handler sets them again for the answers fasthttp makes before any handler
// runs (an over-size body, an over-long request line).
func (h *Handlers) securityHeaders(c *fiber.Ctx) error {
	h.setSecurityHeaders(c)
	return c.Next()
}

// setSecurityHeaders writes the security headers of API.md's "Limits and
// headers" onto the response.
func (hs *Handlers) setSecurityHeaders(c *fiber.Ctx) {
	h := &c.Response().Header
	h.Set(fiber.HeaderContentSecurityPolicy, hs.csp)
	h.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	h.Set(fiber.HeaderReferrerPolicy, "same-origin")
	if isSharePath(c.Path()) {
		// A share link's token must not leak in a Referer, its 404 included
		// (share_page.go); nor may search engines keep the page.
		h.Set(fiber.HeaderReferrerPolicy, "no-referrer")
		h.Set("X-Robots-Tag", "noindex, nofollow")
	}
	h.Set(fiber.HeaderXFrameOptions, "DENY")
}
