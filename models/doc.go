// Package models holds Palaver's GORM models and the Store, the only code that
// touches the database. It knows nothing of HTTP.
//
// Words:
//   - fork: how a branch is stored, an exchange whose log begins with a copy
//     of its parent's entries before a seq (forked_from_id, forked_at_seq).
//   - branch: the person's word for one member of a family, its root too.
//   - family: a root exchange and all its forks, forks of forks included.
//     Which branch stands for it (the sidebar's, a deletion's heir, a
//     switcher's) has one rule, Family's (family.go).
//
// The SQL rule: GORM by default, its query builder where it can say the
// query, and Raw or Exec scanned by GORM where it cannot (recursive CTEs
// over a family, a fork's INSERT … SELECT, full-text MATCH, locks). A
// statement written out and scanned by hand, to skip GORM's reflection or
// to keep SQLite from preparing it again, is for the hot paths only, each
// named here with what guards it:
//   - the turn (turnsql.go): TestHandWrittenStatementsCoverTheModels fails
//     when Message or User gains a column the statements miss;
//   - the history (HistorySQL, summaries): TestHistoryItemsFollowEveryWrite
//     checks the listed header against the row;
//   - search (search.go, search_index.go) and the admin statistics
//     (admin_stats.go), which read rows of their own types, not models;
//   - the export's stream (export.go): the column-coverage test checks its
//     read of messages too.
//
// On SQLite a value the plan reads (a bound LIMIT, a bound value against a
// partial index's literal) makes SQLite prepare the statement again on
// every run: hot statements write LIMIT ?+0, or the value as a literal.
package models
