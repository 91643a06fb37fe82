package handlers

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
)

// maxKeyName bounds an API key's name, in characters.
const maxKeyName = 100

// NewAPIKey makes a new random API key: "pal_" and 256 random bits. Only its
// hash (HashAPIKey) is stored; the key itself is shown once.
func NewAPIKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "pal_" + base64.RawURLEncoding.EncodeToString(b), nil
}

// apiKeyItem is a key as GET /api/keys lists it: never the key or its hash.
type apiKeyItem struct {
	ID         int64      `json:"id"`
	Name       string     `json:"name"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
}

// apiKeyCreated is POST /api/keys's answer: the only time the key is shown.
type apiKeyCreated struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Key  string `json:"key"`
}

// apiKeys lists the caller's own API keys.
func (h *Handlers) apiKeys(c *fiber.Ctx) error {
	keys, err := h.store.APIKeys(c.UserContext(), currentUser(c).ID)
	if err != nil {
		return err
	}
	out := make([]apiKeyItem, len(keys))
	for i, k := range keys {
		out[i] = apiKeyItem{ID: k.ID, Name: k.Name, CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt}
	}
	return c.JSON(out)
}

// apiKeyCreate makes a new key for the caller, named by the body's name
// (1–100 characters once trimmed), and shows it once.
func (h *Handlers) apiKeyCreate(c *fiber.Ctx) error {
	var p struct {
		Name string `json:"name"`
	}
	if err := apiDecode(c, &p); err != nil {
		return err
	}
	name, ok := keyName(p.Name)
	if !ok {
		return fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("Give the key a name of 1 to %d characters", maxKeyName))
	}
	k, key, err := h.createKey(c, name)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(apiKeyCreated{ID: k.ID, Name: k.Name, Key: key})
}

// keyName is a key's name as given, trimmed, and whether it may be one (1
// to maxKeyName characters).
func keyName(raw string) (string, bool) {
	name := strings.TrimSpace(raw)
	n := utf8.RuneCountInString(name)
	return name, n > 0 && n <= maxKeyName
}

// createKey makes a new key named name for the signed-in user (the API and
// the account page): only its hash is stored; the key is returned once.
func (h *Handlers) createKey(c *fiber.Ctx, name string) (*models.APIKey, string, error) {
	key, err := NewAPIKey()
	if err != nil {
		return nil, "", err
	}
	k, err := h.store.CreateAPIKey(c.UserContext(), currentUser(c).ID, strings.Clone(name), HashAPIKey(key))
	return k, key, err
}

// apiKeyDelete revokes one of the caller's keys; another user's key answers
// 404 exactly like a missing one.
func (h *Handlers) apiKeyDelete(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := h.store.DeleteAPIKey(c.UserContext(), currentUser(c).ID, id); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"message": "Revoked"})
}
