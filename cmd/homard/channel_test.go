package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestPairWaitErr: a code used in time is success (it was reported as
// "no one used the code": errors.Is(nil, nil) holds), a lapsed wait says
// what to do next, and other errors pass through.
func TestPairWaitErr(t *testing.T) {
	live := context.Background()
	lapsed, cancel := context.WithTimeout(live, 0)
	defer cancel()
	<-lapsed.Done()
	other := errors.New("read pairing: disk I/O error")
	tests := []struct {
		name      string
		err       error
		ctx, wait context.Context
		want      string // "" for nil
	}{
		{"used in time", nil, live, live, ""},
		{"no one used it", lapsed.Err(), live, lapsed, "no one used the code within 10m0s; run `homard pair telegram` again"},
		{"another error", other, live, live, other.Error()},
		{"the command was cancelled", context.Canceled, lapsed, lapsed, context.Canceled.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := (&cli{}).pairWaitErr(tt.err, tt.ctx, tt.wait, 10*time.Minute, "telegram")
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("pairWaitErr = %v; want nil", got)
			case tt.want != "" && (got == nil || !strings.Contains(got.Error(), tt.want)):
				t.Errorf("pairWaitErr = %v; want %q", got, tt.want)
			}
		})
	}
}
