package views

import (
	"github.com/a-h/templ"

	"palaver/paths"
)

// Admin area sections, for the tabs.
const (
	AdminOverviewSection     = "overview"
	AdminExchangesSection    = "exchanges"
	AdminAuditSection        = "audit"
	AdminUsersSection        = "users"
	AdminHousekeepingSection = "housekeeping"
)

// AdminChrome is what every admin page shows around its content: the
// section tabs and a one-off message left by the last action.
type AdminChrome struct {
	Base
	Section    string
	Flash      string
	FlashError bool
}

// AdminOverviewScreen is /admin: the service's figures over a window of days.
type AdminOverviewScreen struct {
	AdminChrome
	Window    string // "May 12 – Jun 10, 2026 (UTC)"
	Cards     []AdminCard
	Activity  DayChart
	Errors    DayChart
	Feedback  StackChart
	Proposals StackChart
	Tokens    StackChart
	Days      []AdminDayRow // newest first, for the tables
	Agents    []AdminFeedbackRow
	Proposed  []AdminProposalRow
	Models    []AdminTokenRow
}

// AdminCard is one headline figure.
type AdminCard struct {
	Label string
	Value string
	Note  string
}

// AdminDayRow is one day of the activity and error tables.
type AdminDayRow struct {
	Day         string
	Exchanges   string
	Messages    string
	ActiveUsers string
	Turns       string
	Errors      string
	ErrorRate   string
}

// AdminFeedbackRow is one agent of the feedback table.
type AdminFeedbackRow struct {
	Agent     string
	Replies   string
	RatedRate string
	Up        string
	Down      string
	UpShare   string
}

// AdminProposalRow is one agent of the proposals table.
type AdminProposalRow struct {
	Agent          string
	Proposals      string
	Accepted       string
	Rejected       string
	Open           string
	AcceptanceRate string
}

// AdminTokenRow is one model of the tokens table.
type AdminTokenRow struct {
	Model      string
	Replies    string
	Prompt     string
	Completion string
	Total      string
}

// AdminOption is one choice of a select.
type AdminOption struct {
	Value    string
	Label    string
	Selected bool
}

// AdminExchangesScreen is /admin/exchanges: the filter form and one batch of
// every user's exchanges.
type AdminExchangesScreen struct {
	AdminChrome
	Filter  AdminFilterForm
	Results AdminExchangeResults
}

// AdminFilterForm is the filter form as submitted, with its choices.
type AdminFilterForm struct {
	Users    []AdminOption
	Scopes   []AdminOption
	Agents   []AdminOption
	Sorts    []AdminOption
	From     string // YYYY-MM-DD
	To       string
	Title    string
	Project  string // a project's number
	Negative bool
	Errors   bool
}

// AdminExchangeResults is one batch of the admin exchange list.
type AdminExchangeResults struct {
	Rows     []AdminExchangeItem
	Total    int64
	NextURL  string // "" on the last batch
	FirstURL string // "" on the first batch
	Sort     string // the sort's label, for the caption
	Error    string // why the filters were refused
}

// AdminExchangeItem is one row of the admin exchange list.
type AdminExchangeItem struct {
	ID         int64
	URL        string // the exchange's admin page
	User       string
	UserURL    string // the list filtered to this user
	Title      string
	ScopeKind  string // general, page or job
	ScopeLabel string // "page: Roadmap", "job #7"
	Agent      string
	Turns      int64
	When       string
	WhenFull   string
	Size       string
	Up         int64
	Down       int64
	Errors     int64
	Accepted   int64
	Rejected   int64
	Open       int64
	Pinned     bool
	// ForkOf names the exchange this one was forked from ("branch of …"),
	// nil for a root; FamilyURL lists its whole family, "" for an exchange
	// that is a family of one.
	ForkOf    *AdminForkOf
	FamilyURL string
	// ProjectID is the project it is in (0: none), by number only: a
	// project's name is its owner's data; ProjectURL lists its chats.
	ProjectID  int64
	ProjectURL string
}

// AdminForkOf is the exchange a fork was made from, by its title.
type AdminForkOf struct {
	ID    int64
	Title string
	URL   string // its admin page
}

// AdminExchangeSummary describes an exchange before and while it is read.
type AdminExchangeSummary struct {
	ID         int64
	Title      string
	Owner      string
	ScopeLabel string
	Agent      string
	Turns      int64
	Messages   int64
	Size       string
	Created    string
	LastActive string
	Up, Down   int64
	Errors     int64
	Proposals  string // "1 accepted · 1 rejected · 1 open", "" when none
	AuditURL   string // the audit entries of this exchange
	Openings   int64  // how often administrators opened it before
}

// AdminExchangeGate asks for a reason before an exchange is opened, and says
// the opening is recorded.
type AdminExchangeGate struct {
	AdminChrome
	Exchange AdminExchangeSummary
	Action   string // where the form posts
	Reason   string
	Error    string
}

// AdminExchangeView is an exchange's whole log, read-only.
type AdminExchangeView struct {
	AdminChrome
	Exchange AdminExchangeSummary
	Note     string // when this opening was recorded, and why
	Entries  []AdminLogEntry
	SubRuns  []AdminSubRun // what its agents delegated, in the order spawned
}

// AdminSubRun is one delegation an exchange's agent made (a search of the
// person's chats): which agent, from which entry, when, and how it ended.
type AdminSubRun struct {
	Agent, Task, Status, Result string
	ParentSeq                   int64
	Started, Finished           string // Finished "" while it runs
	Entries                     int64
}

// AdminLogEntry is one row of a log as the admin view shows it: the chat
// component for the conversation's own rows, a tool block for tool rows.
type AdminLogEntry struct {
	ID       int64
	Seq      string // "Message 4" (seq 3), or "Error row"
	Role     string
	Who      string // the role in a person's words
	Agent    string
	Time     string
	TimeFull string
	Facts    []string // rating, proposal state, model, tokens
	Chat     *ChatMessage
	Tool     *AdminToolEntry
}

// AdminToolEntry is a tool call or result.
type AdminToolEntry struct {
	Name string
	Call string // the call id
	JSON string // arguments or result, indented
	Text string // the row's content
}

// AdminAuditScreen is /admin/audit: who opened which exchange, newest first.
type AdminAuditScreen struct {
	AdminChrome
	Entries  []AdminAuditItem
	NextURL  string
	FirstURL string
	Exchange int64 // filtered to one exchange; 0 for all
}

// AdminAuditItem is one audit row.
type AdminAuditItem struct {
	ID       int64
	When     string
	WhenFull string
	Admin    string
	Owner    string
	Exchange string // the title, or "#12 (deleted)"
	URL      string // the exchange's admin page while it exists
	Reason   string
}

// AdminUsersScreen is /admin/users.
type AdminUsersScreen struct {
	AdminChrome
	Users   []AdminUserItem
	Paged   bool   // not the first batch: a link back to it
	NextURL string // the next batch of accounts; "" on the last
}

// AdminUserItem is one account and what can be done to it.
type AdminUserItem struct {
	ID          int64
	Name        string
	IsAdmin     bool
	Disabled    bool
	Self        bool
	Created     string
	Exchanges   int64
	Messages    int64
	APIKeys     int64
	Storage     string // what the account's files take (issue 26)
	LastActive  string
	ListURL     string // its exchanges in the admin list
	CSRF        string
	MinPassword int
}

// AdminHousekeepingScreen is /admin/housekeeping.
type AdminHousekeepingScreen struct {
	AdminChrome
	Dialect       string
	Size          AdminSize
	Orphans       []AdminOrphanItem
	OrphanTotal   int64
	OrphanGrace   string
	Retention     AdminRetentionForm
	DryRun        *AdminDryRun // after a dry run
	Runs          []AdminRunItem
	ScheduleEvery string
	// Files, blobs, their bytes and the blobs no file names (issue 26):
	// there should be none.
	Files, Blobs, Unreferenced int64
	BlobBytes                  string
}

// AdminSize is the database's size.
type AdminSize struct {
	Total string
	File  string // SQLite only, like the next two
	WAL   string
	Free  string
}

// AdminOrphanItem is one orphaned exchange.
type AdminOrphanItem struct {
	ID       int64
	User     string
	Title    string
	Why      string
	When     string
	Messages int64
}

// AdminRetentionForm is the retention policy's form.
type AdminRetentionForm struct {
	Enabled bool
	Days    string // in the form: saved, or what a dry run tried
	Saved   string // the saved period, which "Run now" applies
	MaxDays int
}

// AdminDryRun is what a dry run found.
type AdminDryRun struct {
	Days      string
	Exchanges int64
	Messages  int64
	Cutoff    string
	Items     []AdminRetentionItem
}

// AdminRetentionItem is an exchange retention would delete.
type AdminRetentionItem struct {
	ID    int64
	User  string
	Title string
	Scope string
	When  string
	Size  string
}

// AdminRunItem is one logged retention run.
type AdminRunItem struct {
	Started   string
	Source    string
	Dry       bool
	Days      int64
	Cutoff    string
	Exchanges int64
	Messages  int64
	Took      string
	Error     string
}

// AdminViewed tells an exchange's owner that administrators opened it.
type AdminViewed struct {
	Count    int64
	Last     string // "Mar 3, 2026 at 14:05"
	LastFull string // RFC 3339
}

func adminSectionURL(section string) templ.SafeURL {
	if section == AdminOverviewSection {
		return paths.Admin
	}
	return templ.SafeURL(paths.Admin + "/" + section)
}

func adminUserRowID(id int64) string { return "user-" + itoa64(id) }

func adminViewedSuffix(n int64) string {
	if n > 1 {
		return " (" + Plural(n, "time", "times") + " in all)."
	}
	return "."
}

// adminTable styles the admin tables through their cells, so each cell
// needs no classes of its own ("num" right-aligns a figure).
const adminTable = "w-full border-collapse text-sm " +
	"[&_th]:px-2 [&_th]:py-1.5 [&_th]:text-left [&_td]:px-2 [&_td]:py-1.5 [&_td]:align-top " +
	"[&_thead_th]:sticky [&_thead_th]:top-0 [&_thead_th]:z-10 [&_thead_th]:bg-slate-50 [&_thead_th]:text-xs " +
	"[&_thead_th]:font-medium [&_thead_th]:uppercase [&_thead_th]:tracking-wide [&_thead_th]:text-slate-500 " +
	"[&_tbody_tr]:border-t [&_tbody_tr]:border-slate-100 [&_tbody_th]:font-normal [&_tbody_th]:text-slate-700 " +
	"[&_.num]:text-right [&_.num]:tabular-nums"

// adminWideTable is an admin table of many columns: on a narrow screen it
// keeps a readable width and its frame scrolls sideways, instead of
// squeezing every column to a word a line.
const adminWideTable = adminTable + " min-w-[44rem]"

func adminDemoteConfirm(u AdminUserItem) string {
	if u.Self {
		return "Give up your own administrator rights? You will lose access to the admin area."
	}
	return ""
}

// AdminSharesSection is the admin list of every share link (issue 28).
const AdminSharesSection = "shares"

// Sections of the models pages (issue 29).
const (
	AdminModelsSection = "models"
	AdminUsageSection  = "usage"
)

// AdminModelsScreen is /admin/models: the connections, each with its
// models, and the form that adds one.
type AdminModelsScreen struct {
	AdminChrome
	Connections []AdminConnectionItem
}

// AdminConnectionItem is one connection as the administrator manages it.
// The key is never shown: only whether there is one.
type AdminConnectionItem struct {
	ID       int64
	Name     string
	Kind     string
	BaseURL  string
	HasKey   bool
	ReadOnly bool // defined by the --llm-* flags
	Models   []AdminModelItem
}

// AdminModelItem is one model of a connection.
type AdminModelItem struct {
	ID          int64
	Model       string // the server's id
	Name        string // the name people see
	Enabled     bool
	Default     bool
	InputPrice  string // per million tokens; "" when unpriced
	OutputPrice string
}

// AdminUsageScreen is /admin/usage: a month's tokens and cost per person,
// per model and per day, then every row.
type AdminUsageScreen struct {
	AdminChrome
	Month      string // YYYY-MM
	MonthLabel string // "December 2026"
	Prev, Next string // the months before and after, YYYY-MM
	Total      string
	ByUser     []AdminUsageSum
	ByModel    []AdminUsageSum
	ByDay      []AdminUsageSum
	Rows       []AdminUsageRow
}

// AdminUsageSum is a month's tokens and cost for one person, model or day.
type AdminUsageSum struct {
	Label   string
	In, Out string
	Replies string
	Cost    string
}

// AdminUsageRow is one person's use of one model on one day.
type AdminUsageRow struct {
	Day, User, Model string
	In, Out          string
	Replies          string
	Cost             string
}
