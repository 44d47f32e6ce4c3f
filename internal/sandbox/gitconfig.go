package sandbox

import (
	"bytes"
	"strings"
)

// gitConfigKeep lists the repository config keys a sandboxed git may see,
// as "section.key" or "section.*.key" (any subsection). Everything else is
// dropped from the copy bound over the repository's own config: drivers,
// filters, textconv, includes, fsmonitor, hooks paths, ssh/gpg/credential
// programs, uploadpack and alternate-refs commands, pagers, editors,
// aliases — every key that names a program or another file. Dropping a
// key only makes git fall back to its default, so the list is kept short.
//
// This is a hand-rolled reader of git's config syntax (no Go library reads
// it without also honouring includes); it is conservative: a line it does
// not understand is dropped.
var gitConfigKeep = map[string]bool{
	"core.repositoryformatversion": true, "core.filemode": true, "core.bare": true,
	"core.logallrefupdates": true, "core.ignorecase": true, "core.precomposeunicode": true,
	"core.symlinks": true, "core.autocrlf": true, "core.eol": true, "core.safecrlf": true,
	"core.quotepath": true, "core.abbrev": true, "core.compression": true, "core.checkstat": true,
	"extensions.objectformat": true, "extensions.refstorage": true, "extensions.noop": true,
	"remote.*.url": true, "remote.*.fetch": true, "remote.*.pushurl": true,
	"branch.*.remote": true, "branch.*.merge": true, "branch.*.rebase": true,
	"user.name": true, "user.email": true, "init.defaultbranch": true,
	"diff.renames": true, "diff.algorithm": true, "diff.mnemonicprefix": true, "diff.noprefix": true,
	"diff.context": true, "diff.indentheuristic": true, "diff.colormoved": true,
	"merge.ff": true, "merge.conflictstyle": true, "pull.rebase": true, "pull.ff": true,
	"push.default": true, "status.showuntrackedfiles": true, "status.short": true,
	"log.date": true, "log.decorate": true, "color.ui": true, "commit.verbose": true,
	"fetch.prune": true, "gc.auto": true, "rerere.enabled": true,
}

// sanitizeGitConfig returns the lines of a repository config whose keys
// are on gitConfigKeep, under their section headers.
func sanitizeGitConfig(in []byte) []byte {
	var out bytes.Buffer
	section, sub := "", ""
	header := ""      // the current section's header line, written before its first kept key
	headerOut := true // whether header has been written
	cont := false     // the previous kept-or-dropped line ended in a backslash
	keepCont := false
	for _, raw := range strings.Split(string(in), "\n") {
		line := strings.TrimRight(raw, "\r")
		if cont {
			cont = strings.HasSuffix(line, "\\")
			if keepCont {
				out.WriteString(line + "\n")
			}
			continue
		}
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		if t[0] == '[' {
			section, sub = parseSectionHeader(t)
			header, headerOut = "", true
			if section != "" {
				header, headerOut = gitHeader(section, sub), false
			}
			continue
		}
		if section == "" {
			cont, keepCont = strings.HasSuffix(t, "\\"), false
			continue
		}
		name, _, _ := strings.Cut(t, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		key := section + "." + name
		if sub != "" {
			key = section + ".*." + name
		}
		keep := validGitName(name) && gitConfigKeep[key]
		cont, keepCont = strings.HasSuffix(t, "\\"), keep
		if !keep {
			continue
		}
		if !headerOut {
			out.WriteString(header + "\n")
			headerOut = true
		}
		out.WriteString("\t" + t + "\n")
	}
	return out.Bytes()
}

// parseSectionHeader reads `[section]`, `[section "sub"]` or the old
// `[section.sub]`; it returns "" for anything else (whose keys are then
// dropped). A header followed by a key on the same line is not understood
// and dropped too.
func parseSectionHeader(t string) (section, sub string) {
	end := strings.LastIndexByte(t, ']')
	if end < 0 || strings.TrimSpace(t[end+1:]) != "" {
		return "", ""
	}
	body := t[1:end]
	if name, rest, ok := strings.Cut(body, " "); ok {
		rest = strings.TrimSpace(rest)
		if len(rest) < 2 || rest[0] != '"' || rest[len(rest)-1] != '"' {
			return "", ""
		}
		sub = rest[1 : len(rest)-1]
		if strings.ContainsAny(sub, "\"\\\n") || !validGitName(strings.ToLower(name)) {
			return "", ""
		}
		return strings.ToLower(name), sub
	}
	if name, s, ok := strings.Cut(body, "."); ok {
		if !validGitName(strings.ToLower(name)) || strings.ContainsAny(s, "\"\\ ") {
			return "", ""
		}
		return strings.ToLower(name), s
	}
	if !validGitName(strings.ToLower(body)) {
		return "", ""
	}
	return strings.ToLower(body), ""
}

func gitHeader(section, sub string) string {
	if sub == "" {
		return "[" + section + "]"
	}
	return "[" + section + " \"" + sub + "\"]"
}

// validGitName: letters, digits and '-', starting with a letter.
func validGitName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
