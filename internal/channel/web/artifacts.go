package web

import (
	"errors"
	"mime"
	"net/http"
	"strings"

	"github.com/homard/homard/internal/channel"
)

// artifactCSP is the policy every artifact is served under. An artifact
// is hostile content (a web page's text, a file a tool made): sandbox
// gives a document opened from it an opaque origin with no script, so
// it can never act as the gateway's origin (read /api, use the cookie),
// and default-src 'none' lets it load nothing.
const artifactCSP = "sandbox; default-src 'none'" // lang:en

// inlineImages are the only types served as themselves: pictures a
// browser draws and never runs. Anything else is a download.
var inlineImages = map[string]bool{"image/png": true, "image/jpeg": true}

// artifact serves GET /api/artifacts/{id}: text as text/plain, a PNG or
// JPEG inline, anything else as an attachment, each with nosniff and the
// sandbox CSP; 404 when the id is unknown, another owner's, or the server
// keeps no artifacts.
func (s *Server) artifact(w http.ResponseWriter, r *http.Request) {
	if s.o.Artifacts == nil {
		writeError(w, http.StatusNotFound, "this server has no artifacts to show") // lang:en
		return
	}
	a, err := s.o.Artifacts.Artifact(r.Context(), r.PathValue("id"))
	if err != nil {
		if errors.Is(err, channel.ErrNotFound) {
			writeError(w, http.StatusNotFound, "no such artifact") // lang:en
			return
		}
		s.fail(w, err)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", artifactCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	switch {
	case a.MIME == "":
		h.Set("Content-Type", "text/plain; charset=utf-8") // lang:en
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(a.Text))
		return
	case inlineImages[a.MIME]:
		h.Set("Content-Type", a.MIME)
		h.Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": fileName(a.Name, a.ID)}))
	default:
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": fileName(a.Name, a.ID)}))
	}
	w.WriteHeader(http.StatusOK)
	w.Write(a.Data)
}

// fileName is name cut to what a Content-Disposition may offer safely:
// ASCII letters, digits, '.', '-' and '_' (anything else becomes '_'), no
// leading dot, at most 100 bytes; "artifact-ID" (sanitised too) when
// nothing is left.
func fileName(name, id string) string {
	clean := func(s string) string {
		b := []byte(s)
		for i, c := range b {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
				b[i] = '_'
			}
		}
		out := strings.TrimLeft(string(b), ".")
		if len(out) > 100 {
			out = out[len(out)-100:] // keep the extension
			out = strings.TrimLeft(out, ".")
		}
		return out
	}
	if n := clean(name); strings.Trim(n, "_") != "" {
		return n
	}
	return clean("artifact-" + id)
}
