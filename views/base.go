// Package views holds Palaver's templ components and the view models they
// render. Views never call the store: package screens builds the view
// models from it, and the handlers and the live connection render them.
package views

// AssetURLs gives the cache-busting address of a static asset.
type AssetURLs interface {
	URL(name string) string
}

// Base is what every full page needs: who is signed in, the CSRF token, the
// asset addresses and which part of the app is showing.
type Base struct {
	Title  string
	User   *User // nil when signed out
	CSRF   string
	Assets AssetURLs
	Nav    string // "chat", "pages" or "admin": the highlighted nav item
	// SkipTo and SkipLabel are the skip link's target and words (default:
	// the main region, "Skip to the content"); see SkippingTo.
	SkipTo, SkipLabel string
	// NoIndex asks search engines to leave the page out (share links).
	NoIndex bool
}

// SkippingTo is b with its skip link going to the element with id target.
func (b Base) SkippingTo(target, label string) Base {
	b.SkipTo, b.SkipLabel = "#"+target, label
	return b
}

// skip is the skip link's target and words.
func (b Base) skip() (string, string) {
	if b.SkipTo == "" {
		return "#main", "Skip to the content"
	}
	return b.SkipTo, b.SkipLabel
}

// User is the signed-in account as the chrome shows it.
type User struct {
	Name    string
	IsAdmin bool
}

// ErrorScreen is a full-page error.
type ErrorScreen struct {
	Base
	Status  int
	Message string
}
