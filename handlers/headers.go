package handlers

import (
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

// securityHeaders sets the headers every response carries. It runs first, so
// that a response from any later handler or middleware has them; the error
// handler sets them again for the answers fasthttp makes before any handler
// runs (an over-size body, an over-long request line).
func securityHeaders(c *fiber.Ctx) error {
	setSecurityHeaders(c)
	return c.Next()
}

// setSecurityHeaders writes the security headers of API.md's "Limits and
// headers" onto the response.
func setSecurityHeaders(c *fiber.Ctx) {
	h := &c.Response().Header
	h.Set(fiber.HeaderContentSecurityPolicy, contentSecurityPolicy)
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
