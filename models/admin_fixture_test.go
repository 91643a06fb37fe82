package models

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// adminBase is the seeds' "now": fixed, so day buckets and ranges are known.
var adminBase = time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)

// seedSpec describes one exchange to seed and, independently of any SQL, the
// facts the admin queries should find about it.
type seedSpec struct {
	user      string
	scope     string // ScopeGeneral when empty
	page      string // with ScopePage: the page's title
	job       string // with ScopeJob
	agent     string
	query     string // the first message; the title comes from it
	turns     int    // user messages (≥ 1)
	failLast  bool   // the last turn ends in an error row instead of a reply
	down, up  bool   // the first reply is rated down / up
	proposals []string
	ago       time.Duration // last activity: adminBase - ago
	pinned    bool

	id int64 // filled in by seedExchanges
}

func (sp *seedSpec) scopeOrGeneral() string {
	if sp.scope == "" {
		return ScopeGeneral
	}
	return sp.scope
}

func (sp *seedSpec) errors() int64 {
	if sp.failLast {
		return 1
	}
	return 0
}

func (sp *seedSpec) count(state string) int64 {
	var n int64
	for _, p := range sp.proposals {
		if p == state {
			n++
		}
	}
	return n
}

// adminSeed is a seeded database: accounts and pages by name, exchanges in
// the order of their specs.
type adminSeed struct {
	s     *Store
	users map[string]*User
	pages map[string]*Page
	specs []*seedSpec
}

// seedExchanges creates the accounts, pages and exchanges the specs name,
// through the same store calls the app uses.
func seedExchanges(t *testing.T, s *Store, specs []*seedSpec) *adminSeed {
	t.Helper()
	ctx := context.Background()
	sd := &adminSeed{s: s, users: map[string]*User{}, pages: map[string]*Page{}, specs: specs}
	for _, sp := range specs {
		u := sd.users[sp.user]
		if u == nil {
			u = mustUser(t, s, sp.user)
			sd.users[sp.user] = u
		}
		ts := TurnStart{UserID: u.ID, Scope: sp.scopeOrGeneral(), AgentType: sp.agent, Query: sp.query, Owner: "seed"}
		switch sp.scope {
		case ScopePage:
			p := sd.pages[sp.page]
			if p == nil {
				p = mustPage(t, s, u.ID, sp.page)
				sd.pages[sp.page] = p
			}
			ts.PageID = &p.ID
		case ScopeJob:
			ts.JobID = &sp.job
		}
		var firstReply *Message
		for turn := 1; turn <= sp.turns; turn++ {
			if turn > 1 {
				ts.Query = fmt.Sprintf("%s, turn %d", sp.query, turn)
			}
			ex, _ := mustStart(t, s, ts)
			ts.ExchangeID = ex.ID
			sp.id = ex.ID
			if turn == sp.turns && sp.failLast {
				if _, err := s.FailTurn(ctx, ex.ID, "seed", "the model endpoint timed out"); err != nil {
					t.Fatal(err)
				}
				continue
			}
			reply := assistant("reply to " + ts.Query)
			reply.AgentType = &sp.agent
			entries := []*Message{reply}
			var props []*Message
			if turn == sp.turns {
				for range sp.proposals {
					p := assistant("proposal")
					p.AgentType = &sp.agent
					p.EditMode = ptr("section_patch")
					props = append(props, p)
				}
				entries = append(entries, props...)
			}
			if err := s.FinishTurn(ctx, ex.ID, "seed", entries...); err != nil {
				t.Fatal(err)
			}
			if firstReply == nil {
				firstReply = reply
			}
			for i, state := range sp.proposals {
				if turn != sp.turns {
					break
				}
				switch state {
				case "accepted":
					rev := &PageRevision{PageID: *ts.PageID, Content: "new", EditSource: "agent", MessageID: &props[i].ID, CreatedAt: now()}
					if err := s.db.Create(rev).Error; err != nil {
						t.Fatal(err)
					}
				case "rejected":
					if err := s.db.Create(&ProposalRejection{MessageID: props[i].ID, UserID: u.ID, CreatedAt: now()}).Error; err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		if sp.down || sp.up {
			v := int64(FeedbackDown)
			if sp.up {
				v = FeedbackUp
			}
			if _, err := s.SetFeedback(ctx, u.ID, firstReply.ID, &v, nil); err != nil {
				t.Fatal(err)
			}
		}
		if sp.pinned {
			if err := s.db.Exec("UPDATE exchanges SET pinned = ? WHERE id = ?", true, sp.id).Error; err != nil {
				t.Fatal(err)
			}
		}
		setUpdatedAt(t, s, sp.id, adminBase.Add(-sp.ago))
	}
	return sd
}

// storedBytes is what the log of an exchange stores, summed in Go from the
// rows themselves (content, agent_response and tool as stored text).
func storedBytes(t *testing.T, s *Store, exchangeID int64) int64 {
	t.Helper()
	var rows []struct {
		Content       string
		AgentResponse *string
		Tool          *string
	}
	if err := s.db.Raw("SELECT content, agent_response, tool FROM messages WHERE exchange_id = ?", exchangeID).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, r := range rows {
		n += int64(len(r.Content))
		if r.AgentResponse != nil {
			n += int64(len(*r.AgentResponse))
		}
		if r.Tool != nil {
			n += int64(len(*r.Tool))
		}
	}
	return n
}

// rowIDs lists the ids of admin rows in order.
func rowIDs(rows []AdminExchangeRow) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

// walkAdmin reads every batch of an admin list with the given batch size
// and returns the ids in order, failing on a batch that is too long or a
// cursor that does not move on.
func walkAdmin(t *testing.T, s *Store, f AdminExchangeFilter, size int) []int64 {
	t.Helper()
	f.Limit = size
	var all []int64
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("the cursor walk does not end")
		}
		rows, next, err := s.AdminListExchanges(context.Background(), f)
		if err != nil {
			t.Fatalf("list %+v: %v", f, err)
		}
		if len(rows) > size {
			t.Fatalf("a page of %d rows, limit %d", len(rows), size)
		}
		all = append(all, rowIDs(rows)...)
		if next == nil {
			return all
		}
		if len(rows) != size {
			t.Fatalf("a short page (%d of %d) with a next cursor", len(rows), size)
		}
		// Round-trip the token as the handler does.
		c, err := ParseAdminCursor(next.String())
		if err != nil {
			t.Fatal(err)
		}
		f.After = &c
	}
}

// sortedIDs orders the specs by key then id, both descending, as the list does.
func sortedIDs(specs []*seedSpec, key func(*seedSpec) int64) []int64 {
	sorted := slices.Clone(specs)
	slices.SortFunc(sorted, func(a, b *seedSpec) int {
		if ka, kb := key(a), key(b); ka != kb {
			return int(kb - ka)
		}
		return int(b.id - a.id)
	})
	out := make([]int64, len(sorted))
	for i, sp := range sorted {
		out[i] = sp.id
	}
	return out
}

// tableCounts counts the rows of every table a user's data lives in.
func tableCounts(t *testing.T, s *Store) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, table := range []string{"users", "api_keys", "pages", "page_revisions", "exchanges", "messages",
		"proposal_rejections", "admin_audit", "retention_runs"} {
		out[table] = count(t, s, table, "1 = 1")
	}
	return out
}
