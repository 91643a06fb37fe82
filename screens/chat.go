package screens

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"palaver/agents"
	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// HistoryBatch is how many exchanges one batch of the sidebar holds.
const HistoryBatch = 20

// Chat builds the chat screen for exchange id (0: a new chat), its sidebar
// starting after cursor (nil: at the top). A page or job chat, another
// user's or a missing one: models.ErrNotFound.
func (s *Screens) Chat(ctx context.Context, v Viewer, id int64, cursor *models.Cursor) (views.ChatScreen, error) {
	return s.ChatWindow(ctx, v, id, cursor, Window{})
}

// ChatWindow is Chat with the transcript on a window of the log (win): the
// latest entries, those before a seq, a window around a search hit, or the
// log as it was at a seq (time travel: read-only, no composer).
func (s *Screens) ChatWindow(ctx context.Context, v Viewer, id int64, cursor *models.Cursor, win Window) (views.ChatScreen, error) {
	conv, travel, err := s.conversation(ctx, v, id, win)
	if err != nil {
		return views.ChatScreen{}, err
	}
	side, err := s.Sidebar(ctx, v, id, cursor)
	if err != nil {
		return views.ChatScreen{}, err
	}
	composer := views.Composer{ExchangeID: id, MaxLength: agents.MaxQueryLength, CSRF: v.CSRF,
		TurnStatus: conv.TurnStatus, AfterSeq: conv.LastSeq, Models: s.modelChoices(ctx, v.UserID, id)}
	if err := s.composerBudget(ctx, v, &composer); err != nil {
		return views.ChatScreen{}, err
	}
	if id != 0 {
		cost, err := s.store.ExchangeCost(ctx, v.UserID, id)
		if err != nil {
			return views.ChatScreen{}, err
		}
		if cost > 0 {
			composer.Cost = Dollars(cost)
		}
	}
	return views.ChatScreen{
		Base:         v.base(conv.Heading.Name(), "chat"),
		Conversation: conv,
		Sidebar:      side,
		Composer:     composer,
		TimeTravel:   travel,
	}, nil
}

// Conversation loads a general exchange and the latest window of its log
// for the transcript (id 0: a new chat, empty).
func (s *Screens) Conversation(ctx context.Context, v Viewer, id int64) (views.Conversation, error) {
	conv, _, err := s.conversation(ctx, v, id, Window{})
	return conv, err
}

// OfferRetry gives the error row that ended a failed chat turn its Retry
// button, when it is the last of entries and the newest entry of the log
// (newest, by id). ex is the exchange's header as of then (nil: unknown).
func OfferRetry(v Viewer, entries []views.ChatMessage, ex *models.Exchange, newest int64) {
	n := len(entries)
	if n == 0 || ex == nil || ex.Scope != models.ScopeGeneral || ex.TurnStatus != models.TurnFailed {
		return
	}
	if last := &entries[n-1]; last.Role == views.RoleError && last.ID == newest {
		last.Retry = views.RetryView{Action: paths.ChatRetry(ex.ID), CSRF: v.CSRF}
	}
}

// GeneralExchange loads one of the user's general exchanges: page and job
// chats are not shown or changed through /chat, and are not found like
// others'.
func (s *Screens) GeneralExchange(ctx context.Context, userID, id int64) (*models.Exchange, error) {
	ex, err := s.store.Exchange(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	if ex.Scope != models.ScopeGeneral {
		return nil, fmt.Errorf("chat: exchange %d is a %s chat: %w", id, ex.Scope, models.ErrNotFound)
	}
	return ex, nil
}

// AdminViewed is the owner's notice that administrators opened one of
// their exchanges: nil when none did. Chat screens of every scope show it.
func AdminViewed(v models.AdminViews) *views.AdminViewed {
	if v.Count == 0 || v.Last == nil {
		return nil
	}
	return &views.AdminViewed{Count: v.Count, Last: v.Last.Local().Format("2 Jan 2006 at 15:04"),
		LastFull: v.Last.Local().Format(time.RFC3339)}
}

// PinnedShown bounds the Pinned group, which is shown whole, not in
// batches: a bound against an account that pins thousands, not a number a
// person reaches.
const PinnedShown = 500

// Sidebar builds the conversations sidebar: the pinned ones, and a batch of
// the others starting after cursor (nil: at the top), current marked.
func (s *Screens) Sidebar(ctx context.Context, v Viewer, current int64, cursor *models.Cursor) (views.Sidebar, error) {
	pinned := true
	sums, err := s.store.ListExchanges(ctx, v.UserID, models.ExchangeQuery{
		Scope: models.ScopeGeneral, Pinned: &pinned, Limit: PinnedShown,
	})
	if err != nil {
		return views.Sidebar{}, err
	}
	var side views.Sidebar
	now := time.Now()
	exs, heads, err := s.familyHeads(ctx, v, sums, current)
	if err != nil {
		return views.Sidebar{}, err
	}
	unread, err := s.store.Unread(ctx, v.UserID)
	if err != nil {
		return views.Sidebar{}, err
	}
	for i := range exs {
		it := familyItem(v, &exs[i], heads, current, now)
		it.Group, it.Unread = "", unread[it.ID]
		side.Pinned = append(side.Pinned, it)
	}
	side.UnreadCount = len(unread)
	var inProject int64
	if current != 0 {
		// The open chat's project: marked in the list, and the search box's scope.
		ex, err := s.store.Exchange(ctx, v.UserID, current)
		if err != nil && !errors.Is(err, models.ErrNotFound) {
			return views.Sidebar{}, err
		}
		if err == nil && ex.ProjectID != nil {
			inProject = *ex.ProjectID
		}
	}
	if side.Projects, err = s.ProjectLinks(ctx, v, inProject); err != nil {
		return views.Sidebar{}, err
	}
	if inProject != 0 {
		for _, p := range side.Projects {
			for _, l := range append([]views.ProjectLink{p}, p.Children...) {
				if l.ID == inProject {
					side.Scope = &views.SearchScope{ProjectID: l.ID, Name: l.Name}
				}
			}
		}
	}
	side.History, err = s.HistoryList(ctx, v, current, cursor, cursor != nil)
	return side, err
}

// ArchivedList loads one batch (by keyset) of the user's archived general
// exchanges after cursor (nil: the first batch).
func (s *Screens) ArchivedList(ctx context.Context, v Viewer, cursor *models.Cursor) (views.HistoryList, error) {
	sums, err := s.store.ListExchanges(ctx, v.UserID, models.ExchangeQuery{
		Scope: models.ScopeGeneral, Archived: true, Before: cursor, Limit: HistoryBatch + 1,
	})
	if err != nil {
		return views.HistoryList{}, err
	}
	list := views.HistoryList{Partial: cursor != nil}
	if len(sums) > HistoryBatch {
		sums = sums[:HistoryBatch]
		list.Next = sums[len(sums)-1].Cursor().String()
	}
	now := time.Now()
	exs, heads, err := s.familyHeads(ctx, v, sums, 0)
	if err != nil {
		return views.HistoryList{}, err
	}
	for i := range exs {
		it := familyItem(v, &exs[i], heads, 0, now)
		it.Group = ""
		list.Items = append(list.Items, it)
	}
	return list, nil
}

// HistoryList loads one batch (by keyset) of the user's general exchanges
// after cursor (nil: the first batch), current marked. partial says the list is
// shown from there on a screen of its own, so its first group needs its
// header; otherwise a batch after cursor continues the group the cursor's
// exchange was in.
func (s *Screens) HistoryList(ctx context.Context, v Viewer, current int64, cursor *models.Cursor, partial bool) (views.HistoryList, error) {
	unpinned := false // the pinned ones have their own group (Sidebar)
	sums, err := s.store.ListExchanges(ctx, v.UserID, models.ExchangeQuery{
		Scope: models.ScopeGeneral, Pinned: &unpinned, Before: cursor, Limit: HistoryBatch + 1,
	})
	if err != nil {
		return views.HistoryList{}, err
	}
	list := views.HistoryList{Partial: partial}
	if len(sums) > HistoryBatch {
		sums = sums[:HistoryBatch]
		list.Next = sums[len(sums)-1].Cursor().String()
	}
	now := time.Now()
	group := views.GroupToday // the first batch always starts with its header
	switch {
	case partial:
		group = ""
	case cursor != nil:
		group = views.HistoryGroup(cursor.At, now)
	}
	exs, heads, err := s.familyHeads(ctx, v, sums, current)
	if err != nil {
		return views.HistoryList{}, err
	}
	unread, err := s.store.Unread(ctx, v.UserID)
	if err != nil {
		return views.HistoryList{}, err
	}
	for i := range exs {
		it := familyItem(v, &exs[i], heads, current, now)
		it.Unread = unread[it.ID]
		if it.Group == group {
			it.Group = "" // the group continues: no second header
		} else {
			group = it.Group
		}
		list.Items = append(list.Items, it)
	}
	return list, nil
}

// AgentName is an agent as a person knows it: nothing for the default
// one (the router, which answers any chat), else its name.
func AgentName(agentType string) string {
	switch agentType {
	case "", agents.AgentAuto, agents.AgentRouter:
		return ""
	case agents.AgentPageAssistant:
		return "Page assistant"
	case agents.AgentSearch:
		return "Search"
	}
	return strings.ReplaceAll(agentType, "_", " ")
}

// HistoryItem maps an exchange to its sidebar item, with its group header.
func HistoryItem(v Viewer, ex *models.Exchange, current int64, now time.Time) views.HistoryItem {
	it := views.HistoryItem{
		ID:         ex.ID,
		Title:      ChatTitle(ex),
		AgentType:  AgentName(ex.AgentType),
		Turns:      ex.TurnCount,
		Current:    ex.ID == current,
		Group:      views.HistoryGroup(ex.UpdatedAt, now),
		CSRF:       v.CSRF,
		TurnStatus: ex.RunState(),
		Pinned:     ex.Pinned,
		Archived:   ex.Archived,
	}
	it.When, it.WhenFull = when(ex.UpdatedAt, now)
	return it
}

// Highlight marks the transcript entry at seq (a search hit's), and says
// whether the log holds one: a seq it does not hold marks nothing.
func Highlight(entries []views.ChatMessage, seq int64) bool {
	for i := range entries {
		if entries[i].HasSeq && entries[i].Seq == seq {
			entries[i].Highlight = true
			return true
		}
	}
	return false
}

// HighlightEntries is Highlight for a page chat's entries.
func HighlightEntries(entries []views.PageEntry, seq int64) bool {
	for i := range entries {
		if m := &entries[i].Message; m.HasSeq && m.Seq == seq {
			m.Highlight = true
			return true
		}
	}
	return false
}

// Messages maps a log to transcript entries: user messages, assistant
// replies (Markdown rendered and sanitised here) and error rows. Tool calls
// and results are the agent's working, not part of the conversation shown.
func (s *Screens) Messages(v Viewer, msgs []models.Message) []views.ChatMessage {
	out := make([]views.ChatMessage, 0, len(msgs))
	answered := AnsweredCalls(msgs)
	for i := range msgs {
		if m, ok := s.Message(v, &msgs[i]); ok {
			if answered[m.ID] {
				m.Call = views.ToolCard{}
			}
			out = append(out, m)
		}
	}
	return out
}

// AnsweredCalls are the ids of the tool_call entries of msgs (a log in
// order) that waited and have a later entry about their call: their card
// is gone.
func AnsweredCalls(msgs []models.Message) map[int64]bool {
	state := models.ToolCallState(msgs)
	out := map[int64]bool{}
	for _, m := range msgs {
		if m.Role == models.RoleToolCall && m.Tool != nil && waiting(m.Tool.State) && state[m.Tool.CallID] != m.Tool.State {
			out[m.ID] = true
		}
	}
	return out
}

func waiting(state string) bool {
	return state == models.ToolAwaitingApproval || state == models.ToolAwaitingClient
}

// toolCard is a waiting call's card (a tool_call entry that waits, as far
// as this entry says).
func toolCard(v Viewer, m *models.Message, scopePage *int64) views.ToolCard {
	f := m.Tool
	c := views.ToolCard{Waiting: "client", CallID: f.CallID, Tool: f.Name, Action: paths.ChatTools(m.ExchangeID), CSRF: v.CSRF, ExchangeID: m.ExchangeID}
	if f.State == models.ToolAwaitingApproval {
		c.Waiting = "approval"
	}
	keys := make([]string, 0, len(f.Arguments))
	for k := range f.Arguments {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		val := fmt.Sprint(f.Arguments[k])
		if _, ok := f.Arguments[k].(string); !ok {
			if j, err := json.Marshal(f.Arguments[k]); err == nil {
				val = string(j)
			}
		}
		fmt.Fprintf(&b, "%s: %s\n", k, val)
	}
	c.Args = strings.TrimSuffix(b.String(), "\n")
	if scopePage != nil {
		c.Editor = *scopePage
	}
	return c
}

// Message maps one log entry, and says whether the transcript shows it.
func (s *Screens) Message(v Viewer, m *models.Message) (views.ChatMessage, bool) {
	at := m.CreatedAt.Local()
	e := views.ChatMessage{ID: m.ID, Role: m.Role, TimeFull: at.Format(time.RFC3339)}
	e.Time, e.TimeSays = views.MessageTime(at, time.Now())
	if m.Seq != nil {
		e.Seq, e.HasSeq = *m.Seq, true
	}
	switch m.Role {
	case models.RoleUser, models.RoleError:
		e.Text = m.Content
	case models.RoleToolCall, models.RoleToolResult:
		e.Text = m.Content
		if m.Tool != nil {
			detail := any(m.Tool.Arguments)
			if m.Role == models.RoleToolResult {
				detail = m.Tool.Result
			}
			if b, err := json.MarshalIndent(detail, "", "  "); err == nil && detail != nil {
				e.Detail = string(b)
			}
			if sub, ok := subRunID(m.Tool.Result); ok && m.Role == models.RoleToolResult {
				e.SubRun = paths.ChatSubRun(m.ExchangeID, sub)
			}
			if m.Role == models.RoleToolResult && m.Tool.Output != nil {
				if b, err := json.MarshalIndent(m.Tool.Output, "", "  "); err == nil {
					e.Detail = string(b)
				}
			}
			if m.Role == models.RoleToolCall && waiting(m.Tool.State) {
				e.Call = toolCard(v, m, nil)
			}
		}
	case models.RoleAssistant:
		e.HTML = s.markdown.HTML(m.Content)
		e.Feedback = Feedback(v, m)
		e.Stopped = m.AgentResponse != nil && m.AgentResponse.Metadata["stopped"] == true
		e.Reasoning, e.ThoughtFor, e.Model = replyNotes(m.AgentResponse)
		if models.InstructionsHash(m.AgentResponse) != "" {
			e.Told = paths.MessageInstructions(m.ID)
		}
	default:
		return e, false
	}
	return e, true
}

// Feedback maps an assistant message's rating to its control.
func Feedback(v Viewer, m *models.Message) views.FeedbackView {
	f := views.FeedbackView{MessageID: m.ID, CSRF: v.CSRF}
	if m.Feedback != nil {
		switch *m.Feedback {
		case models.FeedbackUp:
			f.Value = views.FeedbackUp
		case models.FeedbackDown:
			f.Value = views.FeedbackDown
		}
	}
	if m.FeedbackComment != nil {
		f.Comment = *m.FeedbackComment
	}
	return f
}

// subRunID reads the sub-run a delegation's tool result names (agents
// record {"sub_run_id": N, …}).
func subRunID(result any) (int64, bool) {
	r, ok := result.(map[string]any)
	if !ok {
		return 0, false
	}
	switch v := r["sub_run_id"].(type) {
	case float64:
		return int64(v), v > 0
	case int64:
		return v, v > 0
	}
	return 0, false
}

// SubRun builds the screen of one of the user's sub-runs, spawned from the
// exchange parent (another exchange's, or another user's: not found).
func (s *Screens) SubRun(ctx context.Context, v Viewer, parent, sub int64) (views.SubRunScreen, error) {
	run, err := s.store.SubRunOf(ctx, v.UserID, sub)
	if err != nil {
		return views.SubRunScreen{}, err
	}
	if run.ParentID != parent {
		return views.SubRunScreen{}, fmt.Errorf("sub-run %d of exchange %d: %w", sub, parent, models.ErrNotFound)
	}
	p, err := s.store.Exchange(ctx, v.UserID, parent)
	if err != nil {
		return views.SubRunScreen{}, err
	}
	msgs, err := s.store.Messages(ctx, v.UserID, sub, nil)
	if err != nil {
		return views.SubRunScreen{}, err
	}
	out := views.SubRunScreen{
		Base: v.Chrome, Parent: paths.ChatAtSeq(parent, run.ParentSeq), ParentTitle: DisplayTitle(p.Title),
		Agent: run.Agent, Status: run.Status, Result: run.Result, Started: run.StartedAt.Local().Format("2006-01-02 15:04:05"),
	}
	out.Title, out.Nav = "Sub-run: "+run.Agent, "chat"
	if run.FinishedAt != nil {
		out.Finished = run.FinishedAt.Local().Format("2006-01-02 15:04:05")
	}
	for i := range msgs {
		if m, ok := s.Message(v, &msgs[i]); ok {
			m.Feedback = views.FeedbackView{} // a sub-run's replies are not rated
			out.Messages = append(out.Messages, m)
		}
	}
	return out, nil
}

// replyNotes are what a reply shows besides its text: the model's
// reasoning, how long it reasoned, and the model's name.
func replyNotes(r *models.AgentResponse) (reasoning, took, model string) {
	if r == nil {
		return "", "", ""
	}
	model, _ = r.Metadata["model"].(string)
	var ms float64
	switch v := r.Metadata["reasoning_ms"].(type) { // a number, from JSON or not yet stored
	case float64:
		ms = v
	case int64:
		ms = float64(v)
	case int:
		ms = float64(v)
	}
	if ms > 0 && r.Reasoning != "" {
		d := time.Duration(ms) * time.Millisecond
		took = d.Round(100 * time.Millisecond).String()
		if d >= time.Second {
			took = d.Round(time.Second).String()
		}
	}
	return r.Reasoning, took, model
}

// modelChoices are the enabled models for the composer's picker, by
// connection, the person's favourites marked, and the one a message would
// get marked (the conversation's last, the project's, the person's or the
// administrators' default: the rule of models.ModelPreferences). The
// picker is a convenience: a failed read leaves it out.
func (s *Screens) modelChoices(ctx context.Context, userID, exchangeID int64) []views.ModelChoice {
	out, err := s.ModelChoices(ctx, userID)
	if err != nil {
		return nil
	}
	prefs, err := s.store.ModelPreferencesOf(ctx, userID, exchangeID, nil)
	if err != nil {
		return nil
	}
	enabled := map[int64]bool{}
	for _, m := range out {
		enabled[m.ID] = true
	}
	if pick := prefs.First(func(id int64) bool { return enabled[id] }); pick != 0 {
		for i := range out {
			out[i].Default = out[i].ID == pick
		}
	}
	return out
}

// ModelChoices are the enabled models the person may pick, by connection,
// their favourites marked, the administrators' default marked Default.
func (s *Screens) ModelChoices(ctx context.Context, userID int64) ([]views.ModelChoice, error) {
	conns, err := s.store.Connections(ctx)
	if err != nil {
		return nil, err
	}
	ms, err := s.store.LLMModels(ctx)
	if err != nil {
		return nil, err
	}
	favs, err := s.store.FavouriteModels(ctx, userID)
	if err != nil {
		return nil, err
	}
	names := map[int64]string{}
	for _, c := range conns {
		names[c.ID] = c.Name
	}
	var out []views.ModelChoice
	for _, m := range ms {
		if m.Enabled {
			out = append(out, views.ModelChoice{ID: m.ID, Name: m.Name, Connection: names[m.ConnectionID],
				Default: m.IsDefault, Favourite: slices.Contains(favs, m.ID)})
		}
	}
	return out, nil
}

// ModelPicker is the composer's picker once the person starred or
// unstarred picked, which stays chosen.
func (s *Screens) ModelPicker(ctx context.Context, v Viewer, picked int64) ([]views.ModelChoice, error) {
	out, err := s.ModelChoices(ctx, v.UserID)
	for i := range out {
		out[i].Default = out[i].ID == picked
	}
	return out, err
}

// composerBudget puts the person's budget warning, if any, in the composer.
func (s *Screens) composerBudget(ctx context.Context, v Viewer, c *views.Composer) error {
	st, err := s.store.BudgetStatusOf(ctx, v.UserID, time.Now())
	if err != nil {
		return err
	}
	c.Budget = views.BudgetWarning{Message: st.Message, Spent: st.Spent}
	return nil
}
