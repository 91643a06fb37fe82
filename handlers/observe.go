package handlers

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
)

// Observer hears what the HTTP surface does, for an operator's metrics
// (package metrics). Its methods must not block.
type Observer interface {
	// Request: one answered request, by its route pattern (never the raw
	// path, which would make a series per id).
	Request(route, method string, status int, took time.Duration)
	// LiveOpened and LiveClosed follow open live connections: kind is
	// "websocket" (a tab's /live) or "stream" (an event stream).
	LiveOpened(kind string)
	LiveClosed(kind string)
}

// noObserver is the Observer of an app nobody watches.
type noObserver struct{}

func (noObserver) Request(string, string, int, time.Duration) {}
func (noObserver) LiveOpened(string)                          {}
func (noObserver) LiveClosed(string)                          {}

// requestIDHeader names a request's id, on the answer (and taken from a
// trusted proxy that set it).
const requestIDHeader = "X-Request-Id"

// observe gives each request an id, on the answer and in the context of
// what it starts (the turns log their lines with it), then logs the request
// and counts it by its route pattern once it is answered.
func (h *Handlers) observe(c *fiber.Ctx) error {
	start := time.Now()
	id := c.Get(requestIDHeader)
	if !c.IsProxyTrusted() || !validRequestID(id) {
		id = newRequestID()
	} else {
		id = strings.Clone(id) // kept past the request (the turn's logger)
	}
	c.Set(requestIDHeader, id)
	c.SetUserContext(agents.WithRequestID(c.UserContext(), id))
	err := c.Next()
	status := c.Response().StatusCode()
	if err != nil {
		status, _ = classify(err) // what the error handler answers, after this
	}
	// Copies: fiber's strings alias fasthttp's buffers, which the next
	// request on this worker overwrites, and the metrics keep their labels.
	route, method, took := strings.Clone(c.Route().Path), strings.Clone(c.Method()), time.Since(start)
	h.observer.Request(route, method, status, took)
	level := slog.LevelInfo
	if route == "/healthz" || strings.HasPrefix(route, "/static/") {
		level = slog.LevelDebug // asset and probe traffic: only when asked for
	}
	h.log.Log(c.UserContext(), level, "request", "request_id", id, "method", method, "route", route,
		"status", status, "took", took)
	return err
}

// newRequestID makes a request id: 16 random hex digits.
func newRequestID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// validRequestID says whether a proxy's request id can be logged as it is:
// 1 to 64 letters, digits, '-', '_' or '.'.
func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}
