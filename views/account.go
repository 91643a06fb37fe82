package views

// AccountScreen is /account: the signed-in user's password, API keys, data
// and account.
type AccountScreen struct {
	Base
	Notice        string         // what the last action did
	Keys          []AccountKey   // the user's API keys, oldest first
	Shares        []AccountShare // the user's share links, newest first (share.go)
	NewKey        string         // a key just created: shown this once
	NewKeyName    string
	KeyName       string // the name typed, kept when the form comes back
	KeyError      string
	PasswordError string
	DeleteError   string
	MinPassword   int
	Imported      *AccountImported // what the import form just stored
	ImportError   string           // why the import form's file was refused, in a person's words
	ImportDetail  string           // what the reader found wrong, shown folded
	Tools         []AccountToolRow // the tool permissions
	// Single sign-on: the account's identities at providers, the
	// configured providers it has none at yet, and why the last link or
	// unlink was refused. NoPassword: the account signs in only through
	// its identities.
	Identities    []AccountIdentity
	LinkProviders []string
	IdentityError string
	NoPassword    bool
	Files         AccountFiles  // the file limits and this user's usage (issue 26)
	Memory        AccountMemory // About me / How to answer, and the memory entries
	Usage         *AccountUsage // this month's tokens and cost by model
}

// AccountIdentity is one identity at a provider, as the account page lists it.
type AccountIdentity struct {
	ID       int64
	Provider string
	Email    string // "" when the provider said none
	Linked   string
}

// AccountFiles are the limits of files and what the user's files take.
type AccountFiles struct {
	Count                int
	Used, Quota, PerFile string // "3.4 MB", "1.07 GB", "21.0 MB"
	UsedPercent          int
	PerMessage           int
}

// AccountImported is what an import stored, and what it skipped as there
// already.
type AccountImported struct {
	Exchanges, Messages, Pages     int
	SkippedExchanges, SkippedPages int
	// Conversations and SkippedConversations: the exchanges that are no
	// fork, as the sidebar counts them.
	Conversations, SkippedConversations int
}

// AccountKey is one API key as the account page lists it: never the key.
type AccountKey struct {
	ID       int64
	Name     string
	Created  string
	LastUsed string // "never" when unused
}

// AccountDeleteConfirm asks before deleting the account, with what it holds.
type AccountDeleteConfirm struct {
	Base
	Conversations                       int64
	Exchanges, Messages, Pages, APIKeys int64
}

// AccountDeleted says the account is gone and what went with it.
type AccountDeleted struct {
	Base
	Username                            string
	Conversations                       int64
	Exchanges, Messages, Pages, APIKeys int64
}
