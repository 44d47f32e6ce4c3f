package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
)

// TestResolveLogFormat: auto logs JSON when stderr is not a terminal (a
// pipe, a buffer: a service or a container); text and json are taken as
// given; anything else is a usage error (exit 2).
func TestResolveLogFormat(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	for _, tc := range []struct {
		flag   string
		stderr io.Writer
		want   string
	}{
		{"auto", pw, "json"},
		{"auto", &bytes.Buffer{}, "json"},
		{"", pw, "json"},
		{"text", pw, "text"},
		{"json", pw, "json"},
	} {
		got, err := (&cli{}).resolveLogFormat(tc.flag, tc.stderr)
		if err != nil || got != tc.want {
			t.Errorf("resolveLogFormat(%q, %T) = %q, %v; want %q", tc.flag, tc.stderr, got, err, tc.want)
		}
	}
	_, err = (&cli{}).resolveLogFormat("yaml", pw)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitUsage {
		t.Errorf("resolveLogFormat(yaml) = %v; want a usage error (exit %d)", err, exitUsage)
	}
}
