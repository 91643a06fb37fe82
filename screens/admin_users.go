package screens

import (
	"context"
	"net/url"
	"time"

	"palaver/accounts"
	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// adminUsersListed is how many accounts one batch of the list shows.
const adminUsersListed = 100

// AdminUsers builds the accounts list with what each stores, one keyset
// batch after the name after ("": from the first), for the administrator v
// in the frame ch.
func (s *Screens) AdminUsers(ctx context.Context, v Viewer, ch views.AdminChrome, after string) (views.AdminUsersScreen, error) {
	rows, more, err := s.store.AdminListUsers(ctx, after, adminUsersListed)
	if err != nil {
		return views.AdminUsersScreen{}, err
	}
	storage, err := s.store.StorageByUser(ctx)
	if err != nil {
		return views.AdminUsersScreen{}, err
	}
	p := views.AdminUsersScreen{AdminChrome: ch, Paged: after != ""}
	for i := range rows {
		it := adminUserItem(v, &rows[i])
		it.Storage = HumanBytes(storage[rows[i].ID])
		p.Users = append(p.Users, it)
	}
	if more {
		p.NextURL = paths.WithQuery(paths.AdminUsers, url.Values{"after": {rows[len(rows)-1].Username}})
	}
	return p, nil
}

// AdminUserRow is one account's row, as an action left it.
func (s *Screens) AdminUserRow(ctx context.Context, v Viewer, id int64) (views.AdminUserItem, error) {
	row, err := s.store.AdminUser(ctx, id)
	if err != nil {
		return views.AdminUserItem{}, err
	}
	storage, err := s.store.StorageByUser(ctx)
	if err != nil {
		return views.AdminUserItem{}, err
	}
	it := adminUserItem(v, row)
	it.Storage = HumanBytes(storage[row.ID])
	return it, nil
}

// adminUserItem maps an account and its counts to its row.
func adminUserItem(v Viewer, u *models.AdminUserRow) views.AdminUserItem {
	it := views.AdminUserItem{
		ID: u.ID, Name: u.Username, IsAdmin: u.IsAdmin, Disabled: u.Disabled,
		Self: u.ID == v.UserID, Created: u.CreatedAt.Local().Format("2 Jan 2006"),
		ListURL: paths.AdminExchangesOf(u.ID), LastActive: "never",
		CSRF: v.CSRF, MinPassword: accounts.MinPassword,
	}
	it.Exchanges, it.Messages, it.APIKeys = u.Exchanges, u.Messages, u.APIKeys
	if u.LastActive != nil {
		it.LastActive = views.RelativeTime(*u.LastActive, time.Now())
	}
	return it
}
