package arbiter

import (
	"bytes"
	"encoding/json"
)

// normalizeArgs rewrites every JSON string literal in raw with minimal
// escaping, so that "\u0073k-…" reaches the redactor as "sk-…". Everything
// outside string literals is copied as is, so duplicate keys and malformed
// input survive for the audit record. A literal that does not decode is
// copied unchanged.
func normalizeArgs(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) // no escapes: nothing to normalize
	}
	var out bytes.Buffer
	out.Grow(len(raw))
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	for i := 0; i < len(raw); {
		if raw[i] != '"' {
			out.WriteByte(raw[i])
			i++
			continue
		}
		end := i + 1
		for end < len(raw) && raw[end] != '"' {
			if raw[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(raw) {
			out.Write(raw[i:])
			break
		}
		lit := raw[i : end+1]
		var s string
		if json.Unmarshal(lit, &s) != nil || enc.Encode(s) != nil {
			out.Write(lit)
		} else {
			out.Truncate(out.Len() - 1) // Encode's newline
		}
		i = end + 1
	}
	return out.String()
}
