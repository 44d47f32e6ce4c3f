package feishu

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// sign computes Feishu's signature the way the docs describe it.
func sign(ts, nonce, key string, body []byte) string {
	sum := sha256.Sum256([]byte(ts + nonce + key + string(body)))
	return hex.EncodeToString(sum[:])
}

// encrypt is Feishu's event encryption: AES-256-CBC, key SHA-256 of the
// encrypt key, a 16-byte IV in front, PKCS#7 padding, base64.
func encrypt(t *testing.T, key string, plain []byte) string {
	t.Helper()
	k := sha256.Sum256([]byte(key))
	block, err := aes.NewCipher(k[:])
	if err != nil {
		t.Fatal(err)
	}
	n := aes.BlockSize - len(plain)%aes.BlockSize
	data := append(append([]byte{}, plain...), bytes.Repeat([]byte{byte(n)}, n)...)
	iv := []byte("0123456789abcdef")
	out := make([]byte, len(data))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(out, data)
	return base64.StdEncoding.EncodeToString(append(iv, out...))
}

func TestVerifyCallback(t *testing.T) {
	const key = "encrypt-key-1"
	now := time.Unix(1764600000, 0)
	plain := []byte(`{"schema":"2.0","header":{"event_id":"e1"}}`)
	encBody := []byte(`{"encrypt":"` + encrypt(t, key, plain) + `"}`)
	headers := func(ts time.Time, nonce, sig string) http.Header {
		h := http.Header{}
		h.Set("X-Lark-Request-Timestamp", strconv.FormatInt(ts.Unix(), 10))
		h.Set("X-Lark-Request-Nonce", nonce)
		h.Set("X-Lark-Signature", sig)
		return h
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	good := sign(ts, "n1", key, encBody)
	badCipher := []byte(`{"encrypt":"` + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32)) + `"}`)
	cases := []struct {
		name string
		h    http.Header
		body []byte
		key  string
		want []byte
		err  error
	}{
		{"encrypted body, good signature", headers(now, "n1", good), encBody, key, plain, nil},
		{"plain body, good signature", headers(now, "n1", sign(ts, "n1", key, plain)), plain, key, plain, nil},
		{"4 minutes of skew", headers(now.Add(-4*time.Minute), "n1", sign(strconv.FormatInt(now.Add(-4*time.Minute).Unix(), 10), "n1", key, plain)), plain, key, plain, nil},
		{"signature of another body", headers(now, "n1", good), append([]byte(" "), encBody...), key, nil, ErrBadSignature},
		{"signature with another key", headers(now, "n1", sign(ts, "n1", "other", encBody)), encBody, key, nil, ErrBadSignature},
		{"signature with another nonce", headers(now, "n2", good), encBody, key, nil, ErrBadSignature},
		{"no signature", headers(now, "n1", ""), encBody, key, nil, ErrBadSignature},
		{"6 minutes old", headers(now.Add(-6*time.Minute), "n1", sign(strconv.FormatInt(now.Add(-6*time.Minute).Unix(), 10), "n1", key, plain)), plain, key, nil, ErrClockSkew},
		{"6 minutes ahead", headers(now.Add(6*time.Minute), "n1", sign(strconv.FormatInt(now.Add(6*time.Minute).Unix(), 10), "n1", key, plain)), plain, key, nil, ErrClockSkew},
		{"bad ciphertext", headers(now, "n1", sign(ts, "n1", key, badCipher)), badCipher, key, nil, ErrBadEncrypted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := VerifyCallback(c.h, c.body, c.key, now)
			if !errors.Is(err, c.err) || (c.err == nil && err != nil) {
				t.Fatalf("VerifyCallback err = %v; want %v", err, c.err)
			}
			if !bytes.Equal(got, c.want) {
				t.Errorf("VerifyCallback = %q; want %q", got, c.want)
			}
		})
	}
	if _, err := VerifyCallback(headers(now, "n1", sign(ts, "n1", "", plain)), plain, "", now); err == nil {
		t.Error("VerifyCallback with no encrypt key succeeded; want an error")
	}
}
