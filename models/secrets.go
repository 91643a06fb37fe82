package models

import (
	"context"
	"crypto/rand"
	"time"

	"gorm.io/gorm/clause"
)

// ServerSecret is a random key the server signs with, made once per
// database so every process that shares the database signs alike.
type ServerSecret struct {
	Name      string    `gorm:"primaryKey"`
	Secret    []byte    `gorm:"not null"`
	CreatedAt time.Time `gorm:"not null"`
}

// serverSecretSize is 256 bits, as much as HMAC-SHA256 uses.
const serverSecretSize = 32

// ServerSecret returns the secret called name, making it on first use. Two
// processes asking at once get the same secret: the first insert wins.
func (s *Store) ServerSecret(ctx context.Context, name string) ([]byte, error) {
	b := make([]byte, serverSecretSize)
	if _, err := rand.Read(b); err != nil {
		return nil, wrap("server secret", err)
	}
	db := s.db.WithContext(ctx)
	err := db.Clauses(clause.OnConflict{DoNothing: true}).
		Create(&ServerSecret{Name: name, Secret: b, CreatedAt: now()}).Error
	if err != nil {
		return nil, wrap("server secret", err)
	}
	var sec ServerSecret
	if err := db.Take(&sec, "name = ?", name).Error; err != nil {
		return nil, wrap("server secret", err)
	}
	return sec.Secret, nil
}
