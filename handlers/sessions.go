package handlers

import (
	"database/sql"
	"net/http"
	"time"

	"github.com/alexedwards/scs/postgresstore"
	"github.com/alexedwards/scs/sqlite3store"
	"github.com/alexedwards/scs/v2"
)

// NewSessions builds the session manager over the app's own database
// ("sqlite" or "postgres" dialect). cleanup is how often expired sessions are
// deleted; 0 runs no background cleanup (tests).
func NewSessions(db *sql.DB, dialect string, secure bool, cleanup time.Duration) *scs.SessionManager {
	sm := scs.New()
	if dialect == "postgres" {
		sm.Store = postgresstore.NewWithCleanupInterval(db, cleanup)
	} else {
		sm.Store = sqlite3store.NewWithCleanupInterval(db, cleanup)
	}
	// A conversation is still there when its person comes back next week.
	// Sessions left idle end sooner: session.go (sessionIdle) checks that
	// without rewriting the session on every request, as scs's IdleTimeout
	// would.
	sm.Lifetime = 30 * 24 * time.Hour
	sm.Cookie.Name = "palaver_session"
	sm.Cookie.HttpOnly = true
	sm.Cookie.SameSite = http.SameSiteLaxMode
	sm.Cookie.Secure = secure
	return sm
}
