package models

import (
	"errors"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// An import's projects, the account's instructions and memory entries
// (issue 27). What the account has already is kept as it is: a project
// of the same uid, or of the same name in the same place (names are
// unique there), takes the file's chats in it.

// projectByUID is the id of the account's project with this uid (one the
// import stored or matched, or one it had); none refuses the item.
func (im *importer) projectByUID(uid string) (int64, error) {
	if id, ok := im.projectUIDs[uid]; ok {
		return id, nil
	}
	var p Project
	err := im.tx.Select("id").Where("user_id = ? AND "+uidIs, im.userID, uid).Take(&p).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return 0, refuse("project_uid %s names no project of the file or the account", uid)
	}
	return p.ID, err
}

func (im *importer) project(p *ExportedProject) error {
	if im.projectUIDs == nil {
		im.projectUIDs = map[string]int64{}
	}
	var have []Project
	if err := im.tx.Select("id").Where("user_id = ? AND "+uidIs, im.userID, p.UID).Limit(1).Find(&have).Error; err != nil {
		return err
	}
	if len(have) > 0 {
		im.projectUIDs[p.UID] = have[0].ID
		im.n.SkippedProjects++
		return nil
	}
	row := Project{UID: p.UID, UserID: im.userID, Name: strings.TrimSpace(p.Name), Instructions: p.Instructions,
		Memory: p.Memory, AgentType: p.AgentType, CreatedAt: p.CreatedAt.UTC(), UpdatedAt: p.UpdatedAt.UTC()}
	same := im.tx.Select("id").Where("user_id = ? AND name = ?", im.userID, row.Name)
	if p.ParentUID != nil && *p.ParentUID != "" {
		parent, err := im.projectByUID(*p.ParentUID)
		if err != nil {
			return err
		}
		var up Project
		if err := im.tx.Select("id, parent_id").Where("id = ?", parent).Take(&up).Error; err != nil {
			return err
		}
		if up.ParentID != nil {
			return refuse("project %s nests more than one level deep", p.UID)
		}
		row.ParentID = &parent
		same = same.Where("parent_id = ?", parent)
	} else {
		same = same.Where("parent_id IS NULL")
	}
	if err := same.Limit(1).Find(&have).Error; err != nil {
		return err
	}
	if len(have) > 0 {
		im.projectUIDs[p.UID] = have[0].ID
		im.n.SkippedProjects++
		return nil
	}
	if err := im.tx.Create(&row).Error; err != nil {
		return err
	}
	im.projectUIDs[p.UID] = row.ID
	im.projectIDs = append(im.projectIDs, row.ID)
	im.n.Projects++
	return im.projectFiles(row.ID, p.FileUIDs)
}

// projectFiles makes a project the import stored hold its files, named by
// uid: files of the file (earlier lines) or of the account.
func (im *importer) projectFiles(projectID int64, uids []string) error {
	for _, uid := range uids {
		_, id, err := im.fileUID(uid)
		if err != nil {
			return err
		}
		if id == 0 {
			return refuse("project holds file %s, which is neither in the file (before it) nor in the account", uid)
		}
		if err := im.tx.Clauses(clause.OnConflict{DoNothing: true}).
			Create(&ProjectFile{ProjectID: projectID, FileID: id, CreatedAt: now()}).Error; err != nil {
			return err
		}
	}
	return nil
}

func (im *importer) instructions(in *AccountInstructions) error {
	var n int64
	if err := im.tx.Model(&AccountInstructions{}).Where("user_id = ?", im.userID).Count(&n).Error; err != nil {
		return err
	}
	if n > 0 {
		return nil // the account's own stand
	}
	row := AccountInstructions{UserID: im.userID, About: in.About, Style: in.Style, Memory: in.Memory, UpdatedAt: in.UpdatedAt.UTC()}
	if err := im.tx.Create(&row).Error; err != nil {
		return err
	}
	im.instructionIDs = append(im.instructionIDs, row.ID)
	im.n.Instructions = true
	return nil
}

func (im *importer) memory(m *ExportedMemory) error {
	var have int64
	if err := im.tx.Model(&Memory{}).Where("user_id = ? AND "+uidIs, im.userID, m.UID).Count(&have).Error; err != nil {
		return err
	}
	if have > 0 {
		im.n.SkippedMemories++
		return nil
	}
	var n int64
	if err := im.tx.Model(&Memory{}).Where("user_id = ?", im.userID).Count(&n).Error; err != nil {
		return err
	}
	if n >= MaxMemories {
		return refuse("%v", ErrMemoryFull)
	}
	row := Memory{UID: m.UID, UserID: im.userID, Content: m.Content, Source: m.Source,
		CreatedAt: m.CreatedAt.UTC(), UpdatedAt: m.UpdatedAt.UTC()}
	if m.ExchangeUID != nil && *m.ExchangeUID != "" {
		var ex []Exchange
		if err := im.tx.Select("id").Where("user_id = ? AND "+uidIs, im.userID, *m.ExchangeUID).Limit(1).Find(&ex).Error; err != nil {
			return err
		}
		if len(ex) > 0 {
			row.ExchangeID = &ex[0].ID
		}
	}
	if err := im.tx.Create(&row).Error; err != nil {
		return err
	}
	im.memoryIDs = append(im.memoryIDs, row.ID)
	im.n.Memories++
	return nil
}
