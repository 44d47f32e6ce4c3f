package tools

import (
	"errors"
	"testing"

	"github.com/homard/homard/internal/tool"
)

// TestUpTo: a count the model may leave out (recall's limit, web_search's
// count, http_get's max_bytes) defaults when zero and is an argument error
// outside 1..most, naming the argument.
func TestUpTo(t *testing.T) {
	for _, c := range []struct {
		n, want int
		err     string
	}{
		{0, 5, ""},
		{1, 1, ""},
		{8, 8, ""},
		{9, 0, "count must be between 1 and 8"},
		{-1, 0, "count must be between 1 and 8"},
	} {
		got, err := upTo("count", c.n, 5, 8)
		var arg *tool.ArgError
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("upTo(count, %d, 5, 8) = %d, %v; want %d", c.n, got, err, c.want)
		case c.err != "" && (!errors.As(err, &arg) || arg.Reason != c.err):
			t.Errorf("upTo(count, %d, 5, 8) = %d, %v; want the argument error %q", c.n, got, err, c.err)
		}
	}
}
