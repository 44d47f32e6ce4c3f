package tool

import (
	"context"
	"testing"

	"github.com/homard/homard/internal/policy"
)

func TestCallerFromContext(t *testing.T) {
	ctx := context.Background()
	if c, ok := CallerFrom(ctx); ok {
		t.Fatalf("CallerFrom(empty ctx) = %+v, true; want false", c)
	}
	if c, ok := CallerFrom(WithCaller(ctx, Caller{Session: "s"})); ok {
		t.Fatalf("CallerFrom(no owner) = %+v, true; want false", c)
	}
	want := Caller{Owner: "alice", Session: "s1", Trust: policy.TrustOwner}
	got, ok := CallerFrom(WithCaller(ctx, want))
	if !ok || got != want {
		t.Fatalf("CallerFrom = %+v, %v; want %+v, true", got, ok, want)
	}
}
