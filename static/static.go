// Package static embeds the browser assets: the built CSS, htmx and its
// websocket extension (copied in by `make assets`, not committed) and
// Palaver's own script and icon.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"path"
)

//go:embed all:dist app.js account.js favicon.svg
var files embed.FS

// Assets serves the embedded files under cache-busting URLs.
type Assets struct {
	fs      fs.FS
	version map[string]string // file name → short content hash
}

// Load indexes the embedded assets by content hash.
func Load() (*Assets, error) {
	a := &Assets{fs: files, version: map[string]string{}}
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Base(p)[0] == '.' {
			return err
		}
		b, err := fs.ReadFile(files, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		a.version[urlName(p)] = hex.EncodeToString(sum[:6])
		return nil
	})
	return a, err
}

// urlName maps an embedded path to its name under /static/.
func urlName(p string) string {
	if dir, name := path.Split(p); dir == "dist/" {
		return name
	}
	return p
}

// URL is the cache-busting address of a named asset ("app.css", "htmx.min.js").
func (a *Assets) URL(name string) string {
	return "/static/" + name + "?v=" + a.version[name]
}

// Version is the content hash a named asset's URL carries.
func (a *Assets) Version(name string) string { return a.version[name] }

// Open returns the content of a named asset, and whether it exists.
func (a *Assets) Open(name string) ([]byte, bool) {
	if _, ok := a.version[name]; !ok {
		return nil, false
	}
	for _, p := range []string{"dist/" + name, name} {
		if b, err := fs.ReadFile(a.fs, p); err == nil {
			return b, true
		}
	}
	return nil, false
}

// Missing lists the assets `make assets` builds that are not embedded, so the
// server can say so at start-up instead of serving unstyled pages silently.
func (a *Assets) Missing() []string {
	var missing []string
	for _, name := range []string{"app.css", "htmx.min.js", "ws.min.js"} {
		if _, ok := a.version[name]; !ok {
			missing = append(missing, name)
		}
	}
	return missing
}
