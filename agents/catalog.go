package agents

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"palaver/models"
)

// Catalog is the models people may pick, read from the database (so every
// process on PostgreSQL sees an administrator's change) through a cache of
// a few seconds, and the providers that run them.
type Catalog struct {
	store    *models.Store
	box      *SecretBox
	fallback Provider      // the builtin connection's provider
	TTL      time.Duration // how long a read is trusted; 0 means 2s

	mu    sync.Mutex
	read  time.Time
	conns map[int64]models.LLMConnection
	list  []models.LLMModel
}

// NewCatalog makes a catalog; fallback runs the builtin connection's model.
func NewCatalog(store *models.Store, box *SecretBox, fallback Provider) *Catalog {
	return &Catalog{store: store, box: box, fallback: fallback}
}

// Choice is a model a person may pick (GET /api/models).
type Choice struct {
	ID         int64  `json:"id"`
	Name       string `json:"name"`
	Connection string `json:"connection"`
	Default    bool   `json:"default"`
	Favourite  bool   `json:"favourite"` // the person starred it (GET /api/models)
}

// Forget drops the cache: this process changed the catalog.
func (c *Catalog) Forget() {
	c.mu.Lock()
	c.read = time.Time{}
	c.mu.Unlock()
}

func (c *Catalog) load(ctx context.Context) (map[int64]models.LLMConnection, []models.LLMModel, error) {
	ttl := c.TTL
	if ttl <= 0 {
		ttl = 2 * time.Second
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.read) < ttl && c.conns != nil {
		return c.conns, c.list, nil
	}
	cs, err := c.store.Connections(ctx)
	if err != nil {
		return nil, nil, err
	}
	ms, err := c.store.LLMModels(ctx)
	if err != nil {
		return nil, nil, err
	}
	c.conns = map[int64]models.LLMConnection{}
	for _, x := range cs {
		c.conns[x.ID] = x
	}
	c.list, c.read = ms, time.Now()
	return c.conns, c.list, nil
}

// Choices lists the enabled models, by connection.
func (c *Catalog) Choices(ctx context.Context) ([]Choice, error) {
	conns, ms, err := c.load(ctx)
	if err != nil {
		return nil, err
	}
	out := []Choice{}
	for _, m := range ms {
		if m.Enabled {
			out = append(out, Choice{ID: m.ID, Name: m.Name, Connection: conns[m.ConnectionID].Name, Default: m.IsDefault})
		}
	}
	return out, nil
}

// Check says whether id (0: the default) is a model a person may pick; if
// not, an *InputError names the choices.
func (c *Catalog) Check(ctx context.Context, id int64) error {
	_, _, err := c.pick(ctx, id)
	return err
}

func (c *Catalog) pick(ctx context.Context, id int64) (*models.LLMModel, models.LLMConnection, error) {
	conns, ms, err := c.load(ctx)
	if err != nil {
		return nil, models.LLMConnection{}, err
	}
	var first *models.LLMModel
	for i := range ms {
		m := &ms[i]
		if !m.Enabled {
			continue
		}
		if first == nil {
			first = m
		}
		if m.ID == id || id == 0 && m.IsDefault {
			return m, conns[m.ConnectionID], nil
		}
	}
	if id == 0 {
		if first == nil {
			return nil, models.LLMConnection{}, nil // no models set up: the service's own provider
		}
		return first, conns[first.ConnectionID], nil
	}
	var names []string
	for _, m := range ms {
		if m.Enabled {
			names = append(names, strconv.FormatInt(m.ID, 10)+" ("+m.Name+")")
		}
	}
	return nil, models.LLMConnection{}, &InputError{Msg: fmt.Sprintf("Unknown or disabled model %d; valid ones are: %s", id, strings.Join(names, ", "))}
}

// Resolve finds the provider of a model (0: the default); nil, nil: no
// model is set up, the service's own provider answers.
func (c *Catalog) Resolve(ctx context.Context, id int64) (Provider, *models.LLMModel, error) {
	m, conn, err := c.pick(ctx, id)
	if err != nil || m == nil {
		return nil, nil, err
	}
	key, err := c.box.Open(conn.APIKeyEnc)
	if err != nil {
		return nil, nil, &FailureError{Reason: fmt.Sprintf("The assistant could not answer: the connection %q has a key that cannot be read.", conn.Name), Err: err}
	}
	switch conn.Kind {
	case models.KindOpenAI:
		return &OpenAI{BaseURL: conn.BaseURL, APIKey: key, Model: m.Model}, m, nil
	case models.KindAnthropic:
		return &Anthropic{BaseURL: conn.BaseURL, APIKey: key, Model: m.Model}, m, nil
	}
	return c.fallback, m, nil
}

// SealKey encrypts an API key for a new connection.
func (c *Catalog) SealKey(key string) (string, error) { return c.box.Seal(key) }

// ListStored asks a stored connection's server for its models with the
// connection's own key (the administrators' "Test connection"). The
// builtin connection offers its one model without asking anyone.
func (c *Catalog) ListStored(ctx context.Context, conn models.LLMConnection) ([]string, error) {
	if conn.Kind == models.KindBuiltin {
		return []string{"builtin"}, nil
	}
	key, err := c.box.Open(conn.APIKeyEnc)
	if err != nil {
		return nil, &InputError{Msg: fmt.Sprintf("The connection %q has a key that cannot be read; enter it again.", conn.Name)}
	}
	return ListModels(ctx, conn.Kind, conn.BaseURL, key)
}

// Prefer is the model a turn without a picked model answers with: the
// first of the preferences still enabled (0: the administrators' default).
func (c *Catalog) Prefer(ctx context.Context, p models.ModelPreferences) int64 {
	return p.First(func(id int64) bool { m, _, err := c.pick(ctx, id); return err == nil && m != nil })
}
