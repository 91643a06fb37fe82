package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"palaver/agents"
	"palaver/models"
)

// llmConnection is what the --llm-* flags say.
type llmConnection struct{ url, kind, key, model string }

// modelCatalog opens the key box (--secret-key, or a key file beside the
// SQLite database, made on first start), records the flags' connection (or
// the offline agent's) as the read-only one, and returns the catalog.
func modelCatalog(ctx context.Context, store *models.Store, db, secret string, fallback agents.Provider, flags llmConnection, log *slog.Logger) (*agents.Catalog, error) {
	switch {
	case secret != "":
	case strings.Contains(db, "://"):
		// PostgreSQL has no file beside it that every process shares: a
		// key kept in the database still keeps keys out of exports, but
		// not out of a copy of the database. Say so.
		raw, err := store.ServerSecret(ctx, "connection-keys")
		if err != nil {
			return nil, err
		}
		secret = fmt.Sprintf("%x", raw)
		log.Warn("model connection keys are encrypted with a key kept in the database; set --secret-key to keep it out")
	default:
		path := filepath.Join(filepath.Dir(db), "palaver.secret")
		var err error
		if secret, err = agents.SecretKeyFile(path); err != nil {
			return nil, err
		}
	}
	box, err := agents.NewSecretBox(secret)
	if err != nil {
		return nil, fmt.Errorf("%w: --secret-key: %v", errUsage, err)
	}
	conn, model := models.OfflineConnection()
	if flags.url != "" {
		sealed, err := box.Seal(flags.key)
		if err != nil {
			return nil, err
		}
		conn = models.LLMConnection{Name: "--llm flags", Kind: flags.kind, BaseURL: flags.url, APIKeyEnc: sealed}
		model = flags.model
	}
	if err := store.EnsureFlagConnection(ctx, conn, model); err != nil {
		return nil, err
	}
	return agents.NewCatalog(store, box, fallback), nil
}
