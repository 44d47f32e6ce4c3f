package pgstore

import (
	"strconv"
	"strings"
)

// Translate returns query, written in SQLite's dialect as package store
// writes it, in PostgreSQL's: a ? parameter becomes $n, numbered as SQLite
// numbers it (one more than the largest number so far), and ?NNN becomes
// $NNN. Text inside string literals, quoted identifiers and comments is
// left as it is. The store's SQL is homard's own (constants and fixed
// fragments, never input), so this small scanner is all the parsing the
// translation needs; what it cannot translate, PostgreSQL refuses when
// the statement is prepared — the conformance suite runs every query.
func Translate(query string) string {
	if !strings.ContainsRune(query, '?') {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	largest := 0
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			j := closing(query, i+1, c)
			b.WriteString(query[i:j])
			i = j
		case c == '-' && strings.HasPrefix(query[i:], "--"):
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				j = len(query) - i
			}
			b.WriteString(query[i : i+j])
			i += j
		case c == '/' && strings.HasPrefix(query[i:], "/*"):
			j := strings.Index(query[i+2:], "*/")
			end := len(query)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			b.WriteString(query[i:end])
			i = end
		case c == '?':
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			n := largest + 1
			if j > i+1 {
				n, _ = strconv.Atoi(query[i+1 : j])
			}
			largest = max(largest, n)
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// closing returns the index just past the quote that closes the literal
// opened by quote before from; a doubled quote inside is an escaped one.
func closing(s string, from int, quote byte) int {
	for i := from; i < len(s); i++ {
		if s[i] != quote {
			continue
		}
		if i+1 < len(s) && s[i+1] == quote {
			i++
			continue
		}
		return i + 1
	}
	return len(s)
}
