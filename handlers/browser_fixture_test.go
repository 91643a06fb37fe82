package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// The browser tests drive a real Chromium (chromedp) against the whole app
// served on a loopback listener. One browser process serves every scenario;
// each scenario opens its windows in browser contexts of its own, so no
// cookie or storage leaks from one scenario, or one user, to another.
//
// Every wait is bounded: one step by browserStep, a whole scenario by
// browserBudget. A failing scenario saves a screenshot and the HTML of each
// of its windows to a folder that outlives the test, and names the files in
// its failure message. An uncaught exception in a page's scripts fails the
// scenario too, and so does anything the Content-Security-Policy refused,
// any console error and any htmx error event (an out-of-band part without
// its target, a swap that failed): a scenario that provokes a refusal on
// purpose names it with expectConsole.

const (
	browserStart  = 30 * time.Second  // starting Chromium, opening a window
	browserStep   = 10 * time.Second  // one action or one wait
	browserBudget = 120 * time.Second // a whole scenario: a backstop, not a speed test
	browserPoll   = 25 * time.Millisecond
	browserSave   = 5 * time.Second // saving the artifacts of a failure
	browserPass   = "correct horse"

	// browserSettled is the console message a page writes when the test
	// asks whether everything it reported before has arrived.
	browserSettled = "palaver-test: console settled"

	// browserCSP starts the console error a page writes when its
	// Content-Security-Policy refused something (browserCSPWatch).
	browserCSP = "palaver-test: CSP violation: "
)

// browserCSPWatch runs in every document before the page's own scripts and
// reports each refusal of the Content-Security-Policy as a console error,
// which fails the scenario like an uncaught exception: an inline script or
// style, an eval, a fetch from elsewhere would otherwise fail silently.
const browserCSPWatch = `document.addEventListener("securitypolicyviolation", (e) => console.error(` +
	`"` + browserCSP + `" + e.effectiveDirective + " refused " + (e.blockedURI || "?") + " in " + e.sourceFile + ":" + e.lineNumber));` +
	browserHtmxWatch

// browserHtmx starts the console error a page writes for an htmx error
// event (browserHtmxWatch).
const browserHtmx = "palaver-test: htmx error: "

// browserHtmxWatch reports every htmx error event as a console error, with
// what it was about: htmx's own log line names only the event, and a
// page could silence it (htmx.logError is replaceable), while the event
// always fires on the document.
const browserHtmxWatch = `document.addEventListener("htmx:error", (e) => { const i = (e.detail && e.detail.errorInfo) || {};` +
	` const c = i.content || i.target; const what = c && c.id ? "#" + c.id : (c && c.outerHTML ? c.outerHTML.slice(0, 120) : "");` +
	` const x = i.xhr; console.error("` + browserHtmx + `" + i.error + " " + what + (x ? " " + x.status + " " + (i.pathInfo && i.pathInfo.requestPath || "") : "")) }, true)`

// TestBrowser runs the browser scenarios on one shared Chromium.
func TestBrowser(t *testing.T) {
	// In parallel with the few other tests that mostly wait (not with
	// TestBrowserShares or TestBrowserOIDC: one Chromium at a time), so
	// that their waiting overlaps its own; it shares nothing with them.
	t.Parallel()
	root := startBrowser(t)
	for _, sc := range []struct {
		name string
		run  func(*testing.T, context.Context)
	}{
		{"ChatFlow", browserChatFlow},
		{"Feedback", browserFeedback},
		{"TwoTabs", browserTwoTabs},
		{"PageProposals", browserPageProposals},
		{"AdminList", browserAdminList},
		{"NoJavaScript", browserNoJavaScript},
		{"CodeBlock", browserCodeBlock},
		{"Phone", browserPhone},
		{"EveryScreen", browserEveryScreen},
		{"SearchOrganise", browserSearchOrganise},
		{"SearchLongMatch", browserSearchLongMatch},
		{"Account", browserAccount},
		{"LongTranscript", browserLongTranscript},
		{"TimeTravel", browserTimeTravel},
		{"TreeCompare", browserTreeCompare},
		{"BranchEdit", browserBranchEdit},
		{"BranchRegenerate", browserBranchRegenerate},
		{"BranchCollision", browserBranchCollision},
		{"BranchNoJavaScript", browserBranchNoJavaScript},
		{"BranchLive", browserBranchLive},
		{"SendWhileReplying", browserSendWhileReplying},
		{"RenameWhileLive", browserRenameWhileLive},
		{"TripsContinue", browserTripsContinue},
		{"TripsArchive", browserTripsArchive},
		{"TripsCompare", browserTripsCompare},
		{"TripsWords", browserTripsWords},
		{"TripsTimes", browserTripsTimes},
		{"Contrast", browserContrastTour},
		{"PhoneTargets", browserPhoneTargets},
		{"Keyboard", browserKeyboard},
		{"Confirmations", browserConfirmations},
		{"ToolApproval", browserToolApproval},
		{"ToolReadEditor", browserToolReadEditor},
		{"ToolReadEditorConfirm", browserToolReadEditorConfirm},
		{"Attachments", browserAttachments},
		{"Projects", browserProjects},
		{"ProjectFiles", browserProjectFiles},
		{"ModelPicker", browserModelPicker},
		{"BudgetLive", browserBudgetLive},
		{"ModelSearchEnter", browserModelSearchEnter},
	} {
		t.Run(sc.name, func(t *testing.T) { sc.run(t, root) })
	}
}

// chromiumPath finds the browser: PALAVER_CHROMIUM, else chromium on PATH.
// Without one, a plain `go test` skips the browser tests with a line saying
// so; `make test` sets PALAVER_BROWSER_TESTS=required (it installs Chromium
// first), and then a missing browser fails instead.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PALAVER_CHROMIUM"); p != "" {
		return p
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		const why = "browser tests need Chromium: install the Debian package chromium (apt-get install -y chromium; `make test` installs it as root), or set PALAVER_CHROMIUM to its path"
		if os.Getenv("PALAVER_BROWSER_TESTS") == "required" {
			t.Fatal(why)
		}
		t.Skip("skipped: " + why)
	}
	return p
}

// startBrowser starts headless Chromium on a fresh profile and returns the
// context of its first window; the browser stops when the test ends.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	root, cancelRoot := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelRoot()
		cancelAlloc()
	})
	if err := startBounded(root); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return root
}

// startBounded runs the first action of a chromedp context, which starts
// the browser or opens the window. It must run on the context itself (the
// window lives as long as the context that opened it), so it is bounded
// from outside.
func startBounded(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(ctx) }()
	select {
	case err := <-done:
		return err
	case <-time.After(browserStart):
		return fmt.Errorf("no answer after %s", browserStart)
	}
}

// browserScene is one scenario: the app on a real listener and the windows
// the scenario opened.
type browserScene struct {
	t        *testing.T
	app      *testApp
	base     string // http://127.0.0.1:port
	root     context.Context
	deadline time.Time

	mu       sync.Mutex
	tabs     []*browserTab
	closers  []context.CancelFunc
	saved    bool
	expected []*regexp.Regexp // console errors the scenario provokes on purpose
}

// expectConsole names console errors the scenario provokes on purpose (a
// refusal it checks, as a regular expression over the message): they do
// not fail it. Anything else in the console still does.
func (s *browserScene) expectConsole(patterns ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range patterns {
		s.expected = append(s.expected, regexp.MustCompile(p))
	}
}

// newBrowserScene serves a fresh app and prepares the scenario. When the
// scenario fails, however it fails, its windows' screenshots and HTML are
// saved before they close.
func newBrowserScene(t *testing.T, root context.Context, opts ...appOption) *browserScene {
	t.Helper()
	a := newTestApp(t, opts...)
	s := &browserScene{t: t, app: a, base: "http://" + a.listen(), root: root, deadline: time.Now().Add(browserBudget)}
	t.Cleanup(func() {
		// A script that breaks on a page is a failure even when the
		// scenario got what it waited for.
		if !t.Failed() {
			s.settle()
			if ex := s.exceptions(); len(ex) > 0 {
				t.Errorf("the pages' scripts threw, logged an error, or their CSP or htmx refused something:\n  %s\n%s", strings.Join(ex, "\n  "), s.saveArtifacts())
			}
		}
		if t.Failed() {
			s.mu.Lock()
			saved := s.saved
			s.mu.Unlock()
			if !saved {
				t.Log(s.saveArtifacts())
			}
		}
		s.mu.Lock()
		closers := s.closers
		s.mu.Unlock()
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	})
	return s
}

// settle waits until every window's console has delivered what its page
// reported so far. Console messages reach the capture goroutine through a
// queue, in order but later than the replies to commands, so one round trip
// to the page is not enough: the page writes a marker, and once the marker
// has come through, so has everything before it. A window that does not
// answer, or runs no scripts, has nothing more to report.
func (s *browserScene) settle() {
	s.mu.Lock()
	tabs := append([]*browserTab(nil), s.tabs...)
	s.mu.Unlock()
	for _, tab := range tabs {
		ctx, cancel := context.WithTimeout(tab.ctx, browserSave)
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("console.debug("+browserQuote(browserSettled)+"), true"))
		if err == nil {
			select {
			case <-tab.settled:
			case <-ctx.Done():
				s.t.Errorf("%s: the console did not deliver the page's messages within %s", tab.name, browserSave)
			}
		}
		cancel()
	}
}

// exceptions lists the uncaught exceptions and the console errors of the
// scenario's pages (what their CSP refused, htmx's error events), but for
// those the scenario expects.
func (s *browserScene) exceptions() []string {
	s.mu.Lock()
	tabs := append([]*browserTab(nil), s.tabs...)
	expected := append([]*regexp.Regexp(nil), s.expected...)
	s.mu.Unlock()
	var out []string
	for _, tab := range tabs {
		tab.mu.Lock()
	next:
		for _, m := range tab.console {
			for _, re := range expected {
				if re.MatchString(m) {
					continue next
				}
			}
			out = append(out, tab.name+": "+m)
		}
		tab.mu.Unlock()
	}
	return out
}

// fatalf fails the scenario, naming the screenshots and HTML it saved.
func (s *browserScene) fatalf(format string, args ...any) {
	s.t.Helper()
	msg := fmt.Sprintf(format, args...)
	s.t.Fatalf("%s\n%s", msg, s.saveArtifacts())
}

// saveArtifacts writes a screenshot and the HTML of every window to a new
// temporary folder (kept after the test) and says where they are.
func (s *browserScene) saveArtifacts() string {
	s.mu.Lock()
	s.saved = true
	tabs := append([]*browserTab(nil), s.tabs...)
	s.mu.Unlock()
	dir, err := os.MkdirTemp("", "palaver-browser-"+strings.ReplaceAll(s.t.Name(), "/", "-")+"-")
	if err != nil {
		return "artifacts: cannot make a folder: " + err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "artifacts of the failure in %s:", dir)
	for _, tab := range tabs {
		tab.mu.Lock()
		console := strings.Join(tab.console, "\n")
		tab.mu.Unlock()
		if console != "" {
			path := filepath.Join(dir, tab.name+".console.txt")
			if err := os.WriteFile(path, []byte(console+"\n"), 0o644); err == nil {
				fmt.Fprintf(&b, "\n  %s script errors: %s", tab.name, path)
			}
		}
		png, html := tab.capture()
		for _, f := range []struct {
			ext  string
			data []byte
		}{{"png", png}, {"html", html}} {
			if f.data == nil {
				fmt.Fprintf(&b, "\n  %s: no %s (the window did not answer)", tab.name, f.ext)
				continue
			}
			path := filepath.Join(dir, tab.name+"."+f.ext)
			if err := os.WriteFile(path, f.data, 0o644); err != nil {
				fmt.Fprintf(&b, "\n  %s: %v", tab.name, err)
				continue
			}
			kind := "screenshot"
			if f.ext == "html" {
				kind = "page HTML"
			}
			fmt.Fprintf(&b, "\n  %s %s: %s", tab.name, kind, path)
		}
	}
	if len(tabs) == 0 {
		b.WriteString("\n  (no window was open)")
	}
	return b.String()
}

// browserTab is one window (a page target) of the scenario.
type browserTab struct {
	s    *browserScene
	name string
	ctx  context.Context

	settled chan struct{} // the page's marker came through the console (see settle)

	mu      sync.Mutex
	dialogs []string // the messages of the dialogs it accepted
	console []string // the errors and exceptions of its pages' scripts
}

// window opens a window in a browser context of its own: a new person, with
// no cookies.
func (s *browserScene) window(name string) *browserTab {
	s.t.Helper()
	ctx, cancel := chromedp.NewContext(s.root, chromedp.WithNewBrowserContext())
	return s.open(name, ctx, cancel)
}

// tab opens another window in the browser context of tab: the same person,
// the same cookies.
func (tab *browserTab) tab(name string) *browserTab {
	tab.s.t.Helper()
	ctx, cancel := chromedp.NewContext(tab.ctx)
	return tab.s.open(name, ctx, cancel)
}

func (s *browserScene) open(name string, ctx context.Context, cancel context.CancelFunc) *browserTab {
	s.t.Helper()
	s.mu.Lock()
	s.closers = append(s.closers, cancel)
	s.mu.Unlock()
	if err := startBounded(ctx); err != nil {
		s.fatalf("open window %s: %v", name, err)
	}
	tab := &browserTab{s: s, name: name, ctx: ctx, settled: make(chan struct{}, 1)}
	// Confirmations (hx-confirm) and leave-page questions are accepted, as a
	// person answering OK would; the test can read what was asked.
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			tab.mu.Lock()
			tab.dialogs = append(tab.dialogs, ev.Message)
			tab.mu.Unlock()
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: browserCSPWatch}); err != nil {
		s.fatalf("window %s: watch the CSP: %v", name, err)
	}
	// What the page's scripts said went wrong, for the failure report.
	console := chromedp.Console(ctx)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleException, chromedp.ConsoleError:
				tab.mu.Lock()
				tab.console = append(tab.console, string(m.Type)+": "+m.Text)
				tab.mu.Unlock()
			case chromedp.ConsoleDebug:
				if m.Text == browserSettled {
					select {
					case tab.settled <- struct{}{}:
					default:
					}
				}
			}
		}
	}()
	s.mu.Lock()
	s.tabs = append(s.tabs, tab)
	s.mu.Unlock()
	return tab
}

// step is the context of one action: browserStep, or less when the
// scenario's budget runs out first.
func (tab *browserTab) step() (context.Context, context.CancelFunc) {
	d := time.Now().Add(browserStep)
	if tab.s.deadline.Before(d) {
		d = tab.s.deadline
	}
	return context.WithDeadline(tab.ctx, d)
}

// do runs actions that return nothing, failing the scenario on an error.
func (tab *browserTab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	tab.s.t.Helper()
	ctx, cancel := tab.step()
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tab.s.fatalf("%s: %s: %v", tab.name, what, err)
	}
}

// capture takes a screenshot and the document's HTML (nil when the window
// does not answer).
func (tab *browserTab) capture() (png, html []byte) {
	ctx, cancel := context.WithTimeout(tab.ctx, browserSave)
	defer cancel()
	if b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()); err == nil {
		png = b
	}
	if h, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`)); err == nil {
		html = []byte(h)
	} else if h, err := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html"))); err == nil {
		html = []byte(h)
	}
	return png, html
}

// disableJavaScript turns the window's scripts off, for every page it loads
// from now on.
func (tab *browserTab) disableJavaScript() {
	tab.s.t.Helper()
	ctx, cancel := tab.step()
	defer cancel()
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		tab.s.fatalf("%s: disable JavaScript: %v", tab.name, err)
	}
}

// visit loads a path of the app and waits for it to load.
func (tab *browserTab) visit(path string) {
	tab.s.t.Helper()
	tab.do("open "+path, chromedp.Navigate(tab.s.base+path))
}

// reload reloads the page and waits for it to load.
func (tab *browserTab) reload() {
	tab.s.t.Helper()
	tab.do("reload", chromedp.Reload())
}

// click clicks the first element matching the CSS selector once it is
// visible.
func (tab *browserTab) click(sel string) {
	tab.s.t.Helper()
	// A live update may draw the element anew between finding it and
	// clicking it (a sidebar item, another tab's read mark): the click then
	// goes to the element drawn in its place, as a person's would.
	for try := 1; ; try++ {
		ctx, cancel := tab.step()
		err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
		cancel()
		if err == nil {
			return
		}
		if try == 3 || !strings.Contains(err.Error(), "Could not find node with given id") {
			tab.s.fatalf("%s: click %s: %v", tab.name, sel, err)
		}
	}
}

// clickToLoad clicks an element that loads a new document (a plain link or
// form) and waits for that document, which must not be an error page.
func (tab *browserTab) clickToLoad(sel string) {
	tab.s.t.Helper()
	ctx, cancel := tab.step()
	defer cancel()
	res, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
	if err != nil {
		tab.s.fatalf("%s: click %s and wait for the next page: %v", tab.name, sel, err)
	}
	if res == nil || res.Status >= 400 {
		status := int64(0)
		if res != nil {
			status = res.Status
		}
		tab.s.fatalf("%s: click %s: the next page answered %d", tab.name, sel, status)
	}
}

// typeInto types text into a field: the text as a keyboard enters it (input
// events), and each "\n" as the Enter key (keydown, keypress, keyup), so the
// page's input and keydown handlers run as they do for a person.
func (tab *browserTab) typeInto(sel, text string) {
	tab.s.t.Helper()
	steps := []chromedp.Action[chromedp.Void]{chromedp.Focus(chromedp.CSS(sel), chromedp.NodeVisible)}
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			steps = append(steps, chromedp.KeyEvent("\r"))
		}
		if line != "" {
			steps = append(steps, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
				_, err := cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: line})
				return err
			}))
		}
	}
	tab.do("type into "+sel, steps...)
}

// eval evaluates a JavaScript expression in the page.
func browserEval[T any](tab *browserTab, expr string) T {
	tab.s.t.Helper()
	ctx, cancel := tab.step()
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tab.s.fatalf("%s: evaluate %s: %v", tab.name, expr, err)
	}
	return v
}

// waitFor waits until the JavaScript expression is true in the page, reading
// it again as the page changes (a navigation in between is fine).
func (tab *browserTab) waitFor(what, expr string) {
	tab.s.t.Helper()
	ctx, cancel := tab.step()
	defer cancel()
	var last error
	start := time.Now()
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+expr+")"))
		if err == nil && ok {
			return
		}
		if err != nil && ctx.Err() == nil {
			last = err
		}
		select {
		case <-ctx.Done():
			detail := ""
			if last != nil {
				detail = fmt.Sprintf(" (last error: %v)", last)
			}
			tab.s.fatalf("%s: waited %s for %s%s", tab.name, time.Since(start).Round(time.Millisecond), what, detail)
		case <-time.After(browserPoll):
		}
	}
}

// waitVisible waits until an element matching the CSS selector is visible
// (this uses no page JavaScript, so it works with scripts off).
func (tab *browserTab) waitVisible(sel string) {
	tab.s.t.Helper()
	tab.do("wait for "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
}

// text is the visible text of the first element matching the selector,
// spaces collapsed.
func (tab *browserTab) text(sel string) string {
	tab.s.t.Helper()
	ctx, cancel := tab.step()
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel), chromedp.NodeVisible))
	if err != nil {
		tab.s.fatalf("%s: read the text of %s: %v", tab.name, sel, err)
	}
	return strings.Join(strings.Fields(s), " ")
}

// location is the page's URL path (and query).
func (tab *browserTab) location() string {
	tab.s.t.Helper()
	ctx, cancel := tab.step()
	defer cancel()
	u, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		tab.s.fatalf("%s: read the location: %v", tab.name, err)
	}
	return strings.TrimPrefix(u, tab.s.base)
}

// asked lists the messages of the dialogs the window accepted so far.
func (tab *browserTab) asked() []string {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	return append([]string(nil), tab.dialogs...)
}

// openMenu opens the actions menu of a history item (a person's click on
// its "…" button) and waits for it.
func (tab *browserTab) openMenu(item string) {
	tab.s.t.Helper()
	tab.click(item + " [data-testid=row-menu]")
	tab.waitFor("the menu of "+item, fmt.Sprintf(`document.querySelector(%s).open`, browserQuote(item+" details[data-menu]")))
}

// confirmDialog answers the confirmation dialog (app.js) as a person who
// reads it and confirms: it waits for the dialog, checks that the focus
// is not on its destructive button, clicks that button, and returns what
// the dialog said (its heading and message).
func (tab *browserTab) confirmDialog() string {
	tab.s.t.Helper()
	const dialog = "dialog[open][data-testid=confirm-dialog]"
	tab.waitVisible(dialog + " [data-testid=confirm]")
	if browserEval[bool](tab, `document.activeElement && document.activeElement.matches("[data-testid=confirm]")`) {
		tab.s.fatalf("%s: the confirmation starts with the focus on its destructive button", tab.name)
	}
	said := tab.text(dialog)
	tab.click(dialog + " [data-testid=confirm]")
	tab.waitFor("the confirmation closed", "!document.querySelector("+browserQuote(dialog)+")")
	return said
}

// jsq quotes a Go value for a JavaScript expression.
func browserQuote(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// browserHasText is an expression true when some element matching sel
// contains text.
func browserHasText(sel, text string) string {
	return fmt.Sprintf(`Array.from(document.querySelectorAll(%s)).some((e) => e.textContent.includes(%s))`, browserQuote(sel), browserQuote(text))
}

// browserCount is an expression counting the elements matching sel.
func browserCount(sel string) string {
	return fmt.Sprintf(`document.querySelectorAll(%s).length`, browserQuote(sel))
}

// browserTexts lists the text of each element matching sel, spaces
// collapsed.
func browserTexts(tab *browserTab, sel string) []string {
	tab.s.t.Helper()
	return browserEval[[]string](tab, fmt.Sprintf(
		`Array.from(document.querySelectorAll(%s)).map((e) => e.textContent.replace(/\s+/g, " ").trim())`, browserQuote(sel)))
}

// register creates an account through the register form in the window; it
// lands on /chat.
func (tab *browserTab) register(name string) {
	tab.s.t.Helper()
	tab.visit("/register")
	tab.typeInto(`form[action="/register"] input[name=username]`, name)
	tab.typeInto(`form[action="/register"] input[name=password]`, browserPass)
	tab.clickToLoad(`form[action="/register"] button[type=submit]`)
	if loc := tab.location(); loc != "/chat" {
		tab.s.fatalf("%s: register %s landed on %q, want /chat", tab.name, name, loc)
	}
}

// The transcript's messages by role (the pending copy app.js shows while a
// send is on its way does not count).
const (
	browserUserMsg      = `#transcript [data-testid=message][data-role=user]:not([data-pending])`
	browserAssistantMsg = `#transcript [data-testid=message][data-role=assistant]`
	browserHistoryItem  = `#history-items [data-testid=history-item]`
)

// send types a message into the composer, sends it with Enter and waits
// until the transcript shows it and the reply after it (the reply comes over
// the live connection). It returns the reply's text.
func (tab *browserTab) send(query string) string {
	tab.s.t.Helper()
	users := browserEval[int](tab, browserCount(browserUserMsg))
	replies := browserEval[int](tab, browserCount(browserAssistantMsg))
	tab.waitFor("the composer's script", `document.querySelector("form[data-composer][data-enhanced]")`)
	tab.typeInto("[data-testid=chat-input]", query+"\n")
	tab.waitFor(fmt.Sprintf("the message %q in the transcript", query), fmt.Sprintf(
		`%s > %d && %s`, browserCount(browserUserMsg), users, browserHasText(browserUserMsg, query)))
	tab.waitFor("the reply to "+browserQuote(query), fmt.Sprintf(`%s > %d`, browserCount(browserAssistantMsg), replies))
	texts := browserTexts(tab, browserAssistantMsg)
	return texts[len(texts)-1]
}

// exchangeID is the exchange the page's composer sends to (0: a new chat).
func (tab *browserTab) exchangeID() int64 {
	tab.s.t.Helper()
	return int64(browserEval[float64](tab, `Number(document.getElementById("composer-exchange").value)`))
}

// browserChatPath is the path of an open conversation.
var browserChatPath = regexp.MustCompile(`^/chat/\d+$`)
