package sections

import (
	"reflect"
	"strings"
	"testing"
)

// names lists the sections of doc by name, with their text.
func names(doc string) [][2]string {
	var out [][2]string
	for _, s := range Parse(doc) {
		out = append(out, [2]string{s.Name(), s.Text(doc)})
	}
	return out
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		want [][2]string
	}{
		{"empty", "", nil},
		{"preamble only", "just text\nmore\n", [][2]string{{Preamble, "just text\nmore\n"}}},
		{"preamble then sections", "intro\n\n# A\na\n## B\nb\n", [][2]string{
			{Preamble, "intro\n\n"}, {"# A", "# A\na\n"}, {"## B", "## B\nb\n"}}},
		{"no preamble", "# A\na", [][2]string{{"# A", "# A\na"}}},
		{"heading levels 1 to 6, not 7", "# 1\n###### 6\n####### 7\n", [][2]string{
			{"# 1", "# 1\n"}, {"###### 6", "###### 6\n####### 7\n"}}},
		{"needs a space after the #s", "#A\n#\n##\tTab\n", [][2]string{
			{Preamble, "#A\n#\n"}, {"## Tab", "##\tTab\n"}}},
		{"flat: deeper headings are sections too", "# A\n## A.1\n# B\n", [][2]string{
			{"# A", "# A\n"}, {"## A.1", "## A.1\n"}, {"# B", "# B\n"}}},
		{"duplicate headings are separate sections", "## N\n1\n## N\n2\n", [][2]string{
			{"## N", "## N\n1\n"}, {"## N", "## N\n2\n"}}},
		{"# in a backtick fence is code", "# A\n```sh\n# not a heading\n```\n# B\n", [][2]string{
			{"# A", "# A\n```sh\n# not a heading\n```\n"}, {"# B", "# B\n"}}},
		{"# in a tilde fence is code", "# A\n~~~~\n# no\n~~~\n# still code\n~~~~\n# B\n", [][2]string{
			{"# A", "# A\n~~~~\n# no\n~~~\n# still code\n~~~~\n"}, {"# B", "# B\n"}}},
		{"an unclosed fence runs to the end", "# A\n```\n# no\n", [][2]string{{"# A", "# A\n```\n# no\n"}}},
		{"a backtick in the info string is no fence", "# A\n``` a`b\n# B\n", [][2]string{
			{"# A", "# A\n``` a`b\n"}, {"# B", "# B\n"}}},
		{"indented fence", "# A\n  ```\n# no\n  ```\n# B\n", [][2]string{
			{"# A", "# A\n  ```\n# no\n  ```\n"}, {"# B", "# B\n"}}},
		{"CRLF", "pre\r\n# A\r\na\r\n# B\r\n", [][2]string{
			{Preamble, "pre\r\n"}, {"# A", "# A\r\na\r\n"}, {"# B", "# B\r\n"}}},
		{"closing #s and spaces", "##   Intro   ##  \n", [][2]string{{"## Intro", "##   Intro   ##  \n"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(tc.doc); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Parse(%q)\n got %q\nwant %q", tc.doc, got, tc.want)
			}
		})
	}
	if s := Parse("##   Intro   ##  \n")[0]; s.Title != "Intro" || s.Level != 2 {
		t.Fatalf("closing #s: title %q level %d", s.Title, s.Level)
	}
	if s := Parse("## C#\n")[0]; s.Title != "C#" {
		t.Fatalf("a # inside the text is kept: %q", s.Title)
	}
}

func TestFind(t *testing.T) {
	doc := "pre\n# Intro\n## Setup   Steps\n### intro\n## Notes\n## Notes\n"
	secs := Parse(doc)
	for _, tc := range []struct {
		target string
		want   string // the heading line found, "" for none
		index  int
	}{
		{"# Intro", "# Intro", 1},
		{"Intro", "# Intro", 1},                    // no #: any level
		{"  #   Intro  ", "# Intro", 1},            // whitespace ignored
		{"Setup Steps", "## Setup   Steps", 2},     // repeated inner whitespace
		{"## Setup\tSteps", "## Setup   Steps", 2}, // tabs too
		{"### Intro", "### intro", 3},              // the level decides before the case
		{"intro", "### intro", 3},                  // exact text before case-folded
		{"INTRO", "# Intro", 1},                    // case-insensitive as a last resort
		{"Notes", "## Notes", 4},                   // duplicates: the first
		{"#### Intro", "# Intro", 1},               // a wrong level still finds the text
		{"Missing", "", -1},                        // nothing
		{"pre", "", -1},                            // the preamble is no target
		{Preamble, "", -1},                         //
		{"", "", -1},                               //
	} {
		got := Find(secs, tc.target)
		if got != tc.index {
			t.Errorf("Find(%q) = %d, want %d (%s)", tc.target, got, tc.index, tc.want)
			continue
		}
		if got >= 0 && secs[got].Heading != tc.want {
			t.Errorf("Find(%q) found %q, want %q", tc.target, secs[got].Heading, tc.want)
		}
	}
}

func TestPatch(t *testing.T) {
	for _, tc := range []struct {
		name, doc, target, content, want string
	}{
		{"replace a middle section, keeping its blank line",
			"# T\n\n## A\nold a\n\n## B\nb\n", "A", "## A\nnew a",
			"# T\n\n## A\nnew a\n\n## B\nb\n"},
		{"replace the last section without final newline",
			"## A\na\n## B\nold", "## B", "## B\nnew\n\n\n",
			"## A\na\n## B\nnew"},
		{"the preamble stays",
			"preamble text\n\n## A\na\n", "A", "## A\nz",
			"preamble text\n\n## A\nz\n"},
		{"content without its heading gets the target's",
			"## A\na\n## B\nb\n", "a", "just text",
			"## A\njust text\n## B\nb\n"},
		{"content with another heading renames it",
			"## A\na\n## B\nb\n", "A", "### Alpha\nx",
			"### Alpha\nx\n## B\nb\n"},
		{"duplicate headings: the first is replaced",
			"## N\n1\n## N\n2\n", "N", "## N\none",
			"## N\none\n## N\n2\n"},
		{"whitespace-insensitive target",
			"##   Big   Plan  \nold\n", "## Big Plan", "## Big Plan\nnew",
			"## Big Plan\nnew\n"},
		{"target without # matches any level",
			"#### Deep\nold\n", "Deep", "#### Deep\nnew",
			"#### Deep\nnew\n"},
		{"a # in a code fence is not a target",
			"## A\n```\n# B\n```\n", "B", "# B\nnew",
			"## A\n```\n# B\n```\n\n# B\nnew\n"},
		{"missing heading is appended after a blank line",
			"## A\na\n", "Z", "## Z\nz",
			"## A\na\n\n## Z\nz\n"},
		{"missing heading without # becomes level 2",
			"## A\na", "Zed", "zed text",
			"## A\na\n\n## Zed\nzed text\n"},
		{"missing heading on an empty page",
			"", "# Title", "hello",
			"# Title\nhello\n"},
		{"append closes a fence the page leaves open",
			"## A\n```\ncode", "Z", "## Z\nz",
			"## A\n```\ncode\n```\n\n## Z\nz\n"},
		{"a fence the content leaves open is closed",
			"## A\na\n## B\nb\n", "A", "## A\n~~~~\n# x",
			"## A\n~~~~\n# x\n~~~~\n## B\nb\n"},
		{"CRLF page: new text takes CRLF",
			"## A\r\nold\r\n\r\n## B\r\nb\r\n", "A", "## A\nnew\nlines",
			"## A\r\nnew\r\nlines\r\n\r\n## B\r\nb\r\n"},
		{"CRLF page: append",
			"## A\r\na\r\n", "Z", "z",
			"## A\r\na\r\n\r\n## Z\r\nz\r\n"},
		{"blank content removes the section",
			"## A\na\n## B\nb\n", "A", " \n\n",
			"## B\nb\n"},
		{"blank content for a missing target changes nothing",
			"## A\na\n", "Z", "",
			"## A\na\n"},
		{"leading blank lines of the content are dropped",
			"## A\na\n", "A", "\n\n## A\nx",
			"## A\nx\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Patch(tc.doc, tc.target, tc.content); got != tc.want {
				t.Fatalf("Patch(%q, %q, %q)\n got %q\nwant %q", tc.doc, tc.target, tc.content, got, tc.want)
			}
		})
	}
}

func TestLineEnding(t *testing.T) {
	for doc, want := range map[string]string{"": "\n", "a": "\n", "a\nb\r\n": "\n", "a\r\nb\n": "\r\n", "\r\n": "\r\n"} {
		if got := LineEnding(doc); got != want {
			t.Errorf("LineEnding(%q) = %q, want %q", doc, got, want)
		}
	}
}

func kinds(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Kind+" "+c.Name)
	}
	return out
}

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name, before, after string
		want                []string
	}{
		{"nothing", "## A\na\n", "## A\na\n", nil},
		{"trailing blank lines do not count", "## A\na\n", "## A\na\n\n\n", nil},
		{"changed", "p\n## A\na\n## B\nb\n", "p\n## A\nz\n## B\nb\n", []string{"changed ## A"}},
		{"preamble changed", "p\n## A\na\n", "q\n## A\na\n", []string{"changed (preamble)"}},
		{"new at the end", "## A\na\n", "## A\na\n\n## Z\nz\n", []string{"new ## Z"}},
		{"renamed: removed and new, in place", "## A\na\n## B\nb\n", "### Alpha\nx\n## B\nb\n",
			[]string{"new ### Alpha", "removed ## A"}},
		{"removed", "## A\na\n## B\nb\n## C\nc\n", "## A\na\n## C\nc\n", []string{"removed ## B"}},
		{"several", "## A\na\n## B\nb\n", "## A\nA!\n## A2\nx\n## B\nb\n", []string{"changed ## A", "new ## A2"}},
		{"duplicates align in order", "## N\n1\n## N\n2\n", "## N\n1\n## N\ntwo\n", []string{"changed ## N"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := kinds(Compare(tc.before, tc.after)); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Compare\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestSelect(t *testing.T) {
	cs := Compare("p\n## A\na\n## B\nb\n", "q\n## A\nz\n## B\ny\n## C\nc\n")
	for _, tc := range []struct {
		names   []string
		want    []string
		unknown []string
	}{
		{[]string{"## A"}, []string{"changed ## A"}, nil},
		{[]string{"A", " ##  C "}, []string{"changed ## A", "new ## C"}, nil},
		{[]string{"b"}, []string{"changed ## B"}, nil}, // case-insensitive when nothing matches exactly
		{[]string{Preamble}, []string{"changed (preamble)"}, nil},
		{[]string{"### A"}, nil, []string{"### A"}}, // wrong level
		{[]string{"Nope", "A"}, []string{"changed ## A"}, []string{"Nope"}},
	} {
		got, unknown := Select(cs, tc.names)
		if !reflect.DeepEqual(kinds(got), tc.want) || !reflect.DeepEqual(unknown, tc.unknown) {
			t.Errorf("Select(%q) = %q, unknown %q; want %q, %q", tc.names, kinds(got), unknown, tc.want, tc.unknown)
		}
	}
}

// Duplicate headings: sections with the same text pair first, so a copy
// moved down is no change; a heading picks all its changes, a key just one.
func TestSelectDuplicates(t *testing.T) {
	before := "## A\na\n## B\nb\n"
	after := Patch(before, "A", "## A\nA!\n## B\nnew b")
	if got := kinds(Compare(before, after)); !reflect.DeepEqual(got, []string{"changed ## A", "new ## B"}) {
		t.Fatalf("changes %q", got)
	}
	before = "## B\n1\n## B\n2\n"
	after = "## B\nx\n## B\ny\n"
	cs := Compare(before, after)
	if got := kinds(cs); !reflect.DeepEqual(got, []string{"changed ## B", "changed ## B"}) || cs[0].Key() == cs[1].Key() {
		t.Fatalf("changes %q", got)
	}
	if got, _ := Select(cs, []string{"## B"}); len(got) != 2 {
		t.Fatalf("a heading picks %d changes", len(got))
	}
	got, unknown := Select(cs, []string{cs[1].Key()})
	if len(got) != 1 || got[0].After != "## B\ny\n" || unknown != nil {
		t.Fatalf("a key picks %q, unknown %q", kinds(got), unknown)
	}
	if merged := Merge(before, after, got); merged != "## B\n1\n## B\ny\n" {
		t.Fatalf("merged %q", merged)
	}
}

func TestMerge(t *testing.T) {
	before := "p\n## A\na\n\n## B\nb\n\n## C\nc\n"
	after := "q\n## A\nA!\n\n## A2\nx\n\n## B\nb\n"
	cs := Compare(before, after)
	if got := kinds(cs); !reflect.DeepEqual(got, []string{"changed (preamble)", "changed ## A", "new ## A2", "removed ## C"}) {
		t.Fatalf("changes %q", got)
	}
	pick := func(names ...string) []Change {
		got, unknown := Select(cs, names)
		if unknown != nil {
			t.Fatalf("unknown %q", unknown)
		}
		return got
	}
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{nil, before},
		{[]string{"A"}, "p\n## A\nA!\n\n## B\nb\n\n## C\nc\n"},
		{[]string{"A2"}, "p\n## A\na\n\n## A2\nx\n\n## B\nb\n\n## C\nc\n"},
		{[]string{"C"}, "p\n## A\na\n\n## B\nb\n\n"},
		{[]string{Preamble, "A2"}, "q\n## A\na\n\n## A2\nx\n\n## B\nb\n\n## C\nc\n"},
	} {
		if got := Merge(before, after, pick(tc.names...)); got != tc.want {
			t.Errorf("Merge %q\n got %q\nwant %q", tc.names, got, tc.want)
		}
	}
	// All of them: the same sections as after.
	if left := Compare(Merge(before, after, cs), after); len(left) != 0 {
		t.Fatalf("merging every change leaves %q", kinds(left))
	}
	// A new section after a last section without line break, on a CRLF page.
	b2 := "## A\r\na"
	a2 := Patch(b2, "Z", "z")
	if got := Merge(b2, a2, Compare(b2, a2)); got != "## A\r\na\r\n\r\n## Z\r\nz\r\n" {
		t.Fatalf("CRLF merge: %q", got)
	}
	// A new section never goes in front of the preamble.
	b3 := "intro\n## B\nb\n"
	a3 := "intro\n## New\nn\n## B\nb\n"
	if got := Merge(b3, a3, Compare(b3, a3)); !strings.HasPrefix(got, "intro\n") || Find(Parse(got), "New") < 0 {
		t.Fatalf("new section before the preamble: %q", got)
	}
}
