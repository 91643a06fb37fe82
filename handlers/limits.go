package handlers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
)

// maxQueryLength bounds a request's query string, in bytes as sent (percent
// escapes count as three). The longest legitimate one is a search: 500
// characters of any script (6,000 bytes escaped in 4-byte characters, as
// emoji are), a cursor (about 60 bytes) and the filters (under 100 bytes).
// The admin list's 200-character title filter takes at most 2,400. 8 KiB
// holds them with room to spare, well inside the 16 KiB read buffer that
// holds the whole header.
const maxQueryLength = 8 << 10

// errQueryTooLong answers a query string over maxQueryLength.
var errQueryTooLong = fiber.NewError(fiber.StatusBadRequest,
	fmt.Sprintf("The address is too long: its query string can have at most %d bytes.", maxQueryLength))

// errHeadTooLarge answers a request line and headers that did not fit the
// read buffer.
var errHeadTooLarge = fiber.NewError(fiber.StatusBadRequest,
	fmt.Sprintf("The address or headers are too long: together they can have at most %d bytes.", readBufferSize))

// limitQuery refuses an over-long query string before anything reads it,
// with the error page or the API's error shape (errorHandler decides).
func (h *Handlers) limitQuery(c *fiber.Ctx) error {
	if len(c.Request().URI().QueryString()) > maxQueryLength {
		return errQueryTooLong
	}
	return c.Next()
}

// The server streams request bodies (fiber's StreamRequestBody), so that one
// route, an import (importRoute), can read a file of up to 256 MiB as it
// arrives instead of holding it whole. Every other request is held to
// bodyLimit here, before anything reads its body: one over it (by its
// Content-Length, or by what a chunked body turns out to hold) is refused
// with 413, and one within it is read whole, so that handlers see c.Body()
// as before and the connection is ready for the next request.
var errBodyTooLarge = fiber.NewError(fiber.StatusRequestEntityTooLarge,
	fmt.Sprintf("The request body is too large: at most %d MiB.", bodyLimit>>20))

// limitBody holds a request's body to bodyLimit and reads it, except an
// import's, whose handler reads it as a stream (importUpload).
func (h *Handlers) limitBody(c *fiber.Ctx) error {
	if importRoute(c) || fileRoute(c) {
		err := c.Next()
		if c.Locals(localBodyRead) == nil {
			lingerOnClose(c) // refused, or answered, before its end: the client may still be sending
		}
		return err
	}
	req := c.Request()
	stream := req.BodyStream()
	n := req.Header.ContentLength()
	if stream == nil || n == 0 {
		return c.Next()
	}
	limit := bodyLimit
	if composerUpload(c) {
		limit = int(h.composerBodyLimit())
	}
	if n > limit {
		return errBodyTooLarge
	}
	var body bytes.Buffer
	if n > 0 {
		body.Grow(n + bytes.MinRead) // room for the read that finds the end, too: no copy
	}
	if _, err := body.ReadFrom(io.LimitReader(stream, int64(limit)+1)); err != nil {
		c.Response().SetConnectionClose() // the rest of the body is unread
		return fiber.NewError(fiber.StatusBadRequest, "The request body could not be read to its end.")
	}
	if body.Len() > limit {
		return errBodyTooLarge
	}
	req.SetBodyRaw(body.Bytes()) // also ends the stream
	return c.Next()
}

// localBodyRead marks an import whose body was read to its end.
const localBodyRead = "body_read"

// headTooLarge turns fasthttp's refusal of a request whose request line and
// headers do not fit the read buffer into the client's 400. fasthttp refuses
// it before fiber sees a path, and fiber calls that 431 (Request Header Fields
// Too Large). An over-long address is the usual cause, and it cannot be told
// from over-large headers there: fasthttp reports the request URI as "/"
// when it parsed none, as for a request for "/", and fiber hands on neither
// the parse error nor the bytes read. So both are a 400 that names both, as
// nginx answers "Request Header Or Cookie Too Large" with a 400.
func headTooLarge(err error) error {
	var fe *fiber.Error
	if errors.As(err, &fe) && fe.Code == fiber.StatusRequestHeaderFieldsTooLarge {
		return errHeadTooLarge
	}
	return err
}

// A refused request's connection lingers before it closes. fasthttp answers
// a body over the limit (413), or a request line and headers over the read
// buffer (errHeadTooLarge), before reading the rest of the request, and then
// closes the connection. Closing a socket with input still unread makes the
// kernel reset the connection, and the reset can overtake the answer: a
// client that sends its whole body before it reads (Python's urllib, many
// SDKs) then sees "connection reset by peer" instead of the 413. So such a
// connection is closed the way nginx's lingering close does it: the server
// shuts its sending side once the answer is out, so the client reads the
// answer and then the end of it; reads and discards what the client still
// sends, up to lingerMax bytes; and closes when the client stops sending.
// A client sending more than lingerMax is cut off there, reset and all.
const (
	lingerMax  = 8 << 20          // the most discarded from one client
	lingerIdle = 5 * time.Second  // the longest wait for the client's next bytes
	lingerTime = 30 * time.Second // the longest linger in all
)

// Listener wraps ln so that a connection the server refused a request on
// lingers before it closes (see lingerMax). Serve the app on it:
// app.Listener(handlers.Listener(ln)).
func Listener(ln net.Listener) net.Listener { return lingerListener{ln} }

type lingerListener struct{ net.Listener }

// Accept implements net.Listener.
func (l lingerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &lingerConn{Conn: c}, nil
}

// lingerConn closes at once, as any connection, unless the request it
// carried was refused unread (lingerOnClose); then its Close lingers.
// Only refused connections linger: fasthttp also closes an idle connection
// while another goroutine waits to read it, which a lingering close would
// leave waiting.
type lingerConn struct {
	net.Conn
	linger atomic.Bool
	once   sync.Once
}

// lingerOnClose marks the connection of a request refused before it was
// read to linger when the server closes it. A connection that did not come
// from Listener (app.Test's, a pipe's) closes as before.
func lingerOnClose(c *fiber.Ctx) {
	c.Response().SetConnectionClose() // what follows on it is the refused body, not a request
	if lc, ok := c.Context().Conn().(*lingerConn); ok {
		lc.linger.Store(true)
	}
}

// Close implements net.Conn: at once, or by shutting the sending side and
// draining in the background (the server's worker goes on).
func (c *lingerConn) Close() error {
	if !c.linger.Load() {
		return c.Conn.Close()
	}
	var err error
	c.once.Do(func() {
		half, ok := c.Conn.(interface{ CloseWrite() error })
		if !ok {
			err = c.Conn.Close()
			return
		}
		if err = half.CloseWrite(); err != nil {
			_ = c.Conn.Close()
			return
		}
		go c.drain()
	})
	return err
}

// drain discards what the client still sends, within the linger limits,
// and closes the connection.
func (c *lingerConn) drain() {
	defer c.Conn.Close()
	buf := make([]byte, 32<<10)
	end := time.Now().Add(lingerTime)
	for read := 0; read < lingerMax; {
		deadline := time.Now().Add(lingerIdle)
		if deadline.After(end) {
			deadline = end
		}
		if err := c.Conn.SetReadDeadline(deadline); err != nil {
			return
		}
		n, err := c.Conn.Read(buf[:min(len(buf), lingerMax-read)])
		read += n
		if err != nil {
			return // the client is done (EOF), gone, or too slow
		}
	}
}
