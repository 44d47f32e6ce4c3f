package memreview

import (
	"errors"
	"strings"
	"testing"

	"github.com/homard/homard/internal/lang"
)

// TestErrorText: the package's errors read in English as their own text
// and in Chinese as their translation; a ModelError keeps the model's
// error; any other error is its own text in both languages.
func TestErrorText(t *testing.T) {
	cause := errors.New("HTTP 400")
	for _, err := range []error{ErrTooFew, ErrNoReview, ErrProposal, &ModelError{Err: cause}} {
		en := ErrorText(lang.For(lang.EN), err)
		if en != err.Error() {
			t.Errorf("ErrorText(EN, %v) = %q; want the error's own text", err, en)
		}
		zh := ErrorText(lang.For(lang.ZH), err)
		if zh == en || !strings.ContainsAny(zh, "记整提模") {
			t.Errorf("ErrorText(ZH, %v) = %q; want it in Chinese", err, zh)
		}
	}
	if got := ErrorText(lang.For(lang.ZH), &ModelError{Err: cause}); !strings.HasSuffix(got, "HTTP 400") {
		t.Errorf("ErrorText(ZH, ModelError) = %q; want the model's error kept", got)
	}
	other := errors.New("disk full")
	if got := ErrorText(lang.For(lang.ZH), other); got != "disk full" {
		t.Errorf("ErrorText(ZH, %v) = %q; want its own text", other, got)
	}
	var me *ModelError
	if err := error(&ModelError{Err: cause}); !errors.As(err, &me) || !errors.Is(err, cause) {
		t.Errorf("a ModelError does not unwrap to the model's error")
	}
}
