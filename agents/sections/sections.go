// Package sections reads a Markdown page as Galaxy's page assistant does, as
// a flat list of sections, and patches it one section at a time.
//
// The model: a line that starts with 1 to 6 '#' followed by a space (or a
// tab) is a heading and starts a section, which runs to the next heading;
// sections do not nest; text before the first heading is the preamble. Fixed
// against Galaxy's version:
//   - headings compare ignoring surrounding and repeated whitespace (and a
//     closing run of '#'), and a target given without '#' matches a heading of
//     any level with the same text;
//   - a '#' line inside a fenced code block (``` or ~~~) starts no section;
//   - CRLF content works: line breaks are kept as the page has them, and new
//     text takes the page's line ending;
//   - a target that matches nothing is appended as a new section.
//
// Duplicate headings: a target names the first matching heading in document
// order (exact matches before case-insensitive ones).
package sections

import (
	"fmt"
	"strings"
)

// Preamble names the text before the first heading, in change lists and in
// the section names a client may choose.
const Preamble = "(preamble)"

// Section is one section of a document: doc[Start:End], line breaks included.
// Concatenating a document's sections in order gives the document back.
type Section struct {
	Start, End int
	Heading    string // the heading line without its line break; "" for the preamble
	Level      int    // 1–6; 0 for the preamble
	Title      string // the heading's text, whitespace collapsed; "" for the preamble
}

// IsPreamble says whether s is the text before the first heading.
func (s Section) IsPreamble() bool { return s.Level == 0 }

// Name is how a person reads the section: its level and text ("## Intro"),
// or "(preamble)".
func (s Section) Name() string {
	if s.IsPreamble() {
		return Preamble
	}
	return strings.TrimSpace(strings.Repeat("#", s.Level) + " " + s.Title)
}

// Text is the section's bytes in doc.
func (s Section) Text(doc string) string { return doc[s.Start:s.End] }

// Parse splits doc into sections. The preamble is present only when there
// is text before the first heading; an empty doc has no sections.
func Parse(doc string) []Section {
	var out []Section
	var f fence
	start := 0
	for pos := 0; pos < len(doc); {
		end := lineEnd(doc, pos)
		line := trimEOL(doc[pos:end])
		if f.open {
			f.feed(line)
		} else if level, title, ok := heading(line); ok {
			if pos > start || len(out) > 0 {
				closeLast(&out, start, pos)
			}
			out = append(out, Section{Start: pos, Heading: line, Level: level, Title: title})
			start = pos
		} else {
			f.feed(line)
		}
		pos = end
	}
	if len(doc) > start || len(out) > 0 {
		closeLast(&out, start, len(doc))
	}
	return out
}

// closeLast ends the open section at end, or records the preamble [start,end).
func closeLast(out *[]Section, start, end int) {
	if n := len(*out); n > 0 && (*out)[n-1].Start == start {
		(*out)[n-1].End = end
		return
	}
	*out = append(*out, Section{Start: start, End: end})
}

// lineEnd is the index just after the line that starts at pos (after its
// "\n", or the end of doc).
func lineEnd(doc string, pos int) int {
	if i := strings.IndexByte(doc[pos:], '\n'); i >= 0 {
		return pos + i + 1
	}
	return len(doc)
}

// trimEOL drops a line's "\n" or "\r\n".
func trimEOL(line string) string {
	line = strings.TrimSuffix(line, "\n")
	return strings.TrimSuffix(line, "\r")
}

// heading reads an ATX heading line: 1–6 '#', a space or tab, the text.
func heading(line string) (level int, title string, ok bool) {
	n := 0
	for n < len(line) && n < 7 && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n == len(line) || (line[n] != ' ' && line[n] != '\t') {
		return 0, "", false
	}
	return n, headingText(line[n:]), true
}

// headingText is a heading's text: whitespace collapsed, without the optional
// closing run of '#' ("## Intro ##" is "Intro"; "## C#" stays "C#").
func headingText(s string) string {
	f := strings.Fields(s)
	if len(f) > 0 && strings.Trim(f[len(f)-1], "#") == "" {
		f = f[:len(f)-1]
	}
	return strings.Join(f, " ")
}

// fence tracks fenced code blocks, in which '#' lines are code, not headings.
type fence struct {
	open  bool
	char  byte
	count int
}

// feed updates the fence state with a line outside any heading.
func (f *fence) feed(line string) {
	s := strings.TrimLeft(line, " \t")
	if len(s) < 3 || (s[0] != '`' && s[0] != '~') {
		return
	}
	c, n := s[0], 0
	for n < len(s) && s[n] == c {
		n++
	}
	if n < 3 {
		return
	}
	rest := s[n:]
	if f.open {
		if c == f.char && n >= f.count && strings.TrimSpace(rest) == "" {
			f.open = false
		}
		return
	}
	if c == '`' && strings.ContainsRune(rest, '`') {
		return // not a fence: a backtick fence's info string has no backtick
	}
	*f = fence{open: true, char: c, count: n}
}

// closer is the line that closes the open fence.
func (f *fence) closer() string { return strings.Repeat(string(f.char), f.count) }

// openFence reports the fence left open at the end of text, if any.
func openFence(text string) (fence, bool) {
	var f fence
	for pos := 0; pos < len(text); {
		end := lineEnd(text, pos)
		line := trimEOL(text[pos:end])
		if f.open {
			f.feed(line)
		} else if _, _, ok := heading(line); !ok {
			f.feed(line)
		}
		pos = end
	}
	return f, f.open
}

// target is a parsed section name: "## Intro" or "Intro" (any level).
type target struct {
	level int // 0: any level
	title string
}

func parseTarget(name string) target {
	name = strings.Join(strings.Fields(name), " ")
	if level, title, ok := heading(name); ok {
		return target{level: level, title: title}
	}
	if n := len(name); n >= 1 && n <= 6 && strings.Trim(name, "#") == "" {
		return target{level: n} // "##": a heading with no text
	}
	return target{title: name}
}

// Find is the index of the section that target names, or -1. A target
// compares ignoring surrounding and repeated whitespace; with '#'s it names
// that level, without it any level. Among several matches the first in the
// document wins, preferring in turn: the same level and text, the same
// level and text ignoring case, then (for a target whose level is wrong) the
// same text, exactly or ignoring case. The preamble is never a target.
func Find(secs []Section, name string) int {
	tg := parseTarget(name)
	tiers := []func(s Section) bool{
		func(s Section) bool { return (tg.level == 0 || s.Level == tg.level) && s.Title == tg.title },
		func(s Section) bool {
			return (tg.level == 0 || s.Level == tg.level) && strings.EqualFold(s.Title, tg.title)
		},
		func(s Section) bool { return s.Title == tg.title },
		func(s Section) bool { return strings.EqualFold(s.Title, tg.title) },
	}
	for _, match := range tiers {
		for i, s := range secs {
			if !s.IsPreamble() && match(s) {
				return i
			}
		}
	}
	return -1
}

// LineEnding is the page's line break: that of its first line, "\n" when it
// has none.
func LineEnding(doc string) string {
	if i := strings.IndexByte(doc, '\n'); i > 0 && doc[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// WithLineEnding rewrites text's line breaks as eol.
func WithLineEnding(text, eol string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if eol == "\n" {
		return text
	}
	return strings.ReplaceAll(text, "\n", eol)
}

// Patch replaces the section that target names with content, leaving every
// other section byte for byte as it was. content is the whole new section,
// heading line included; when it does not start with a heading, the
// target's heading line is put first, so the text can never run into the
// section before it. The replaced section's trailing blank lines are kept
// (they separate it from the next one); a fence content leaves open is
// closed, so it cannot swallow the sections after it; content that is blank
// removes the section. A target that matches nothing is appended as a new
// section at the end.
func Patch(doc, name, content string) string {
	secs := Parse(doc)
	eol := LineEnding(doc)
	i := Find(secs, name)
	if i < 0 {
		return appendSection(doc, eol, newSection(content, DefaultHeading(name), eol))
	}
	s := secs[i]
	core := newSection(content, s.Heading, eol)
	if core == "" {
		return doc[:s.Start] + doc[s.End:]
	}
	text := s.Text(doc)
	tail := text[len(strings.TrimRight(text, " \t\r\n")):]
	if j := strings.IndexByte(tail, '\n'); j >= 0 {
		tail = eolBefore(tail, j) + tail[j+1:] // from the first line break on
	} else {
		tail = ""
	}
	if tail == "" && s.End < len(doc) {
		tail = eol // cannot happen (a heading starts a line), but never glue lines
	}
	return doc[:s.Start] + core + tail + doc[s.End:]
}

// eolBefore is the line break that ends at index j (the '\n') of s.
func eolBefore(s string, j int) string {
	if j > 0 && s[j-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// DefaultHeading is the heading line a new section gets from its target
// name: the name itself when it is a heading, else a level-2 heading.
func DefaultHeading(name string) string {
	name = strings.Join(strings.Fields(name), " ")
	if _, _, ok := heading(name); ok {
		return name
	}
	return "## " + name
}

// newSection shapes content as a section of the page: leading blank lines
// and trailing whitespace dropped, the page's line ending, headingLine first
// when content does not start with a heading, a fence it leaves open closed.
// It has no final line break. Blank content gives "".
func newSection(content, headingLine, eol string) string {
	content = strings.TrimRight(WithLineEnding(content, "\n"), " \t\r\n")
	for {
		first, rest, found := strings.Cut(content, "\n")
		if !found || strings.TrimSpace(first) != "" {
			break
		}
		content = rest
	}
	if strings.TrimSpace(content) == "" {
		return ""
	}
	first, _, _ := strings.Cut(content, "\n")
	if _, _, ok := heading(strings.TrimSuffix(first, "\r")); !ok {
		content = headingLine + "\n" + content
	}
	if f, open := openFence(content); open {
		content += "\n" + f.closer()
	}
	return WithLineEnding(content, eol)
}

// appendSection adds a section (without final line break) at the end of doc,
// after a blank line, closing a fence the doc leaves open, and ends the doc
// with a line break.
func appendSection(doc, eol, section string) string {
	if section == "" {
		return doc
	}
	if doc == "" {
		return section + eol
	}
	if f, open := openFence(doc); open {
		doc = ensureEOL(doc, eol) + f.closer()
	}
	doc = ensureEOL(doc, eol)
	if strings.TrimSpace(lastLine(doc)) != "" {
		doc += eol
	}
	return doc + section + eol
}

// ensureEOL ends text with a line break.
func ensureEOL(text, eol string) string {
	if text == "" || strings.HasSuffix(text, "\n") {
		return text
	}
	return text + eol
}

// lastLine is the last line of text that ends with a line break.
func lastLine(text string) string {
	text = strings.TrimSuffix(text, "\n")
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		return text[i+1:]
	}
	return text
}

// Change kinds.
const (
	Changed = "changed"
	Added   = "new"
	Removed = "removed"
)

// Change is one section that differs between two versions of a page.
type Change struct {
	Kind   string // Changed, Added or Removed
	Name   string // the heading (of the new version, unless removed), or "(preamble)"
	Before string // the section's text before ("" when added)
	After  string // and after ("" when removed)
	key    string
}

// Key identifies the change's section among those of both versions.
func (c Change) Key() string { return c.key }

// keyed is a section with its alignment key, which the same section has in
// both versions of a page.
type keyed struct {
	Section
	key  string
	text string
}

// heading base: a section's level and text ("P" for the preamble).
func base(s Section) string {
	if s.IsPreamble() {
		return "P"
	}
	return fmt.Sprintf("%d %s", s.Level, s.Title)
}

// align keys the sections of two versions of a page so that a section keeps
// its key from one to the other. Sections align by level and heading text;
// among duplicates, those whose text is the same pair first, then the rest
// in order. Sections left unpaired are new (in after) or removed (in before).
func align(before, after string) (b, a []keyed) {
	wrap := func(doc string) []keyed {
		secs := Parse(doc)
		out := make([]keyed, len(secs))
		for i, s := range secs {
			out[i] = keyed{Section: s, text: s.Text(doc)}
		}
		return out
	}
	b, a = wrap(before), wrap(after)
	groupB, groupA := map[string][]int{}, map[string][]int{}
	for i, s := range b {
		groupB[base(s.Section)] = append(groupB[base(s.Section)], i)
	}
	for i, s := range a {
		groupA[base(s.Section)] = append(groupA[base(s.Section)], i)
	}
	for i := range a {
		g := base(a[i].Section)
		if a[i].key != "" || len(groupA[g]) == 0 {
			continue
		}
		ai, bi := groupA[g], groupB[g]
		pair := map[int]int{} // index in a → index in b
		used := map[int]bool{}
		for _, x := range ai { // the same text first
			for _, y := range bi {
				if !used[y] && same(a[x].text, b[y].text) {
					pair[x], used[y] = y, true
					break
				}
			}
		}
		var restB []int
		for _, y := range bi {
			if !used[y] {
				restB = append(restB, y)
			}
		}
		for _, x := range ai { // then in order
			if _, ok := pair[x]; !ok && len(restB) > 0 {
				pair[x], used[restB[0]] = restB[0], true
				restB = restB[1:]
			}
		}
		for n, x := range ai {
			if y, ok := pair[x]; ok {
				a[x].key = fmt.Sprintf("%s#%d", g, n)
				b[y].key = a[x].key
			} else {
				a[x].key = fmt.Sprintf("%s#new%d", g, n)
			}
		}
	}
	for i := range b {
		if b[i].key == "" {
			b[i].key = fmt.Sprintf("%s#old%d", base(b[i].Section), i)
		}
	}
	return b, a
}

// same says whether two versions of a section read the same: trailing
// whitespace (the blank lines before the next heading) does not count.
func same(a, b string) bool {
	return strings.TrimRight(a, " \t\r\n") == strings.TrimRight(b, " \t\r\n")
}

// Compare lists the sections that differ from before to after, in the order
// of after (removed ones where they stood): changed, new and removed
// sections. Sections align by level and heading text, duplicates in order.
func Compare(before, after string) []Change {
	b, a := align(before, after)
	inA := map[string]keyed{}
	for _, s := range a {
		inA[s.key] = s
	}
	inB := map[string]keyed{}
	for _, s := range b {
		inB[s.key] = s
	}
	var out []Change
	bi := 0
	flushRemoved := func(until string) {
		for bi < len(b) && b[bi].key != until {
			if _, ok := inA[b[bi].key]; !ok {
				out = append(out, Change{Kind: Removed, Name: b[bi].Name(), Before: b[bi].text, key: b[bi].key})
			}
			bi++
		}
	}
	for _, s := range a {
		old, ok := inB[s.key]
		if !ok {
			out = append(out, Change{Kind: Added, Name: s.Name(), After: s.text, key: s.key})
			continue
		}
		// Removed sections that stood before this one in the old version.
		for j := bi; j < len(b); j++ {
			if b[j].key == s.key {
				flushRemoved(s.key)
				bi = j + 1
				break
			}
		}
		if !same(old.text, s.text) {
			out = append(out, Change{Kind: Changed, Name: s.Name(), Before: old.text, After: s.text, key: s.key})
		}
	}
	flushRemoved("")
	return out
}

// Select picks the changes that names name. A name is a change's Key (which
// tells duplicate headings apart: the editor's checkboxes post it), a
// heading (with or without '#', whitespace-insensitive) or "(preamble)"; a
// heading picks every change with that heading, compared exactly, or
// ignoring case when nothing matches exactly. A name that picks nothing is
// returned in unknown.
func Select(changes []Change, names []string) (picked []Change, unknown []string) {
	chosen := map[string]bool{}
	for _, n := range names {
		hit := false
		for _, c := range changes {
			if c.key == n {
				chosen[c.key], hit = true, true
			}
		}
		for _, fold := range []bool{false, true} {
			if hit {
				break
			}
			for _, c := range changes {
				if matchesName(c, n, fold) {
					chosen[c.key], hit = true, true
				}
			}
		}
		if !hit {
			unknown = append(unknown, n)
		}
	}
	for _, c := range changes {
		if chosen[c.key] {
			picked = append(picked, c)
		}
	}
	return picked, unknown
}

// matchesName says whether a chosen name designates change c.
func matchesName(c Change, name string, fold bool) bool {
	isPreamble := strings.HasPrefix(c.key, "P#")
	if strings.TrimSpace(name) == Preamble || isPreamble {
		return strings.TrimSpace(name) == Preamble && isPreamble
	}
	tg, own := parseTarget(name), parseTarget(c.Name)
	if tg.level != 0 && tg.level != own.level {
		return false
	}
	if fold {
		return strings.EqualFold(own.title, tg.title)
	}
	return own.title == tg.title
}

// Merge applies the chosen changes (from Compare(before, after)) to before
// and leaves every other section of before as it is: a changed section
// takes its new text, a removed one goes, a new one is placed after the
// section it follows in after (after the preamble at the latest), with a
// blank line before it.
func Merge(before, after string, chosen []Change) string {
	if len(chosen) == 0 {
		return before
	}
	eol := LineEnding(before)
	pick := map[string]Change{}
	for _, c := range chosen {
		pick[c.key] = c
	}
	type piece struct {
		key, text string
		added     bool
	}
	b, a := align(before, after)
	var out []piece
	for _, s := range b {
		c, ok := pick[s.key]
		switch {
		case ok && c.Kind == Removed:
			continue
		case ok && c.Kind == Changed:
			out = append(out, piece{key: s.key, text: c.After})
		default:
			out = append(out, piece{key: s.key, text: s.text})
		}
	}
	for i, s := range a {
		if c, ok := pick[s.key]; !ok || c.Kind != Added {
			continue
		}
		at := 0
		if !s.IsPreamble() {
			if len(out) > 0 && strings.HasPrefix(out[0].key, "P#") {
				at = 1 // a section put before the preamble would swallow it
			}
			for j := i - 1; j >= 0; j-- {
				if k := indexOf(len(out), func(n int) bool { return out[n].key == a[j].key }); k >= 0 {
					at = k + 1
					break
				}
			}
		}
		p := piece{key: s.key, text: s.text, added: true}
		out = append(out[:at], append([]piece{p}, out[at:]...)...)
	}
	var doc strings.Builder
	for i, p := range out {
		text := p.text
		if i < len(out)-1 {
			if f, open := openFence(text); open {
				text = ensureEOL(text, eol) + f.closer()
			}
			text = ensureEOL(text, eol)
			if out[i+1].added && strings.TrimSpace(lastLine(text)) != "" {
				text += eol
			}
		}
		doc.WriteString(text)
	}
	return doc.String()
}

func indexOf(n int, match func(int) bool) int {
	for i := 0; i < n; i++ {
		if match(i) {
			return i
		}
	}
	return -1
}
