package dataport_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"palaver/dataport"
	"palaver/models"
	"palaver/transfer"
	"palaver/transfer/transfertest"
)

// A file whose forks form a cycle (A forked from B, B from A) is refused,
// naming both exchanges, and nothing of it is stored: the store's family
// walks would otherwise go round it.
func TestImportRefusesForkCycle(t *testing.T) {
	eachDB(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		ann, err := s.CreateUser(ctx, "ann", "x", false)
		if err != nil {
			t.Fatal(err)
		}
		g := transfertest.New(21)
		plain := g.Exchange(nil, nil)
		a, b := g.Exchange(nil, nil), g.Exchange(nil, nil)
		a.Scope, a.PageUID, a.JobID = transfer.ScopeGeneral, nil, nil
		b.Scope, b.PageUID, b.JobID = transfer.ScopeGeneral, nil, nil
		a.ForkedFrom = &transfer.ForkRef{ExchangeUID: b.UID, Seq: 0}
		b.ForkedFrom = &transfer.ForkRef{ExchangeUID: a.UID, Seq: 0}
		file := fileOf(t, nil, []*transfer.Exchange{plain, a, b})
		_, err = dataport.Import(ctx, s, ann.ID, bytes.NewReader(file), transfer.Options{})
		var refused *dataport.RefusedError
		if !errors.As(err, &refused) {
			t.Fatalf("a fork cycle: %v", err)
		}
		for _, want := range []string{"forked_from makes a cycle", "line 3 (exchange " + a.UID.String() + ")", "line 4 (exchange " + b.UID.String() + ")"} {
			if !strings.Contains(refused.Reason, want) {
				t.Errorf("the reason %q does not say %q", refused.Reason, want)
			}
		}
		if items, _ := exportOf(t, s, ann.ID); len(items) != 0 {
			t.Fatalf("a refused file left %d items", len(items))
		}
		// Without the cycle, the same exchanges import.
		b.ForkedFrom = nil
		if _, err := dataport.Import(ctx, s, ann.ID, bytes.NewReader(fileOf(t, nil, []*transfer.Exchange{plain, a, b})), transfer.Options{}); err != nil {
			t.Fatal(err)
		}
	})
}

// The stored-bytes cap counts a ChatGPT comb's copies against the file's
// own size, which the import knows from the file it reads (a stream is
// spooled first): refused, naming the limit, nothing stored. An unknown
// agent type is refused too.
func TestImportCaps(t *testing.T) {
	eachDB(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		ann, err := s.CreateUser(ctx, "ann", "x", false)
		if err != nil {
			t.Fatal(err)
		}
		_, err = dataport.Import(ctx, s, ann.ID, bytes.NewReader(transfertest.Comb(100)), transfer.Options{})
		var refused *dataport.RefusedError
		if !errors.As(err, &refused) || !strings.Contains(refused.Reason, "10 times the file's size") {
			t.Fatalf("a comb: %v", err)
		}
		g := transfertest.New(22)
		e := g.Exchange(nil, nil)
		e.Scope, e.PageUID, e.JobID = transfer.ScopeGeneral, nil, nil
		e.AgentType = "evil"
		_, err = dataport.Import(ctx, s, ann.ID, bytes.NewReader(fileOf(t, nil, []*transfer.Exchange{e})), transfer.Options{})
		if !errors.As(err, &refused) || !strings.Contains(refused.Reason, `line 2: agent_type "evil" is not an agent type (valid ones are: auto, router, page_assistant, search)`) {
			t.Fatalf("an unknown agent type: %v", err)
		}
		if items, _ := exportOf(t, s, ann.ID); len(items) != 0 {
			t.Fatalf("refused files left %d items", len(items))
		}
	})
}
