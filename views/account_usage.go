package views

// AccountUsage is the account page's usage section: this month's tokens
// and cost by model, and the person's budget.
type AccountUsage struct {
	Month  string
	Rows   []AccountUsageRow
	Total  string // the month's cost
	Budget string // the budget the person is held to, in words
	Max    int64  // the largest row's tokens (the bars' scale)
	// Models are the models the person may pick, the chosen default
	// marked (none marked: the administrators' default); the form that
	// sets it shows when there is a choice.
	Models []ModelChoice
	CSRF   string
	// Chart is this month's tokens per day (nil: no replies yet).
	Chart *DayChart
	// SearchReasoning: the person's searches match replies' reasoning.
	SearchReasoning bool
	// Conversations are the person's latest conversations this month,
	// with what each has cost.
	Conversations []AccountConversationCost
}

// AccountConversationCost is one conversation of the usage section.
type AccountConversationCost struct {
	Title string
	URL   string
	Cost  string
}

// AccountUsageRow is one model's month.
type AccountUsageRow struct {
	Model  string
	Tokens int64 // in and out
	In     int64
	Out    int64
	Cost   string
}
