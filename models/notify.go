package models

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"hash/fnv"
	"net/url"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Wake-ups across processes (issue 13). On PostgreSQL the database tells
// every process what was committed (migration 00013's triggers send a
// notification on NotifyChannel in the committing transaction); the store
// gives the listener what it needs to re-read what a notification points to.
// Nothing here runs on SQLite, where one process tells its own subscribers.

// NotifyChannel is the channel of Palaver's notifications.
const NotifyChannel = "palaver"

// Notification kinds (the payload's "k"; see migration 00013).
const (
	NotifyEntries  = "m" // entries A..B appended to exchange X of user U
	NotifyExchange = "x" // exchange X of user U made, changed or deleted; its turn ST
	NotifyPage     = "p" // page PG of user U made or changed
	NotifyStop     = "s" // a Stop of exchange X's turn, held by W, was asked for
	NotifyDelta    = "d" // a piece of a reply being written (sent by the process writing it)
	// NotifyFamily: exchange X of user U, of family R, is being deleted and
	// H stands for the family now (deletions.go; sent in the deleting
	// transaction, so it comes before X's own "x").
	NotifyFamily = "f"
	// NotifyAccount: user U's account was deleted or disabled, moved to a
	// new session epoch, or lost an API key (migration 00017): its sockets
	// and streams check whether they may still speak as it.
	NotifyAccount = "a"
	// NotifyRead: user U's read marks changed, of exchange X (0: of any
	// number); sent by the store in the committing transaction (unread.go).
	NotifyRead = "r"
	// NotifyReasoning: a piece of the reasoning a model streams before
	// its reply (sent by the process running the turn, as NotifyDelta).
	NotifyReasoning = "t"
)

// Notice is a notification's payload.
type Notice struct {
	Kind     string `json:"k"`
	Exchange int64  `json:"x,omitempty"`
	User     int64  `json:"u,omitempty"`
	Status   string `json:"st,omitempty"` // exchange: its turn's status as committed
	Page     int64  `json:"pg,omitempty"`
	From     int64  `json:"a,omitempty"` // entries: the first id
	To       int64  `json:"b,omitempty"` // entries: the last id
	Owner    string `json:"w,omitempty"` // stop: the lease holder asked to stop
	Origin   string `json:"o,omitempty"` // the committing session's application_name
	Offset   int    `json:"f,omitempty"` // delta: bytes of the reply before Text
	Text     string `json:"t,omitempty"` // delta: the piece
	Heir     int64  `json:"h,omitempty"` // family: the member that stands for it now
	Root     int64  `json:"r,omitempty"` // family: its root before the deletion
}

// newProcessTag names a store's database sessions (application_name): a
// notification whose Origin is the store's tag was committed through it,
// and whoever holds the store told its own subscribers already. One tag a
// store, so that two apps in one process (the bench) are two processes.
func newProcessTag() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "palaver/" + hex.EncodeToString(b)
}

// ProcessTag is the application_name of the store's PostgreSQL sessions
// ("" on SQLite).
func (s *Store) ProcessTag() string { return s.tag }

// withProcessTag sets the DSN's application_name to tag (a postgres://
// URL; anything else is returned as it is).
func withProcessTag(dsn, tag string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	q := u.Query()
	q.Set("application_name", tag)
	u.RawQuery = q.Encode()
	return u.String()
}

// WakeExchange reads an exchange's header by id alone, for the listener,
// which fans it out to the subscribers of its user only.
func (s *Store) WakeExchange(ctx context.Context, id int64) (*Exchange, error) {
	var e Exchange
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&e).Error
	return &e, wrap("wake exchange", err)
}

// WakeEntries reads the entries of an exchange with ids from..to, in order.
func (s *Store) WakeEntries(ctx context.Context, exchangeID, from, to int64) ([]Message, error) {
	var msgs []Message
	err := s.db.WithContext(ctx).Where("exchange_id = ? AND id BETWEEN ? AND ?", exchangeID, from, to).
		Order("id").Find(&msgs).Error
	return msgs, wrap("wake entries", err)
}

// Notify sends a notification outside any transaction (a reply's pieces,
// which are never stored).
func (s *Store) Notify(ctx context.Context, payload string) error {
	if s.dialect != "postgres" {
		return nil
	}
	return wrap("notify", s.db.WithContext(ctx).Exec("SELECT pg_notify(?, ?)", NotifyChannel, payload).Error)
}

// turnStopRequest is a Stop asked of the process running a turn.
type turnStopRequest struct {
	ExchangeID  int64 `gorm:"primaryKey;autoIncrement:false"`
	Owner       string
	RequestedAt time.Time
}

// RequestStop records a Stop of the user's running turn on the exchange for
// the process that holds its lease, which hears of it at once. It says
// false, recording nothing, when no turn runs there (or it is not the
// user's).
func (s *Store) RequestStop(ctx context.Context, userID, exchangeID int64) (bool, error) {
	res := s.db.WithContext(ctx).Exec(`INSERT INTO turn_stop_requests (exchange_id, owner, requested_at)
		SELECT id, turn_owner, ? FROM exchanges WHERE id = ? AND user_id = ? AND turn_status = ? AND turn_owner IS NOT NULL
		ON CONFLICT (exchange_id) DO UPDATE SET owner = EXCLUDED.owner, requested_at = EXCLUDED.requested_at`,
		now(), exchangeID, userID, TurnRunning)
	if res.Error != nil {
		return false, wrap("request stop", res.Error)
	}
	return res.RowsAffected > 0, nil
}

// TakeStopRequests removes and returns the Stop requests for owner's
// turns (all of them, or those of the given exchanges).
func (s *Store) TakeStopRequests(ctx context.Context, owner string, exchangeIDs ...int64) ([]int64, error) {
	var rows []turnStopRequest
	q := s.db.WithContext(ctx).Clauses(clause.Returning{Columns: []clause.Column{{Name: "exchange_id"}}}).
		Where("owner = ?", owner)
	if len(exchangeIDs) > 0 {
		q = q.Where("exchange_id IN ?", exchangeIDs)
	}
	if err := q.Delete(&rows).Error; err != nil {
		return nil, wrap("take stop requests", err)
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ExchangeID
	}
	return ids, nil
}

// LivenessKey is the advisory lock a process holds, on its listening
// connection, for as long as it lives: its lease owner name, hashed.
func LivenessKey(owner string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(owner))
	return int64(h.Sum64())
}

// OwnerAlive says whether a lease owner's process holds its liveness lock,
// that is, whether its listening connection to the database is open. (A
// process whose listener is reconnecting looks dead for that moment: the
// caller also asks that its heartbeat be late.) On SQLite it says true.
func (s *Store) OwnerAlive(ctx context.Context, owner string) (bool, error) {
	if s.dialect != "postgres" {
		return true, nil
	}
	var free bool
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return tx.Raw("SELECT pg_try_advisory_xact_lock(?)", LivenessKey(owner)).Scan(&free).Error
	})
	if err != nil {
		return true, wrap("owner alive", err)
	}
	return !free, nil
}
