package transfer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ChatGPTReader reads ChatGPT's conversations.json (a JSON array of
// conversations) one conversation at a time, and yields each as one or more
// exchanges: the conversation's current path, then its other branches as
// forks, each fork after the exchange it forks from.
type ChatGPTReader struct {
	dec      *json.Decoder
	o        Options
	index    int                 // conversations decoded so far
	seenIDs  map[string]struct{} // conversation ids, which the uids derive from
	conv     *conversation       // the one being turned into exchanges
	messages int64               // messages yielded so far (fork copies count)
	budget   budget              // bytes yielded so far (fork copies count)
	assets   assetSource         // the files of the export's zip; nil: none (conversations.json alone)
	files    map[string]UID      // asset ids already yielded as file items
	pending  []Item              // items built and not yet returned (files before their exchange)
	err      error               // sticky
}

// assetSource finds the file an asset id names in an export's zip and
// reads it, within a limit.
type assetSource interface {
	// find gives the entry an asset id names ("file-XXXX", "file_XXXX"),
	// and its name as stored; ok false: the zip has none.
	find(id string) (name string, ok bool)
	// read gives an entry's bytes, at most max of them (more: a
	// *LimitError).
	read(name string, max int64) ([]byte, error)
}

// NewChatGPTReader reads the start of a conversations.json with the default
// Options.
func NewChatGPTReader(r io.Reader) (*ChatGPTReader, error) { return Options{}.NewChatGPTReader(r) }

// NewChatGPTReader reads the start of a conversations.json: it must be a
// JSON array.
func (o Options) NewChatGPTReader(r io.Reader) (*ChatGPTReader, error) {
	o = o.withDefaults()
	// The decoder holds one conversation at a time: bound it, and each
	// string, as MaxLineBytes bounds a line of Palaver's export.
	bound := newBoundReader(skipBOMReader(r), o.MaxStringBytes, int64(o.MaxLineBytes), 1)
	dec := json.NewDecoder(bound)
	tok, err := dec.Token()
	if err != nil {
		return nil, decodeError(err, "conversations.json", func(err error) error {
			return invalid("conversations.json: not a JSON array (%v)", err)
		})
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, invalid("conversations.json: not a JSON array of conversations")
	}
	rd := &ChatGPTReader{dec: dec, o: o, seenIDs: map[string]struct{}{}}
	rd.budget = budget{o: &rd.o, read: func() int64 { return bound.total }}
	return rd, nil
}

// Next returns the next exchange, or io.EOF after the last. An error about
// the file is a *ConversationError naming the conversation (or an error
// matching ErrInvalid about the array itself); an error reading the input
// is returned as it came, wrapped.
func (r *ChatGPTReader) Next() (Item, error) {
	if r.err != nil {
		return Item{}, r.err
	}
	it, err := r.next()
	if err != nil {
		r.err = err
	}
	return it, err
}

func (r *ChatGPTReader) next() (Item, error) {
	for {
		if len(r.pending) > 0 {
			it := r.pending[0]
			r.pending[0] = Item{}
			r.pending = r.pending[1:]
			return it, nil
		}
		if r.conv != nil {
			e, err := r.conv.next()
			if err != nil {
				return Item{}, r.conv.fail(err)
			}
			if e != nil {
				r.messages += int64(len(e.Messages))
				if r.messages > r.o.MaxMessages {
					return Item{}, r.conv.fail(fmt.Errorf("the file makes more than %d messages (each branch copies the start it shares)", r.o.MaxMessages))
				}
				size, err := r.o.cleanExchange(e)
				if err != nil {
					return Item{}, r.conv.fail(err)
				}
				if err := r.budget.spend(size); err != nil {
					return Item{}, r.conv.fail(err)
				}
				if err := e.Validate(); err != nil { // a bug here, not in the file; say so rather than store it
					return Item{}, r.conv.fail(fmt.Errorf("converted exchange is invalid: %w", err))
				}
				if err := r.attach(e); err != nil {
					return Item{}, r.conv.fail(err)
				}
				r.pending = append(r.pending, Item{Exchange: e, Where: r.conv.where()})
				continue
			}
			r.conv = nil
		}
		if !r.dec.More() {
			return Item{}, r.end()
		}
		r.index++
		var c gptConversation
		if err := r.dec.Decode(&c); err != nil {
			return Item{}, decodeError(err, "conversation "+strconv.Itoa(r.index), func(err error) error {
				return &ConversationError{Index: r.index, Err: err}
			})
		}
		conv, err := r.newConversation(&c)
		if err != nil {
			return Item{}, err
		}
		r.conv = conv
	}
}

// hasAsset reports whether the export's zip holds the file an asset id
// names.
func (r *ChatGPTReader) hasAsset(id string) bool {
	if r.assets == nil {
		return false
	}
	_, ok := r.assets.find(id)
	return ok
}

// attach makes each message of e that names assets (an image it shows,
// a file it was given) hold the ones the zip has, as file items queued
// before e: each asset once in the file, whichever exchange names it
// first. An asset the zip lacks is left out, as ChatGPT's own viewer
// shows it missing.
func (r *ChatGPTReader) attach(e *Exchange) error {
	for _, m := range e.Messages {
		for _, a := range m.assets {
			if uid, done := r.files[a.id]; done {
				m.Attachments = appendUID(m.Attachments, uid)
				continue
			}
			entry, ok := r.assets.find(a.id)
			if !ok {
				continue
			}
			data, err := r.assets.read(entry, r.o.MaxFileBytes)
			if err != nil {
				return fmt.Errorf("file %s (%s): %w", clip(a.id), clip(entry), err)
			}
			if err := r.budget.spend(int64(len(data))); err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			f := &File{UID: NameUID(ChatGPTNamespace, "chatgpt-file:"+url.QueryEscape(a.id)), Name: assetName(a, entry),
				ContentType: "application/octet-stream", Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]),
				CreatedAt: m.Timestamp, Data: data}
			if r.files == nil {
				r.files = map[string]UID{}
			}
			r.files[a.id] = f.UID
			r.pending = append(r.pending, Item{File: f, Where: r.conv.where()})
			m.Attachments = appendUID(m.Attachments, f.UID)
		}
		m.assets = nil
	}
	return nil
}

func appendUID(uids []UID, u UID) []UID {
	for _, have := range uids {
		if have == u {
			return uids
		}
	}
	return append(uids, u)
}

// assetName is the name a ChatGPT file is imported under: the one its
// message's metadata gives, else the zip entry's, without the id ChatGPT
// puts before it ("file-XXXX-photo.png" → "photo.png").
func assetName(a asset, entry string) string {
	if n := strings.TrimSpace(path.Base(strings.ReplaceAll(a.name, "\\", "/"))); a.name != "" && n != "." && n != "/" {
		return n
	}
	base := path.Base(entry)
	if rest, ok := strings.CutPrefix(base, a.id+"-"); ok && rest != "" {
		return rest
	}
	return base
}

// end reads the closing bracket and makes sure nothing follows it.
func (r *ChatGPTReader) end() error {
	if _, err := r.dec.Token(); err != nil {
		return decodeError(err, "conversations.json", func(err error) error {
			return invalid("conversations.json after conversation %d: %v", r.index, err)
		})
	}
	switch _, err := r.dec.Token(); {
	case err == io.EOF:
		return io.EOF
	case err == nil:
		return invalid("conversations.json: something follows the array's closing bracket")
	default:
		return decodeError(err, "conversations.json", func(error) error {
			return invalid("conversations.json: something follows the array's closing bracket")
		})
	}
}

// decodeError sorts an error from the JSON decoder: the file's fault, worded
// by fault (or already worded: the zip's own complaints), or the input's
// (a dropped connection, ErrTooLarge), wrapped as it came.
func decodeError(err error, what string, fault func(error) error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var limit *LimitError
	switch {
	case errors.As(err, &limit):
		return fault(limit) // a string or a conversation past its bound (boundReader)
	case errors.Is(err, ErrInvalid):
		return err
	case err == io.EOF, errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &syn), errors.As(err, &typ):
		return fault(jsonError(err)) // the JSON ends early or is wrong
	}
	return fmt.Errorf("read %s: %w", what, err)
}

// What conversations.json holds, as far as an import needs it.
type gptConversation struct {
	ID             string              `json:"id"`
	ConversationID string              `json:"conversation_id"`
	Title          *string             `json:"title"`
	CreateTime     *float64            `json:"create_time"`
	UpdateTime     *float64            `json:"update_time"`
	CurrentNode    *string             `json:"current_node"`
	IsArchived     bool                `json:"is_archived"`
	Mapping        map[string]*gptNode `json:"mapping"`
}

type gptNode struct {
	Parent   *string     `json:"parent"`
	Children []string    `json:"children"`
	Message  *gptMessage `json:"message"`
}

type gptMessage struct {
	Author struct {
		Role string  `json:"role"`
		Name *string `json:"name"`
	} `json:"author"`
	CreateTime *float64 `json:"create_time"`
	Content    struct {
		ContentType string            `json:"content_type"`
		Parts       []json.RawMessage `json:"parts"`
		Text        *string           `json:"text"`
	} `json:"content"`
	Metadata struct {
		Hidden      bool `json:"is_visually_hidden_from_conversation"`
		Attachments []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"attachments"`
	} `json:"metadata"`
	Recipient string `json:"recipient"`
}

// conversation is one ChatGPT conversation's tree, being turned into
// exchanges one at a time.
type conversation struct {
	o         *Options
	index     int
	id, title string
	archived  bool
	created   time.Time // may be zero
	updated   time.Time // may be zero
	root      *tnode    // of the current path
	current   *tnode
	roots     []*tnode // other roots, sorted by id
	mainDone  bool
	tasks     []branch // forks still to build, in order
	has       func(id string) bool
}

type tnode struct {
	key      string
	parent   *tnode
	children []*tnode
	raw      *gptMessage
	entry    *entry // what the node becomes in a log; nil: skipped
	state    uint8  // cycle check: 0 unseen, 1 on the walk, 2 done
}

// entry is a node's log entry, minus what depends on the exchange it is in.
type entry struct {
	role, content string
	tool          json.RawMessage
	at            time.Time // may be zero: then the entry before it lends its time
	assets        []asset   // the files it shows or was given, by ChatGPT's id
}

// asset is a file a ChatGPT message names: an image part's asset_pointer
// ("file-service://file-XXXX", "sediment://file_XXXX") or an entry of its
// metadata's attachments, with the name that gives, if any.
type asset struct{ id, name string }

// branch is a fork still to build: the nodes its log shares with the
// exchange it forks from (prefix), then start and its last children.
type branch struct {
	parentUID UID
	prefix    []*tnode
	start     *tnode
}

func (r *ChatGPTReader) newConversation(c *gptConversation) (*conversation, error) {
	cv := &conversation{o: &r.o, index: r.index, id: c.ID, archived: c.IsArchived, has: r.hasAsset}
	if cv.id == "" {
		cv.id = c.ConversationID
	}
	if c.Title != nil {
		cv.title = *c.Title
	}
	if cv.id == "" {
		return nil, cv.fail(errors.New("no id or conversation_id"))
	}
	if _, dup := r.seenIDs[cv.id]; dup {
		return nil, cv.fail(errors.New("the same conversation id appears twice in the file"))
	}
	r.seenIDs[cv.id] = struct{}{}
	var err error
	if cv.created, err = gptTime(c.CreateTime); err != nil {
		return nil, cv.fail(fmt.Errorf("create_time: %w", err))
	}
	if cv.updated, err = gptTime(c.UpdateTime); err != nil {
		return nil, cv.fail(fmt.Errorf("update_time: %w", err))
	}
	if err := cv.build(c); err != nil {
		return nil, cv.fail(err)
	}
	return cv, nil
}

func (cv *conversation) fail(err error) error {
	return &ConversationError{Index: cv.index, Title: cv.title, ID: cv.id, Err: err}
}

func (cv *conversation) where() string {
	return (&ConversationError{Index: cv.index, Title: cv.title, ID: cv.id}).label()
}

// build links the mapping into a tree and checks it: every parent exists,
// no cycle, current_node is in it.
func (cv *conversation) build(c *gptConversation) error {
	if len(c.Mapping) == 0 {
		return errors.New("mapping is empty")
	}
	nodes := make(map[string]*tnode, len(c.Mapping))
	keys := make([]string, 0, len(c.Mapping))
	for k, n := range c.Mapping {
		if n == nil {
			return fmt.Errorf("node %s is null", clip(k))
		}
		nodes[k] = &tnode{key: k, raw: n.Message}
		keys = append(keys, k)
	}
	sort.Strings(keys) // a map's order is random; the result must not be
	for _, k := range keys {
		n := c.Mapping[k]
		if n.Parent == nil || *n.Parent == "" {
			continue
		}
		p, ok := nodes[*n.Parent]
		if !ok {
			return fmt.Errorf("node %s: parent %s does not exist", clip(k), clip(*n.Parent))
		}
		nodes[k].parent = p
	}
	// Children in the order their parent lists them (ChatGPT appends, so the
	// last is the newest), then any it forgot to list, by id. A listed child
	// whose parent is another node is not the parent's.
	for _, k := range keys {
		t := nodes[k]
		for _, ck := range c.Mapping[k].Children {
			if ch, ok := nodes[ck]; ok && ch.parent == t && ch.state == 0 {
				ch.state = 1 // listed (reset below)
				t.children = append(t.children, ch)
			}
		}
	}
	for _, k := range keys {
		t := nodes[k]
		if t.parent != nil && t.state == 0 {
			t.parent.children = append(t.parent.children, t)
		}
	}
	for _, t := range nodes {
		t.state = 0
	}
	// A cycle: walking up from some node comes back to a node of the walk.
	var walk []*tnode
	for _, k := range keys {
		walk = walk[:0]
		for t := nodes[k]; t != nil && t.state != 2; t = t.parent {
			if t.state == 1 {
				return fmt.Errorf("mapping has a cycle (through node %s)", clip(t.key))
			}
			t.state = 1
			walk = append(walk, t)
		}
		for _, t := range walk {
			t.state = 2
		}
	}
	if c.CurrentNode == nil {
		return errors.New("no current_node")
	}
	cur, ok := nodes[*c.CurrentNode]
	if !ok {
		return fmt.Errorf("current_node %s not in mapping", clip(*c.CurrentNode))
	}
	cv.current = cur
	for cv.root = cur; cv.root.parent != nil; cv.root = cv.root.parent {
	}
	for _, k := range keys {
		if t := nodes[k]; t.parent == nil && t != cv.root {
			cv.roots = append(cv.roots, t)
		}
	}
	for _, k := range keys {
		e, err := convertNode(nodes[k].raw, cv.has)
		if err != nil {
			return fmt.Errorf("node %s: %w", clip(k), err)
		}
		nodes[k].entry = e
	}
	return nil
}

// next builds the next exchange of the conversation, or nil when all are.
func (cv *conversation) next() (*Exchange, error) {
	if !cv.mainDone {
		cv.mainDone = true
		var path []*tnode
		for t := cv.current; t != nil; t = t.parent {
			path = append(path, t)
		}
		for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
			path[i], path[j] = path[j], path[i]
		}
		e, err := cv.exchange(nil, path, 0)
		if err != nil {
			return nil, err
		}
		cv.queueForks(e.UID, path, 0)
		// Trees with more than one root: the others start from nothing, as
		// forks at seq 0, so no message is lost.
		for _, t := range cv.roots {
			cv.tasks = append(cv.tasks, branch{parentUID: e.UID, start: t})
		}
		return e, nil
	}
	for len(cv.tasks) > 0 {
		b := cv.tasks[0]
		cv.tasks[0] = branch{}
		cv.tasks = cv.tasks[1:]
		path := make([]*tnode, len(b.prefix), len(b.prefix)+8)
		copy(path, b.prefix)
		for t := b.start; t != nil; t = lastChild(t) {
			path = append(path, t)
		}
		own := 0
		for _, t := range path[len(b.prefix):] {
			if t.entry != nil {
				own++
			}
		}
		if own == 0 {
			// Nothing of its own (only hidden or empty nodes): its branches
			// fork from the same entries of the parent.
			cv.queueForks(b.parentUID, path, len(b.prefix))
			continue
		}
		e, err := cv.exchange(&b, path, len(b.prefix))
		if err != nil {
			return nil, err
		}
		cv.queueForks(e.UID, path, len(b.prefix))
		return e, nil
	}
	return nil, nil
}

// queueForks adds a branch for every child off path at or after from.
func (cv *conversation) queueForks(parent UID, path []*tnode, from int) {
	for i := from; i < len(path); i++ {
		for _, ch := range path[i].children {
			if i+1 < len(path) && ch == path[i+1] {
				continue
			}
			cv.tasks = append(cv.tasks, branch{parentUID: parent, prefix: path[: i+1 : i+1], start: ch})
		}
	}
}

func lastChild(t *tnode) *tnode {
	if len(t.children) == 0 {
		return nil
	}
	return t.children[len(t.children)-1]
}

// exchangeName is what an exchange's uid derives from: "chatgpt:" + the
// conversation id, + ":" + the branch's first node for a fork. Ids are
// query-escaped, so no ":" or "/" inside one can make two names equal.
func (cv *conversation) exchangeName(b *branch) string {
	name := "chatgpt:" + url.QueryEscape(cv.id)
	if b != nil {
		name += ":" + url.QueryEscape(b.start.key)
	}
	return name
}

// exchange makes the log of path; b is nil for the current path, otherwise
// the fork, whose own entries start at path[own].
func (cv *conversation) exchange(b *branch, path []*tnode, own int) (*Exchange, error) {
	name := cv.exchangeName(b)
	e := &Exchange{
		UID:       NameUID(ChatGPTNamespace, name),
		Title:     cv.title,
		AgentType: cv.o.ChatGPTAgentType,
		Scope:     ScopeGeneral,
		Archived:  cv.archived,
		Messages:  []*Message{},
	}
	var seq int64
	var prev time.Time
	var firstOwn time.Time
	for i, t := range path {
		if i == own && b != nil {
			e.ForkedFrom = &ForkRef{ExchangeUID: b.parentUID, Seq: seq}
		}
		if t.entry == nil {
			continue
		}
		at := t.entry.at
		if at.IsZero() {
			at = prev // a message without a time sits where the one before it was
		}
		if at.IsZero() {
			at = cv.created
		}
		if at.IsZero() {
			at = cv.updated
		}
		if at.IsZero() {
			return nil, fmt.Errorf("node %s has no create_time, nor has any message before it or the conversation", clip(t.key))
		}
		prev = at
		if i >= own && firstOwn.IsZero() {
			firstOwn = at
		}
		s := seq
		seq++
		e.Messages = append(e.Messages, &Message{
			UID:       NameUID(ChatGPTNamespace, name+"/"+url.QueryEscape(t.key)),
			Seq:       &s,
			Role:      t.entry.role,
			Content:   t.entry.content,
			Timestamp: at,
			Tool:      t.entry.tool,
			assets:    t.entry.assets,
		})
	}
	if b == nil {
		e.CreatedAt, e.UpdatedAt = firstSet(cv.created, firstOwn, cv.updated), firstSet(cv.updated, prev, cv.created)
	} else {
		e.CreatedAt, e.UpdatedAt = firstSet(firstOwn, cv.created, cv.updated), firstSet(prev, cv.updated, cv.created)
	}
	if e.CreatedAt.IsZero() {
		return nil, errors.New("no create_time or update_time, and no message has one")
	}
	return e, nil
}

func firstSet(ts ...time.Time) time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// convertNode turns a node's message into a log entry, or nil when it is
// not one: no message, a system or hidden message, a content type without
// text (browsing displays, reasoning), or only whitespace and no file that
// the export's zip holds (has).
func convertNode(m *gptMessage, has func(id string) bool) (*entry, error) {
	if m == nil || m.Metadata.Hidden {
		return nil, nil
	}
	var role string
	switch m.Author.Role {
	case "user":
		role = RoleUser
	case "assistant":
		role = RoleAssistant
		if m.Recipient != "" && m.Recipient != "all" {
			role = RoleToolCall // code for the python tool, a query for the browser
		}
	case "tool":
		role = RoleToolResult
	default: // "system" and anything newer
		return nil, nil
	}
	var content string
	var assets []asset
	switch m.Content.ContentType {
	case "text", "multimodal_text":
		var texts []string
		for _, p := range m.Content.Parts {
			var s string
			if json.Unmarshal(p, &s) == nil && s != "" {
				texts = append(texts, s)
				continue
			}
			var obj struct {
				ContentType  string `json:"content_type"`
				AssetPointer string `json:"asset_pointer"`
			}
			if json.Unmarshal(p, &obj) == nil && obj.ContentType == "image_asset_pointer" {
				if _, id, ok := strings.Cut(obj.AssetPointer, "://"); ok && id != "" {
					assets = addAsset(assets, asset{id: id})
				}
			}
		}
		content = strings.Join(texts, "\n\n")
	case "code", "execution_output":
		if m.Content.Text != nil {
			content = *m.Content.Text
		}
	default:
		return nil, nil
	}
	for _, a := range m.Metadata.Attachments {
		if a.ID != "" {
			assets = addAsset(assets, asset{id: a.ID, name: a.Name})
		}
	}
	kept := assets[:0] // only what the export's zip holds: a message of only a missing image is skipped
	for _, a := range assets {
		if has(a.id) {
			kept = append(kept, a)
		}
	}
	assets = kept
	if strings.TrimSpace(content) == "" && len(assets) == 0 {
		return nil, nil
	}
	at, err := gptTime(m.CreateTime)
	if err != nil {
		return nil, fmt.Errorf("create_time: %w", err)
	}
	e := &entry{role: role, content: content, at: at, assets: assets}
	switch role {
	case RoleToolCall:
		e.tool, _ = json.Marshal(map[string]string{"name": m.Recipient})
	case RoleToolResult:
		name := ""
		if m.Author.Name != nil {
			name = *m.Author.Name
		}
		e.tool, _ = json.Marshal(map[string]string{"name": name})
	}
	return e, nil
}

// addAsset adds a to the list, or its name to the one with its id.
func addAsset(list []asset, a asset) []asset {
	for i := range list {
		if list[i].id == a.id {
			if list[i].name == "" {
				list[i].name = a.name
			}
			return list
		}
	}
	return append(list, a)
}

// maxUnix is the last second of year 9999, the last an export can write.
const maxUnix = 253402300799

// gptTime reads ChatGPT's float seconds since 1970 (microseconds kept);
// null is the zero time.
func gptTime(f *float64) (time.Time, error) {
	if f == nil {
		return time.Time{}, nil
	}
	if math.IsNaN(*f) || *f < 0 || *f > maxUnix {
		return time.Time{}, fmt.Errorf("%s is not a time", strconv.FormatFloat(*f, 'g', -1, 64))
	}
	sec := math.Floor(*f)
	usec := math.Round((*f - sec) * 1e6)
	return time.Unix(int64(sec), int64(usec)*1000).UTC(), nil
}
