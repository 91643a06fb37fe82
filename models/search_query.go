package models

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A search is parsed here, never handed to the engine as typed: whatever a
// person types is a valid search. It is words that must all appear,
// "quoted phrases" whose words must appear in order, and word* prefixes.
// Anything the engines would read as syntax (AND, OR, NOT, NEAR, brackets,
// colons, carets, minus signs, backslashes, stray quotes and stars) is
// taken as plain text: it is split into words on every character that is
// not a letter, a digit or a combining mark, as both engines split text when
// they index it. Each engine's query is then built from those words alone
// (ftsQuery, tsQueryParts), so it can only be a conjunction of quoted
// strings.

// SearchTerm is one part of a search: a word, or a phrase of several words
// that must appear together in this order; Prefix makes its last word a
// prefix.
type SearchTerm struct {
	Words  []string
	Prefix bool
}

// Bounds of a parsed search: a longer one is cut, not refused, so a
// pasted paragraph still searches.
const (
	searchMaxTerms     = 16
	searchMaxWords     = 64 // in all, over the terms
	searchMaxWordRunes = 64
)

// ParseSearch splits q into terms. It returns none when q holds no letter
// or digit at all.
func ParseSearch(q string) []SearchTerm {
	q = strings.ToValidUTF8(q, " ")
	var terms []SearchTerm
	words := 0
	add := func(text string) {
		// A star right after a word makes it a prefix ("abc*", not "abc-*").
		trimmed := strings.TrimRight(text, "*")
		last, _ := utf8.DecodeLastRuneInString(trimmed)
		prefix := trimmed != text && isWordRune(last)
		ws := searchWords(trimmed)
		if len(ws) == 0 || len(terms) == searchMaxTerms || words == searchMaxWords {
			return
		}
		if words+len(ws) > searchMaxWords {
			ws, prefix = ws[:searchMaxWords-words], false
		}
		words += len(ws)
		terms = append(terms, SearchTerm{Words: ws, Prefix: prefix})
	}
	for rest := q; rest != ""; {
		rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
		if rest == "" {
			break
		}
		if rest[0] == '"' {
			body, after, closed := strings.Cut(rest[1:], `"`)
			if closed && strings.HasPrefix(after, "*") {
				body += "*"
				after = strings.TrimLeft(after, "*")
			}
			add(body)
			rest = after
			continue
		}
		end := strings.IndexFunc(rest, func(r rune) bool { return unicode.IsSpace(r) || r == '"' })
		if end < 0 {
			end = len(rest)
		}
		add(rest[:end])
		rest = rest[end:]
	}
	return terms
}

// isWordRune says whether r belongs to a word: a letter, a digit or a mark
// (an accent the tokenizers fold away, a vowel sign of an Indic script).
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r)
}

// searchWords splits text into lower-case words, each cut to
// searchMaxWordRunes.
func searchWords(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !isWordRune(r) }) {
		// A word of marks alone is no word to either tokenizer.
		if strings.IndexFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
			continue
		}
		if utf8.RuneCountInString(w) > searchMaxWordRunes {
			w = string([]rune(w)[:searchMaxWordRunes])
		}
		out = append(out, strings.ToLower(w))
	}
	return out
}

// ftsQuery is the FTS5 query for terms: each term a double-quoted string
// (its words cannot hold a quote), a prefix marked with a star after it,
// all of them required.
func ftsQuery(terms []SearchTerm) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('"')
		b.WriteString(strings.Join(t.Words, " "))
		b.WriteByte('"')
		if t.Prefix {
			b.WriteString(" *")
		}
	}
	return b.String()
}

// ftsIn is the FTS5 query for terms in an index's first column (content,
// reasoning or title; migration 00032: the second is the scope).
func ftsIn(column string, terms []SearchTerm) string {
	return column + " : (" + ftsQuery(terms) + ")"
}

// ftsScope is what an FTS5 query over an index adds to stay in the
// scope (migration 00032: each row's scope column holds its chat as c<id>
// and its chat's owner as u<id>; a title's also its project as p<id>,
// migration 00034, which SQLiteSearchSQL names instead for a project),
// so that the index merges the terms' lists with the scope's instead of
// listing every chat's matches for the join to drop; "" for no scope. It
// is only ever numbers: nothing typed reaches it.
func ftsScope(scope IndexScope) string {
	switch {
	case scope.Chats != nil:
		var b strings.Builder
		b.WriteString(" AND scope : (")
		for i, id := range scope.Chats {
			if i > 0 {
				b.WriteString(" OR ")
			}
			b.WriteString(chatToken(id))
		}
		b.WriteByte(')')
		return b.String()
	case scope.Person != 0:
		return " AND scope : " + personToken(scope.Person)
	}
	return ""
}

// chatToken and personToken are a chat's and a person's tokens in the
// indexes' scope column (indexedScope); projectToken a project's, in the
// titles' index alone (migration 00034).
func chatToken(exchangeID int64) string   { return "c" + strconv.FormatInt(exchangeID, 10) }
func personToken(userID int64) string     { return "u" + strconv.FormatInt(userID, 10) }
func projectToken(projectID int64) string { return "p" + strconv.FormatInt(projectID, 10) }

// tsQueryPart is one term for PostgreSQL: text for phraseto_tsquery, or,
// for a prefix, a query for to_tsquery built of quoted lexemes only.
type tsQueryPart struct {
	text   string
	prefix bool
}

// tsQueryParts turns terms into what PostgreSQL's query functions take.
// Plain terms go through phraseto_tsquery, which reads any text as words;
// a prefix needs to_tsquery's ':*', so its words are quoted there (they hold
// letters, digits and marks only) and chained in order with <->.
func tsQueryParts(terms []SearchTerm) []tsQueryPart {
	out := make([]tsQueryPart, len(terms))
	for i, t := range terms {
		if !t.Prefix {
			out[i] = tsQueryPart{text: strings.Join(t.Words, " ")}
			continue
		}
		quoted := make([]string, len(t.Words))
		for j, w := range t.Words {
			quoted[j] = "'" + w + "'"
		}
		out[i] = tsQueryPart{text: strings.Join(quoted, " <-> ") + ":*", prefix: true}
	}
	return out
}
