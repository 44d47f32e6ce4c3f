package a

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/homard/homard/internal/lang"
)

var labels = []string{lang.N("Approve once"), lang.N("Deny")}

type row struct {
	Name string `json:"name" toml:"a name with spaces"`
}

// machine is English on purpose. lang:en
func machine() string { return "kept as it is for scripts" }

func f(p lang.Printer, n int) error {
	p.Fprintf(os.Stdout, "%d tasks due", n)
	p.Fprintln(os.Stdout, "Pending approvals:")
	_ = p.T("Snooze one hour")
	slog.Info("logged for the operator", "key", "a value with spaces")
	fmt.Println("left outside the catalog")
	_ = "你好"
	_ = "SELECT id FROM tasks WHERE x = 1"
	_ = fmt.Sprintf("%s-%s", "a", "b")
	_ = "machine text with spaces" // lang:en
	if n > 1 {
		return errors.New("an error for the person")
	}
	return p.Errorf("could not open %s: %w", "x", os.ErrNotExist)
}
