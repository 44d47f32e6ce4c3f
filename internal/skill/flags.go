package skill

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// Flag kinds: what a reviewer should look at before trusting a skill.
const (
	FlagPipeToShell = "pipe-to-shell" // curl … | sh: runs whatever a server sends
	FlagBase64      = "base64-blob"   // a long base64 run or a base64 decode: hidden content
	FlagNetwork     = "network-fetch" // a script that reaches the network itself
	FlagBinary      = "binary"        // a file that cannot be read as text
)

// Flag is one red flag found in a skill's files. Excerpt is the file's own
// text: print it through termtext.
type Flag struct {
	Kind    string `json:"kind"`
	File    string `json:"file"`
	Line    int    `json:"line"` // 1-based; 0 for a whole file
	Excerpt string `json:"excerpt"`
}

// maxExcerpt caps a flag's excerpt, in bytes.
const maxExcerpt = 160

// flagRule is one red-flag pattern.
type flagRule struct {
	kind string
	re   *regexp.Regexp
}

// flagRules are compiled on first use (`homard skill add`), not at every
// start: the base64 pattern's counted repetition alone compiles to about
// 300 KB that an idle homard serve need not hold. Laziness through the
// stdlib's sync.OnceValue, as the policy catalog does.
var flagRules = sync.OnceValue(func() []flagRule {
	return []flagRule{
		// A download piped or substituted into an interpreter.
		{FlagPipeToShell, regexp.MustCompile(`\b(curl|wget|fetch)\b[^|\n]*\|\s*(sudo\s+)?(\S*/)?(ba|da|k|z|fi)?sh\b`)},
		{FlagPipeToShell, regexp.MustCompile(`\b(curl|wget)\b[^|\n]*\|\s*(sudo\s+)?(\S*/)?(python[0-9.]*|perl|ruby|node)\b`)},
		{FlagPipeToShell, regexp.MustCompile(`\b(ba|da|k|z)?sh\s+(-c\s+)?["']?(<\(|\$\()\s*(curl|wget)\b`)},
		{FlagBase64, regexp.MustCompile(`[A-Za-z0-9+/]{200,}={0,2}`)},
		{FlagBase64, regexp.MustCompile(`\bbase64\s+(-d|--decode|-D)\b|\bb64decode\b|\batob\(`)},
		{FlagNetwork, regexp.MustCompile(`\b(curl|wget|nc|ncat|netcat|socat|telnet|ssh|scp|rsync)\s`)},
		{FlagNetwork, regexp.MustCompile(`\b(urllib|requests\.(get|post|put|delete|request|session)|http\.client|httpx|aiohttp|socket\.socket|urlopen)\b`)},
		{FlagNetwork, regexp.MustCompile(`/dev/tcp/|/dev/udp/|\bfetch\(|\bXMLHttpRequest\b|\bnet/http\b|\bInvoke-WebRequest\b`)},
	}
})

// Scan returns the red flags in a tree's files: at most one per kind and
// line, in file and line order.
func Scan(t Tree) []Flag {
	var out []Flag
	for _, f := range t.Files {
		if f.Dir {
			continue
		}
		if !utf8.Valid(f.Data) || bytes.IndexByte(f.Data, 0) >= 0 {
			out = append(out, Flag{Kind: FlagBinary, File: f.Path, Excerpt: "binary content: it cannot be reviewed as text"})
			continue
		}
		for i, line := range strings.Split(string(f.Data), "\n") {
			seen := map[string]bool{}
			for _, r := range flagRules() {
				if seen[r.kind] {
					continue
				}
				loc := r.re.FindStringIndex(line)
				if loc == nil {
					continue
				}
				seen[r.kind] = true
				out = append(out, Flag{Kind: r.kind, File: f.Path, Line: i + 1, Excerpt: excerpt(line, loc)})
			}
		}
	}
	return out
}

// excerpt cuts a line around a match to at most maxExcerpt bytes.
func excerpt(line string, loc []int) string {
	line = strings.TrimRight(line, "\r")
	if len(line) <= maxExcerpt {
		return strings.TrimSpace(line)
	}
	start := max(0, loc[0]-20)
	end := min(len(line), start+maxExcerpt)
	for start > 0 && !utf8.RuneStart(line[start]) {
		start--
	}
	for end < len(line) && !utf8.RuneStart(line[end]) {
		end--
	}
	s := line[start:end]
	if start > 0 {
		s = "…" + s
	}
	if end < len(line) {
		s += "…"
	}
	return s
}
