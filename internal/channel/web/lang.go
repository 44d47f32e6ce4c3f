package web

import (
	"io/fs"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/homard/homard/internal/lang"
)

// langAnswer is GET /api/lang: the language the web UI speaks and the
// Chinese catalog its scripts translate with (issue 26 point 3). Lang is
// "en", "zh" or "auto" (the browser's navigator.language decides);
// Messages is empty for "en". The API's own fields and errors stay
// English.
type langAnswer struct {
	Lang     string            `json:"lang"`
	Messages map[string]string `json:"messages"`
}

// lang answers GET /api/lang.
func (s *Server) lang(w http.ResponseWriter, r *http.Request) {
	a := langAnswer{Lang: "auto", Messages: map[string]string{}}
	if t, ok := lang.Parse(s.o.Lang); ok {
		a.Lang = t.String()
	}
	if a.Lang != "en" {
		keys := s.uiKeys()
		for k, v := range lang.Catalog(lang.ZH) {
			if keys[k] {
				a.Messages[k] = v
			}
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, a)
}

// scriptKey is a script's t("…") call with a double-quoted key, as
// internal/lang/langscan reads it for the catalog test.
var scriptKey = regexp.MustCompile(`\bt\("((?:[^"\\]|\\.)*)"`)

// scriptKeys reads the keys the UI's scripts pass to t("…"), so that
// /api/lang sends their translations alone rather than the whole catalog
// (the CLI's and the chats' too: about a thousand entries).
func scriptKeys(ui fs.FS) map[string]bool {
	keys := map[string]bool{}
	if ui == nil {
		return keys
	}
	names, _ := fs.Glob(ui, "*.js")
	for _, name := range names {
		src, err := fs.ReadFile(ui, name)
		if err != nil {
			continue
		}
		for _, m := range scriptKey.FindAllSubmatch(src, -1) {
			if k, err := strconv.Unquote(`"` + string(m[1]) + `"`); err == nil {
				keys[k] = true
			}
		}
	}
	return keys
}

// pagePrinter is the language of the server's own small pages (login,
// an invalid login link): the config's lang, or with "auto" the first
// language of the request's Accept-Language.
func (s *Server) pagePrinter(r *http.Request) lang.Printer {
	if t, ok := lang.Parse(s.o.Lang); ok {
		return lang.For(t)
	}
	first, _, _ := strings.Cut(r.Header.Get("Accept-Language"), ",")
	first, _, _ = strings.Cut(first, ";")
	t, _ := lang.Parse(first)
	return lang.For(t)
}

// page is one of the server's small pages in p's language: a heading and
// a paragraph, both translated already (the paragraph holds markup of
// ours, never text from elsewhere).
func page(p lang.Printer, heading, body string) string {
	return `<!doctype html><html lang="` + p.Tag().String() + `"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>homard</title></head><body>` + // lang:en
		"<h1>" + heading + "</h1><p>" + body + "</p></body></html>"
}
