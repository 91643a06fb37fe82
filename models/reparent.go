package models

import "gorm.io/gorm"

// Re-parenting (issue 11): a deletion keeps the families of what it
// deletes whole, in the transaction that deletes (DeleteExchanges,
// retention, the admin's purge), before the rows go.

// reparentForks keeps the families of exchanges about to be deleted whole:
// the forks of a deleted fork become forks of its parent, at the smaller of
// the two fork seqs (their logs share exactly that much); the forks of a
// deleted root become forks of its oldest fork, which becomes the root.
// That is true of their logs as well: a fork shares with its parent's
// parent the entries before the smaller fork seq. Without it, ON DELETE SET
// NULL would cut the forks off into families of their own.
func (s *Store) reparentForks(tx *gorm.DB, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	var parents []int64
	if err := tx.Model(&Exchange{}).Distinct("forked_from_id").Where("forked_from_id IN ?", ids).
		Order("forked_from_id").Scan(&parents).Error; err != nil {
		return err
	}
	least := "MIN"
	if s.dialect == "postgres" {
		least = "LEAST"
	}
	for _, id := range parents {
		// Read afresh: an earlier step may have moved this one too.
		var d Exchange
		if err := tx.Select("id, forked_from_id, forked_at_seq").Take(&d, id).Error; err != nil {
			return err
		}
		if d.ForkedFromID != nil {
			if err := tx.Exec("UPDATE exchanges SET forked_from_id = ?, forked_at_seq = "+least+"(forked_at_seq, ?) WHERE forked_from_id = ?",
				*d.ForkedFromID, *d.ForkedAtSeq, d.ID).Error; err != nil {
				return err
			}
			continue
		}
		var heir Exchange
		if err := tx.Select("id, forked_at_seq").Where("forked_from_id = ?", d.ID).Order("id").Take(&heir).Error; err != nil {
			return err
		}
		if err := tx.Exec("UPDATE exchanges SET forked_from_id = ?, forked_at_seq = "+least+"(forked_at_seq, ?) WHERE forked_from_id = ? AND id <> ?",
			heir.ID, *heir.ForkedAtSeq, d.ID, heir.ID).Error; err != nil {
			return err
		}
		if err := tx.Exec("UPDATE exchanges SET forked_from_id = NULL, forked_at_seq = NULL WHERE id = ?", heir.ID).Error; err != nil {
			return err
		}
	}
	return nil
}
