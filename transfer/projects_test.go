package transfer_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"palaver/transfer"
)

// TestProjectLines: project, instructions and memory lines write and read
// back as they were; the reader refuses one without what a store needs
// (a name, a known source), over the API's limits, or a second
// instructions line, naming the line.
func TestProjectLines(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	parent := transfer.UID{1}
	ex := transfer.UID{9}
	items := []transfer.Item{
		{Project: &transfer.Project{UID: parent, Name: "Garden", Instructions: "Talk about roses.", Memory: true, CreatedAt: at, UpdatedAt: at}},
		{Project: &transfer.Project{UID: transfer.UID{2}, Name: "Beds", ParentUID: &parent, AgentType: "router", CreatedAt: at, UpdatedAt: at}},
		{Instructions: &transfer.Instructions{About: "I keep bees.", Style: "Briefly.", Memory: true, UpdatedAt: at}},
		{Memory: &transfer.Memory{UID: transfer.UID{3}, Content: "Has two hives", Source: "exchange", ExchangeUID: &ex, CreatedAt: at, UpdatedAt: at}},
	}
	var buf bytes.Buffer
	w, err := transfer.NewWriter(&buf, at)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		switch {
		case it.Project != nil:
			err = w.WriteProject(it.Project)
		case it.Instructions != nil:
			err = w.WriteInstructions(it.Instructions)
		case it.Memory != nil:
			err = w.WriteMemory(it.Memory)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := readAll(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i].Where = ""
	}
	if len(got) != len(items) || *got[1].Project.ParentUID != parent || got[2].Instructions.About != "I keep bees." ||
		got[3].Memory.Content != "Has two hives" || *got[3].Memory.ExchangeUID != ex || got[1].Project.AgentType != "router" {
		t.Fatalf("read back %+v", got)
	}

	head := `{"format":"palaver-export","version":1}` + "\n"
	project := func(fields string) string {
		return `{"type":"project","uid":"` + transfer.UID{5}.String() + `",` + fields +
			`"created_at":"2026-12-01T09:00:00Z","updated_at":"2026-12-01T09:00:00Z"}` + "\n"
	}
	memory := `{"type":"memory","uid":"` + transfer.UID{6}.String() + `","content":"x","source":"guess","created_at":"2026-12-01T09:00:00Z"}` + "\n"
	instructions := `{"type":"instructions","about":"a","style":"b","memory":true}` + "\n"
	for _, c := range []struct{ name, data, want string }{
		{"a project without a name", head + project(`"name":"  ",`), "line 2: project has no name"},
		{"a name over 200", head + project(`"name":"`+strings.Repeat("n", 201)+`",`), "line 2: the project's name"},
		{"an unknown agent", head + project(`"name":"x","agent_type":"wizard",`), `line 2: the project's agent_type "wizard"`},
		{"an unknown memory source", head + memory, `line 2: memory entry: unknown source "guess"`},
		{"two instructions lines", head + instructions + instructions, "line 3: a second instructions line"},
	} {
		_, err := transfer.Options{AgentTypes: []string{"auto", "router"}}.NewReader(strings.NewReader(c.data))
		if err != nil {
			t.Fatalf("%s: header: %v", c.name, err)
		}
		r, _ := transfer.Options{AgentTypes: []string{"auto", "router"}}.NewReader(strings.NewReader(c.data))
		var last error
		for {
			if _, last = r.Next(); last != nil {
				break
			}
		}
		if !strings.Contains(last.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, last, c.want)
		}
	}
}
