package handlers_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"palaver/internal/htmltest"
)

// TestShareAttachments: a shared snapshot's files show on its page and
// open for a signed-out visitor through the link's own route; any other
// file (the owner's other data, another user's, another share's, one of
// an entry after the snapshot) answers 404 there, and so does every file
// once the link is revoked.
func TestShareAttachments(t *testing.T) {
	a, _, alice, bob, visitor, _ := shareApp(t)
	img := alice.mustUpload("dot.png", pngOf(t, 6, 4))
	txt := alice.mustUpload("notes.txt", []byte("alpha\nbeta\n"))
	later := alice.mustUpload("later.txt", []byte("sent after the snapshot"))
	elsewhere := alice.mustUpload("private.txt", []byte("another conversation's"))
	loose := alice.mustUpload("loose.txt", []byte("held by no message"))
	bobs := bob.mustUpload("bob.txt", []byte("bob's"))

	var out apiChatOut
	alice.apiJSON("POST", "/api/chat", map[string]any{"query": "what are these?", "attachments": []int64{img.ID, txt.ID}}, 200, &out)
	ex := *out.ExchangeID
	var other apiChatOut
	alice.apiJSON("POST", "/api/chat", map[string]any{"query": "private", "attachments": []int64{elsewhere.ID}}, 200, &other)
	var bobOut apiChatOut
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "mine", "attachments": []int64{bobs.ID}}, 200, &bobOut)
	a.waitTurns()

	sh := alice.shareCreate(ex, `{"visibility": "link"}`)
	alice.apiJSON("POST", "/api/chat", map[string]any{"query": "one more", "exchange_id": ex, "attachments": []int64{later.ID}}, 200, nil)
	bobShare := bob.shareCreate(*bobOut.ExchangeID, `{"visibility": "link"}`)
	a.waitTurns()

	// The page shows the files, linked through the share's route only.
	page := bodyOf(visitor.get(sh.URL))
	doc := htmltest.Parse(t, page)
	files := htmltest.ByTestID(doc, "attachment")
	if len(files) != 2 {
		t.Fatalf("%d attachments on the share page, want 2:\n%s", len(files), page)
	}
	for i, f := range []fileOut{img, txt} {
		if got, want := mustHref(files[i]), fmt.Sprintf("/s/%s/files/%d", sh.Token, f.ID); got != want {
			t.Errorf("attachment %d links %q, want %q", i, got, want)
		}
	}
	if strings.Contains(page, "/api/files") || strings.Contains(page, "later.txt") {
		t.Error("the share page names the owner's file route or a file after the snapshot")
	}
	if !strings.Contains(page, fmt.Sprintf(`src="/s/%s/files/%d/thumbnail"`, sh.Token, img.ID)) {
		t.Error("the image's thumbnail is not served through the share")
	}

	// Signed out, the files open with the headers of the owner's route.
	get := func(c *client, path string) (*http.Response, []byte) {
		res := c.get(path)
		b, _ := io.ReadAll(res.Body)
		return res, b
	}
	res, b := get(visitor, fmt.Sprintf("/s/%s/files/%d", sh.Token, img.ID))
	if res.StatusCode != 200 || !bytes.Equal(b, pngOf(t, 6, 4)) || res.Header.Get("Content-Type") != "image/png" ||
		res.Header.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(res.Header.Get("Content-Security-Policy"), "sandbox") ||
		res.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("the image: %d %v", res.StatusCode, res.Header)
	}
	res, b = get(visitor, fmt.Sprintf("/s/%s/files/%d", sh.Token, txt.ID))
	if res.StatusCode != 200 || string(b) != "alpha\nbeta\n" || !strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment;") {
		t.Fatalf("the text file: %d %q %v", res.StatusCode, b, res.Header)
	}
	mustStatus(t, visitor.get(fmt.Sprintf("/s/%s/files/%d/thumbnail", sh.Token, img.ID)), 200)
	mustStatus(t, visitor.get(fmt.Sprintf("/s/%s/files/%d/thumbnail", sh.Token, txt.ID)), 404)

	// The JSON names the same files and urls.
	var snap struct {
		Messages []struct {
			Seq         int64 `json:"seq"`
			Attachments []struct {
				ID   int64  `json:"id"`
				Name string `json:"name"`
				URL  string `json:"url"`
			} `json:"attachments"`
		} `json:"messages"`
	}
	visitor.apiJSON("GET", "/api/s/"+sh.Token, nil, 200, &snap)
	if len(snap.Messages) != 2 || len(snap.Messages[0].Attachments) != 2 || snap.Messages[0].Attachments[1].Name != "notes.txt" ||
		snap.Messages[0].Attachments[0].URL != fmt.Sprintf("/s/%s/files/%d", sh.Token, img.ID) || snap.Messages[1].Attachments != nil {
		t.Fatalf("snapshot JSON %+v", snap)
	}

	// Anything else through this share's route: the 404 of an unknown file.
	for what, p := range map[string]string{
		"an entry after the snapshot":    fmt.Sprintf("/s/%s/files/%d", sh.Token, later.ID),
		"the owner's other conversation": fmt.Sprintf("/s/%s/files/%d", sh.Token, elsewhere.ID),
		"the owner's loose file":         fmt.Sprintf("/s/%s/files/%d", sh.Token, loose.ID),
		"another user's file":            fmt.Sprintf("/s/%s/files/%d", sh.Token, bobs.ID),
		"another share's file":           fmt.Sprintf("/s/%s/files/%d", bobShare.Token, img.ID),
		"an unknown file":                fmt.Sprintf("/s/%s/files/%d", sh.Token, bobs.ID+1000),
		"not a number":                   fmt.Sprintf("/s/%s/files/x", sh.Token),
		"a guessed token":                fmt.Sprintf("/s/%s/files/%d", strings.Repeat("A", 32), img.ID),
	} {
		if res := visitor.get(p); res.StatusCode != 404 {
			t.Errorf("%s: %s answers %d", what, p, res.StatusCode)
		}
	}
	mustStatus(t, visitor.get(fmt.Sprintf("/s/%s/files/%d", bobShare.Token, bobs.ID)), 200)

	// A signed-in-only link's files: 404 for a visitor, there for bob.
	users := alice.shareCreate(ex, `{"visibility": "users"}`)
	mustStatus(t, visitor.get(fmt.Sprintf("/s/%s/files/%d", users.Token, img.ID)), 404)
	mustStatus(t, bob.get(fmt.Sprintf("/s/%s/files/%d", users.Token, img.ID)), 200)

	// Revoked: the files go with the link.
	alice.apiJSON("DELETE", fmt.Sprintf("/api/shares/%d", sh.ID), nil, 200, nil)
	for _, id := range []int64{img.ID, txt.ID} {
		mustStatus(t, visitor.get(fmt.Sprintf("/s/%s/files/%d", sh.Token, id)), 404)
	}
	mustStatus(t, visitor.get(fmt.Sprintf("/s/%s/files/%d/thumbnail", sh.Token, img.ID)), 404)
}
