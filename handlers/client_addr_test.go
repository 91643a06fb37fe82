package handlers_test

import (
	"net/http"
	"net/netip"
	"testing"

	"github.com/fasthttp/websocket"

	"palaver/handlers"
)

// TestForwardedHeadersOnlyFromTrustedProxies: X-Forwarded-Host and -Proto
// from any client cannot make another site's origin pass the websocket's
// same-origin check; from a trusted proxy they say where the browser is.
func TestForwardedHeadersOnlyFromTrustedProxies(t *testing.T) {
	dial := func(a *testApp, c *client) (int, error) {
		addr := a.listen()
		h := http.Header{}
		h.Set("Origin", "https://chat.example")
		h.Set("X-Forwarded-Host", "chat.example")
		h.Set("X-Forwarded-Proto", "https")
		h.Set("Cookie", c.cookieHeader())
		conn, res, err := (&websocket.Dialer{HandshakeTimeout: liveWait}).Dial("ws://"+addr+"/live", h)
		if conn != nil {
			conn.Close()
		}
		if res == nil {
			return 0, err
		}
		return res.StatusCode, err
	}

	a := newTestApp(t)
	if status, err := dial(a, a.register("ann")); status != http.StatusForbidden {
		t.Fatalf("a forged X-Forwarded-Host from a client: status %d (%v), want 403", status, err)
	}

	proxied := newTestApp(t, func(d *handlers.Deps) {
		d.Config.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	})
	if status, err := dial(proxied, proxied.register("ann")); status != http.StatusSwitchingProtocols || err != nil {
		t.Fatalf("the same headers from a trusted proxy: status %d (%v), want 101", status, err)
	}
}
