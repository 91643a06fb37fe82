package agents

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// SecretBox encrypts connections' API keys at rest (AES-256-GCM). Its key
// lives outside the database, so that a copy of the database (a backup, an
// export) does not hold usable keys.
type SecretBox struct{ aead cipher.AEAD }

// NewSecretBox derives the box's key from a secret of any length.
func NewSecretBox(secret string) (*SecretBox, error) {
	if strings.TrimSpace(secret) == "" {
		return nil, errors.New("the secret key is empty")
	}
	k := sha256.Sum256([]byte(secret))
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &SecretBox{aead: aead}, nil
}

// SecretKeyFile reads the secret key kept in path, making it (random, mode
// 0600) on first start.
func SecretKeyFile(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read secret key: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	key := hex.EncodeToString(raw)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) { // another process made it first
		return SecretKeyFile(path)
	}
	if err != nil {
		return "", fmt.Errorf("make secret key: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(key + "\n"); err != nil {
		return "", fmt.Errorf("make secret key: %w", err)
	}
	return key, f.Sync()
}

// Seal encrypts a key for storage ("" stays "").
func (b *SecretBox) Seal(plain string) (string, error) {
	if plain == "" {
		return "", nil
	}
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return "v1:" + base64.StdEncoding.EncodeToString(b.aead.Seal(nonce, nonce, []byte(plain), nil)), nil
}

// errSealed means a stored key cannot be opened: the secret key changed.
var errSealed = errors.New("a connection's API key cannot be decrypted: was --secret-key changed?")

// Open decrypts a stored key.
func (b *SecretBox) Open(sealed string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(sealed, "v1:"))
	n := b.aead.NonceSize()
	if err != nil || len(raw) < n {
		return "", errSealed
	}
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], nil)
	if err != nil {
		return "", errSealed
	}
	return string(plain), nil
}
