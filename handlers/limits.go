package handlers

import (
	"errors"
	"fmt"

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
