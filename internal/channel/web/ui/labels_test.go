package ui_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/homard/homard/internal/lang/langscan"
)

// notWords are index.html's texts that are not words to translate: the
// product's name, punctuation and example values of inputs.
var notWords = map[string]bool{"homard": true, ".": true, "digest": true, "1d, 6h, 90m": true, "Europe/Paris": true,
	"read_file, http_get": true, "https://": true, "10d": true}

// TestPageLabelsAreListed (issue 26 point 3): every text of index.html a
// person reads — its text nodes but code, and its placeholder,
// aria-label and title attributes — is one of lang.js's pageLabels, so
// the catalog test holds it to a Chinese entry and the page translates
// it at load. A label added to the page and not to the list fails here.
func TestPageLabelsAreListed(t *testing.T) {
	dir := filepath.Join("static")
	src, err := os.ReadFile(filepath.Join(dir, "lang.js"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, k := range langscan.ScanJS(string(src)) {
		listed[k] = true
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	var found int
	z := html.NewTokenizer(strings.NewReader(string(page)))
	var stack []string
	for tt := z.Next(); tt != html.ErrorToken; tt = z.Next() {
		tok := z.Token()
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			if tt == html.StartTagToken {
				stack = append(stack, tok.Data)
			}
			for _, a := range tok.Attr {
				if a.Key == "placeholder" || a.Key == "aria-label" || a.Key == "title" {
					found++
					if !notWords[a.Val] && !listed[a.Val] {
						t.Errorf("index.html: %s=%q is not in lang.js's pageLabels", a.Key, a.Val)
					}
				}
			}
		case html.EndTagToken:
			if n := len(stack); n > 0 {
				stack = stack[:n-1]
			}
		case html.TextToken:
			s := strings.TrimSpace(tok.Data)
			if s == "" || len(stack) == 0 {
				continue
			}
			if in := stack[len(stack)-1]; in == "code" || in == "title" || in == "script" || in == "style" {
				continue
			}
			found++
			if !notWords[s] && !listed[s] {
				t.Errorf("index.html: text %q is not in lang.js's pageLabels", s)
			}
		}
	}
	if found < 50 {
		t.Errorf("read %d labels from index.html; want the page's labels (more than 50)", found)
	}
}
