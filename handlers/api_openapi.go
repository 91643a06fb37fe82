package handlers

import (
	_ "embed"

	"github.com/gofiber/fiber/v2"
)

// openAPIDocument is the JSON API's reference: an OpenAPI 3.1 document kept
// beside the handlers it describes. api_openapi_test.go fails when a route
// of the API is missing from it or it names one the API does not have.
//
//go:embed openapi.json
var openAPIDocument string

// apiOpenAPI serves the OpenAPI document. It is public: it describes the
// routes, not anyone's data.
func (h *Handlers) apiOpenAPI(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.SendString(openAPIDocument)
}
