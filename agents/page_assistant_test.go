package agents

import (
	"context"
	"errors"
	"strings"
	"testing"

	"palaver/agents/sections"
	"palaver/models"
)

const tripPage = "Notes for the trip.\n\n## Plan\nFly to Paris.\n\n## Budget\n300 euros, Paris hotels included.\n"

func askPage(t *testing.T, content, query string) *models.AgentResponse {
	t.Helper()
	resp, err := (&Builtin{}).Execute(context.Background(), Request{
		AgentType: AgentPageAssistant, Query: query,
		Page: &PageContext{ID: 1, Title: "Trip", Content: content},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.AgentType != AgentPageAssistant || resp.Metadata["provider"] != "builtin" {
		t.Fatalf("response %+v", resp)
	}
	return resp
}

func TestPageAssistantProposals(t *testing.T) {
	for _, tc := range []struct {
		name, page, query string
		mode              string
		target, section   string // section patch
		result            string // the page once accepted whole
	}{
		{"replace section", tripPage, `replace section "Plan" with: Take the train.`,
			models.EditSectionPatch, "Plan", "## Plan\nTake the train.",
			"Notes for the trip.\n\n## Plan\nTake the train.\n\n## Budget\n300 euros, Paris hotels included.\n"},
		{"case-insensitive, curly quotes, # given", tripPage, "REPLACE SECTION “## budget” WITH:\n400 euros\nat most",
			models.EditSectionPatch, "## budget", "## Budget\n400 euros\nat most",
			"Notes for the trip.\n\n## Plan\nFly to Paris.\n\n## Budget\n400 euros\nat most\n"},
		{"replace a missing section appends it", tripPage, `replace section "Packing" with: a coat`,
			models.EditSectionPatch, "Packing", "## Packing\na coat",
			tripPage + "\n## Packing\na coat\n"},
		{"add section", tripPage, `Add section "Packing": a coat, shoes`,
			models.EditSectionPatch, "Packing", "## Packing\na coat, shoes",
			tripPage + "\n## Packing\na coat, shoes\n"},
		{"add section with its level", tripPage, `add section "### Later": maybe`,
			models.EditSectionPatch, "### Later", "### Later\nmaybe",
			tripPage + "\n### Later\nmaybe\n"},
		{"replace words everywhere", tripPage, `replace "Paris" with "Lyon"`,
			models.EditFullReplacement, "", "",
			"Notes for the trip.\n\n## Plan\nFly to Lyon.\n\n## Budget\n300 euros, Lyon hotels included.\n"},
		{"rewrite", tripPage, "rewrite the page as: # Trip\n\nCancelled.",
			models.EditFullReplacement, "", "", "# Trip\n\nCancelled."},
		{"rewrite a CRLF page keeps CRLF", "a\r\nb\r\n", "Rewrite the page as: x\ny",
			models.EditFullReplacement, "", "", "x\r\ny"},
		{"section patch on a CRLF page", "## A\r\nold\r\n", `replace section "A" with: new`,
			models.EditSectionPatch, "A", "## A\nnew", "## A\r\nnew\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := askPage(t, tc.page, tc.query)
			p, ok := ProposalOf(resp)
			if !ok {
				t.Fatalf("no proposal in %+v", resp.Metadata)
			}
			if p.Mode != tc.mode || p.OriginalHash != DJB2(tc.page) || p.Reasoning == "" || resp.Reasoning != p.Reasoning {
				t.Fatalf("proposal %+v (reasoning on the response %q)", p, resp.Reasoning)
			}
			if tc.mode == models.EditSectionPatch && (p.TargetHeading != tc.target || p.NewSectionContent != tc.section) {
				t.Fatalf("target %q content %q, want %q %q", p.TargetHeading, p.NewSectionContent, tc.target, tc.section)
			}
			if _, has := resp.Metadata["content"]; has != (tc.mode == models.EditFullReplacement) {
				t.Fatalf("metadata keys %v", resp.Metadata)
			}
			got, err := ApplyProposal(tc.page, &models.Message{AgentResponse: resp}, nil)
			if err != nil || got != tc.result {
				t.Fatalf("accepted: %q, %v\nwant %q", got, err, tc.result)
			}
		})
	}
}

func TestPageAssistantProse(t *testing.T) {
	for _, tc := range []struct {
		name, page, query string
		want              []string
	}{
		{"about the page", tripPage, "what is on this page?",
			[]string{"“Trip” has 2 sections: “## Plan”, “## Budget”", "text before the first heading", "14 words over 7 lines (88 characters)", `replace section "Plan" with:`}},
		{"empty page", "", "hello", []string{"“Trip” is empty so far", "rewrite the page as:"}},
		{"missing words", tripPage, `replace "Rome" with "Lyon"`, []string{"couldn't find “Rome”"}},
		{"add an existing section", tripPage, `add section "plan": more`, []string{"already has a section “## Plan”"}},
		{"no text", tripPage, `replace section "Plan" with:   `, []string{"What should the section “Plan” say?"}},
		{"a # in code is no section", "## A\n```\n# not one\n```\n", "sections?", []string{"has 1 section: “## A”"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := askPage(t, tc.page, tc.query)
			if _, ok := ProposalOf(resp); ok || resp.Metadata["edit_mode"] != nil {
				t.Fatalf("prose expected, got a proposal: %+v", resp.Metadata)
			}
			for _, w := range tc.want {
				if !strings.Contains(resp.Content, w) {
					t.Errorf("reply lacks %q:\n%s", w, resp.Content)
				}
			}
		})
	}
	if _, err := (&Builtin{}).Execute(context.Background(), Request{AgentType: AgentPageAssistant, Query: "hi"}, nil); err == nil {
		t.Fatal("the page assistant answered without a page")
	}
}

func TestApplyProposal(t *testing.T) {
	page := "p\n## A\na\n## B\nb\n"
	// A patch that changes A and adds C (the content carries two headings).
	patch := Proposal{Mode: models.EditSectionPatch, TargetHeading: "A", NewSectionContent: "## A\nA!\n## C\nc", OriginalHash: DJB2(page)}
	msg := &models.Message{ID: 9, AgentResponse: &models.AgentResponse{Metadata: patch.Metadata()}}
	if got := kindsOf(patch.Changes(page)); got != "changed ## A, new ## C" {
		t.Fatalf("changes: %s", got)
	}
	for _, tc := range []struct {
		name   string
		chosen []string
		want   string
		err    string
	}{
		{"all", nil, "p\n## A\nA!\n## C\nc\n## B\nb\n", ""},
		{"only the change", []string{"A"}, "p\n## A\nA!\n## B\nb\n", ""},
		{"only the new one", []string{"## C"}, "p\n## A\na\n\n## C\nc\n## B\nb\n", ""},
		{"both by name is all", []string{"A", "C"}, "p\n## A\nA!\n## C\nc\n## B\nb\n", ""},
		{"none", []string{}, "", "at least one section"},
		{"unknown", []string{"B"}, "", `no section "B"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ApplyProposal(page, msg, tc.chosen)
			if tc.err != "" {
				var ie *InputError
				if !errors.As(err, &ie) || !strings.Contains(ie.Msg, tc.err) {
					t.Fatalf("err %v, want an input error with %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v\nwant %q", got, err, tc.want)
			}
		})
	}
	if _, err := ApplyProposal(page+"edited", msg, nil); !errors.Is(err, models.ErrStale) {
		t.Fatalf("stale: %v", err)
	}
	full := Proposal{Mode: models.EditFullReplacement, Content: "new", OriginalHash: DJB2(page)}
	fmsg := &models.Message{AgentResponse: &models.AgentResponse{Metadata: full.Metadata()}}
	var ie *InputError
	if _, err := ApplyProposal(page, fmsg, []string{"A"}); !errors.As(err, &ie) {
		t.Fatalf("sections on a full replacement: %v", err)
	}
	if _, err := ApplyProposal(page, &models.Message{AgentResponse: &models.AgentResponse{Content: "prose"}}, nil); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("prose is no proposal: %v", err)
	}
}

func TestProposalOfRejectsMalformed(t *testing.T) {
	for _, meta := range []map[string]any{
		nil,
		{"edit_mode": "full_replacement", "content": "x"},                                                  // no hash
		{"edit_mode": "full_replacement", "original_content_hash": "00001505"},                             // no content
		{"edit_mode": "section_patch", "original_content_hash": "00001505", "target_section_heading": "A"}, // no new content
		{"edit_mode": "merge", "original_content_hash": "00001505", "content": "x"},                        // unknown mode
		{"edit_mode": 3, "original_content_hash": "00001505", "content": "x"},                              // not a string
	} {
		if p, ok := ProposalOf(&models.AgentResponse{Metadata: meta}); ok {
			t.Errorf("%v read as a proposal: %+v", meta, p)
		}
	}
}

func kindsOf(cs []sections.Change) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Kind+" "+c.Name)
	}
	return strings.Join(out, ", ")
}

// A page chat through the service: the page is checked and shown to the
// agent, replies that propose are marked with their edit mode and carry the
// hash of what the agent saw.
func TestSendPageChat(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann, bob := newUser(t, s, "ann"), newUser(t, s, "bob")
	page, err := s.CreatePage(ctx, ann, "Trip", tripPage)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := s.CreatePage(ctx, ann, "Other", "x")
	p := &fakeProvider{exec: func(_ context.Context, req Request) (*models.AgentResponse, error) {
		return (&Builtin{}).Execute(ctx, req, nil)
	}}
	svc := New(s, p, Options{Logger: quiet})

	res, err := svc.Send(ctx, SendRequest{UserID: ann, PageID: &page.ID, AgentType: AgentAuto, Query: `replace section "Plan" with: walk`})
	if err != nil || res.Failed {
		t.Fatalf("send: %+v, %v", res, err)
	}
	seen := p.last(t)
	if seen.AgentType != AgentPageAssistant || seen.Page == nil || seen.Page.Content != tripPage || seen.Page.Title != "Trip" {
		t.Fatalf("the agent was asked %+v", seen)
	}
	ex := res.Exchange
	if ex.Scope != models.ScopePage || ex.PageID == nil || *ex.PageID != page.ID || ex.AgentType != AgentPageAssistant {
		t.Fatalf("exchange %+v", ex)
	}
	if res.Reply.EditMode == nil || *res.Reply.EditMode != models.EditSectionPatch {
		t.Fatalf("reply edit mode %v", res.Reply.EditMode)
	}
	stored, err := s.Message(ctx, ann, res.Reply.ID)
	if err != nil || stored.EditMode == nil || *stored.EditMode != models.EditSectionPatch ||
		stored.AgentResponse.Metadata["original_content_hash"] != DJB2(tripPage) {
		t.Fatalf("stored reply %+v, %v", stored, err)
	}

	// Prose carries no edit mode; the conversation goes on in the same chat.
	res2, err := svc.Send(ctx, SendRequest{UserID: ann, PageID: &page.ID, ExchangeID: ex.ID, Query: "thanks"})
	if err != nil || res2.Exchange.ID != ex.ID || res2.Reply.EditMode != nil {
		t.Fatalf("second turn: %+v, %v", res2, err)
	}

	var ie *InputError
	for _, tc := range []struct {
		name string
		req  SendRequest
		is   func(error) bool
	}{
		{"another user's page", SendRequest{UserID: bob, PageID: &page.ID, Query: "x"}, func(e error) bool { return errors.Is(e, models.ErrNotFound) }},
		{"a missing page", SendRequest{UserID: ann, PageID: ptrTo(int64(999)), Query: "x"}, func(e error) bool { return errors.Is(e, models.ErrNotFound) }},
		{"another page's exchange", SendRequest{UserID: ann, PageID: &other.ID, ExchangeID: ex.ID, Query: "x"}, func(e error) bool { return errors.As(e, &ie) }},
		{"a page exchange without its page", SendRequest{UserID: ann, ExchangeID: ex.ID, Query: "x"}, func(e error) bool { return errors.As(e, &ie) }},
		{"the router on a page", SendRequest{UserID: ann, PageID: &page.ID, AgentType: AgentRouter, Query: "x"}, func(e error) bool { return errors.As(e, &ie) }},
		{"page_assistant without a page", SendRequest{UserID: ann, AgentType: AgentPageAssistant, Query: "x"}, func(e error) bool { return errors.As(e, &ie) }},
	} {
		before := countMessages(t, s)
		if _, err := svc.Send(ctx, tc.req); !tc.is(err) {
			t.Errorf("%s: err %v", tc.name, err)
		}
		if countMessages(t, s) != before {
			t.Errorf("%s: a refused send stored something", tc.name)
		}
	}
}

// A provider's malformed proposal is not stored as one, and a proposal's
// hash is always that of the page the agent was shown.
func TestSendPageChatProposalMetadata(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	page, _ := s.CreatePage(ctx, ann, "P", "## A\na\n")
	meta := map[string]any{}
	p := &fakeProvider{exec: func(context.Context, Request) (*models.AgentResponse, error) {
		m := map[string]any{}
		for k, v := range meta {
			m[k] = v
		}
		return &models.AgentResponse{Content: "here", Metadata: m}, nil
	}}
	svc := New(s, p, Options{Logger: quiet})
	meta = map[string]any{"edit_mode": "full_replacement", "content": "new", "original_content_hash": "deadbeef"}
	res, err := svc.Send(ctx, SendRequest{UserID: ann, PageID: &page.ID, Query: "go"})
	if err != nil || res.Reply.EditMode == nil || res.Reply.AgentResponse.Metadata["original_content_hash"] != DJB2("## A\na\n") {
		t.Fatalf("reply %+v, %v", res.Reply, err)
	}
	meta = map[string]any{"edit_mode": "section_patch", "target_section_heading": "A"}
	res, err = svc.Send(ctx, SendRequest{UserID: ann, PageID: &page.ID, Query: "go"})
	if err != nil || res.Reply.EditMode != nil || res.Reply.AgentResponse.Metadata["edit_mode"] != nil {
		t.Fatalf("a malformed proposal was kept: %+v, %v", res.Reply.AgentResponse.Metadata, err)
	}
}

func ptrTo[T any](v T) *T { return &v }
