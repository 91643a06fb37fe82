package views

// AccountScreen is /account: the signed-in user's password, API keys, data
// and account.
type AccountScreen struct {
	Base
	Notice        string       // what the last action did
	Keys          []AccountKey // the user's API keys, oldest first
	NewKey        string       // a key just created: shown this once
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
	Usage         *AccountUsage    // this month's tokens and cost by model
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
