package tools

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
)

//go:embed current_time.md
var currentTimeDoc string

// CurrentTimeParams: current_time takes no arguments.
type CurrentTimeParams struct{}

// CurrentTime is the current_time tool.
type CurrentTime struct{ now func() time.Time }

func (t *CurrentTime) Spec() tool.Spec {
	return tool.Spec{Name: "current_time", Description: doc(currentTimeDoc), Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true,
		PublicResult: true} // the clock only
}

func (t *CurrentTime) Prepare(ctx context.Context, p CurrentTimeParams) (tool.Plan, error) {
	return t.Spec().Plan(tool.PlanSpec{
		Display: "read the clock",
		Body:    struct{}{},
	})
}

func (t *CurrentTime) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	now := t.now()
	zone, offset := now.Zone()
	loc := now.Location().String()
	text := fmt.Sprintf("%s (%s; time zone %s, UTC%s", now.Format(time.RFC3339), now.Weekday(), zone, formatOffset(offset))
	if loc != "Local" && loc != zone {
		text += ", " + loc
	}
	return tool.Result{Text: text + ")"}, nil
}

func formatOffset(sec int) string {
	sign := '+'
	if sec < 0 {
		sign, sec = '-', -sec
	}
	return fmt.Sprintf("%c%02d:%02d", sign, sec/3600, sec%3600/60)
}
