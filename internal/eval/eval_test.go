package eval

import (
	"context"
	"testing"
)

func TestScratch(t *testing.T) {
	rep, err := Run(context.Background(), Options{Progress: func(r Result) { t.Logf("%+v", r) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d passed, %d failed, %d skipped", rep.Passed, rep.Failed, rep.Skipped)
}
