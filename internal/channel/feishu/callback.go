package feishu

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Errors of VerifyCallback.
var (
	ErrBadSignature = errors.New("feishu callback: signature does not match")
	ErrClockSkew    = errors.New("feishu callback: timestamp is more than 5 minutes away from now")
	ErrBadEncrypted = errors.New("feishu callback: cannot decrypt the body")
)

// MaxSkew is the largest difference VerifyCallback accepts between a
// callback's timestamp and now.
const MaxSkew = 5 * time.Minute

// VerifyCallback checks one HTTP event callback (the opt-in callback
// mode; the long connection needs none of this) and returns the event
// JSON. It is pure: the caller passes the clock, and refusing a replayed
// event id is the caller's job (the inbox).
//
//   - X-Lark-Signature must be the hex SHA-256 of the concatenation of
//     X-Lark-Request-Timestamp, X-Lark-Request-Nonce, encryptKey and the
//     body, compared in constant time;
//   - the timestamp (Unix seconds) must be within MaxSkew of now;
//   - a body {"encrypt": "…"} is decrypted: AES-256-CBC with the key
//     SHA-256(encryptKey), the IV the ciphertext's first 16 bytes, PKCS#7
//     padding, all base64.
//
// encryptKey must not be empty: without it Feishu signs nothing.
func VerifyCallback(h http.Header, body []byte, encryptKey string, now time.Time) ([]byte, error) {
	if encryptKey == "" {
		return nil, errors.New("feishu callback: no encrypt key configured; set one in the app's event settings and in the vault")
	}
	ts := h.Get("X-Lark-Request-Timestamp")
	nonce := h.Get("X-Lark-Request-Nonce")
	sig := h.Get("X-Lark-Signature")
	sum := sha256.Sum256([]byte(ts + nonce + encryptKey + string(body)))
	want := hex.EncodeToString(sum[:])
	if subtle.ConstantTimeCompare([]byte(want), []byte(sig)) != 1 {
		return nil, ErrBadSignature
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w (timestamp %q)", ErrClockSkew, ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > MaxSkew || d < -MaxSkew {
		return nil, ErrClockSkew
	}
	var enc struct {
		Encrypt *string `json:"encrypt"`
	}
	if json.Unmarshal(body, &enc) != nil || enc.Encrypt == nil {
		return body, nil
	}
	plain, err := decrypt(*enc.Encrypt, encryptKey)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadEncrypted, err)
	}
	return plain, nil
}

func decrypt(b64, encryptKey string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, err
	}
	if len(raw) < 2*aes.BlockSize || len(raw)%aes.BlockSize != 0 {
		return nil, errors.New("ciphertext length is not a whole number of blocks")
	}
	key := sha256.Sum256([]byte(encryptKey))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, err
	}
	iv, data := raw[:aes.BlockSize], append([]byte{}, raw[aes.BlockSize:]...)
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(data, data)
	n := int(data[len(data)-1])
	if n == 0 || n > aes.BlockSize || !bytes.Equal(data[len(data)-n:], bytes.Repeat([]byte{byte(n)}, n)) {
		return nil, errors.New("bad padding")
	}
	return data[:len(data)-n], nil
}
