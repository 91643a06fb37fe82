package transfertest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Comb is a ChatGPT conversations.json of one conversation whose current
// path is n turns under a long first question (96,000 characters), each
// answer with a second, regenerated one beside it: every one of those n
// branches becomes a fork that copies the path before it, the long
// question included, so the file stores about n times its own size (the
// issue's "comb" tree).
func Comb(n int) []byte {
	var b strings.Builder
	node := func(id, parent, role, text string, children ...string) {
		parentJSON := "null"
		if parent != "" {
			parentJSON = fmt.Sprintf("%q", parent)
		}
		kids, _ := json.Marshal(children)
		fmt.Fprintf(&b, `%q:{"parent":%s,"children":%s,"message":{"author":{"role":%q},"create_time":1700000000,"content":{"content_type":"text","parts":[%q]}}},`,
			id, parentJSON, kids, role, text)
	}
	fmt.Fprintf(&b, `[{"id":"comb","title":"comb","create_time":1700000000,"current_node":"a%d","mapping":{`, n-1)
	for i := range n {
		q, a, alt := fmt.Sprintf("q%d", i), fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)
		text, parent := "again?", fmt.Sprintf("a%d", i-1)
		if i == 0 {
			text, parent = strings.Repeat("a long question ", 6000), ""
		}
		node(q, parent, "user", text, alt, a)
		var kids []string
		if i < n-1 {
			kids = []string{fmt.Sprintf("q%d", i+1)}
		}
		node(a, q, "assistant", "yes", kids...)
		node(alt, q, "assistant", "no")
	}
	return []byte(strings.TrimSuffix(b.String(), ",") + `}}]`)
}
