package schedule

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// The cron parser is written here rather than taken from robfig/cron: that
// library skips and doubles slots around daylight-saving changes (issue 14),
// so its scheduler cannot be used, and without the scheduler its parser is
// a hundred lines we can own, fuzz and give clear errors.

// CronExpr is a parsed 5-field cron expression: minute, hour, day of month,
// month, day of week. Each field is a bit set of the values it allows.
type CronExpr struct {
	minute uint64 // bits 0-59
	hour   uint64 // bits 0-23
	dom    uint64 // bits 1-31
	month  uint64 // bits 1-12
	dow    uint64 // bits 0-6, Sunday = 0 (7 is folded into 0)
	// domStar and dowStar record a day field that starts with "*": as in
	// crontab(5), the two day fields are OR-ed only when both are
	// restricted (neither starts with "*"); otherwise both must match.
	domStar, dowStar bool
	src              string // the fields joined by one space
}

// field describes one of the five fields for parsing and errors.
type field struct {
	name     string
	min, max int
	names    []string // names[i] stands for min+i; nil when names are not allowed
}

var (
	monthNames = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
	dayNames   = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

	fields = [5]field{
		{name: "minute", min: 0, max: 59},
		{name: "hour", min: 0, max: 23},
		{name: "day-of-month", min: 1, max: 31},
		{name: "month", min: 1, max: 12, names: monthNames},
		{name: "day-of-week", min: 0, max: 7, names: dayNames},
	}
)

// daysInMonthMax is the longest each month can be (February in a leap year).
var daysInMonthMax = [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// ParseCron parses a 5-field cron expression: "minute hour day-of-month
// month day-of-week". A field is "*", a value, a range "a-b", any of those
// with a step "/n" ("*/15", "1-30/2", "5/10" meaning 5 to the maximum), or
// a comma-separated list of them. Months may be written jan-dec and days of
// the week sun-sat (case-insensitive); 0 and 7 are both Sunday. When both
// day fields are restricted (neither starts with "*"), a day matches if
// either does, as in crontab(5). An expression no date can satisfy (day 31
// in April only) is refused.
func ParseCron(expr string) (CronExpr, error) {
	parts := strings.Fields(expr)
	if len(parts) != len(fields) {
		return CronExpr{}, fmt.Errorf("parse cron %q: want 5 fields (minute hour day-of-month month day-of-week), got %d", expr, len(parts))
	}
	var masks [5]uint64
	for i, p := range parts {
		m, err := parseField(p, fields[i])
		if err != nil {
			return CronExpr{}, fmt.Errorf("parse cron %q: %w", expr, err)
		}
		masks[i] = m
	}
	dow := masks[4]
	if dow&(1<<7) != 0 {
		dow = dow&^(1<<7) | 1 // 7 is Sunday too
	}
	e := CronExpr{
		minute: masks[0], hour: masks[1], dom: masks[2], month: masks[3], dow: dow,
		domStar: strings.HasPrefix(parts[2], "*"),
		dowStar: strings.HasPrefix(parts[4], "*"),
		src:     strings.Join(parts, " "),
	}
	if err := e.checkPossible(); err != nil {
		return CronExpr{}, fmt.Errorf("parse cron %q: %w", expr, err)
	}
	return e, nil
}

// String returns the expression with its fields separated by one space.
func (e CronExpr) String() string { return e.src }

// checkPossible refuses a day-of-month that exists in none of the months
// chosen, when it alone decides the day (the day-of-week field is "*"-led).
func (e CronExpr) checkPossible() error {
	if !e.domStar && !e.dowStar {
		return nil // OR: the day-of-week field always matches some day
	}
	first := bits.TrailingZeros64(e.dom)
	for m := 1; m <= 12; m++ {
		if e.month&(1<<m) != 0 && first <= daysInMonthMax[m] {
			return nil
		}
	}
	return fmt.Errorf("day-of-month %d never occurs in the months chosen (%s); pick days that exist in those months", first, monthList(e.month))
}

func monthList(mask uint64) string {
	var names []string
	for m := 1; m <= 12; m++ {
		if mask&(1<<m) != 0 {
			names = append(names, monthNames[m-1])
		}
	}
	return strings.Join(names, ",")
}

// parseField turns one field into a bit set of the values it allows.
func parseField(s string, f field) (uint64, error) {
	var mask uint64
	for item := range strings.SplitSeq(s, ",") {
		m, err := parseItem(item, f)
		if err != nil {
			return 0, fmt.Errorf("%s field %q: %w", f.name, s, err)
		}
		mask |= m
	}
	return mask, nil
}

// parseItem parses "*", "v", "a-b", each optionally followed by "/step".
func parseItem(item string, f field) (uint64, error) {
	if item == "" {
		return 0, fmt.Errorf("empty list item; write values separated by single commas, e.g. %s", f.example())
	}
	rng, stepText, hasStep := strings.Cut(item, "/")
	lo, hi := f.min, f.max
	switch {
	case rng == "*":
	case strings.Contains(rng, "-"):
		a, b, _ := strings.Cut(rng, "-")
		var err error
		if lo, err = f.value(a); err != nil {
			return 0, err
		}
		if hi, err = f.value(b); err != nil {
			return 0, err
		}
		if lo > hi {
			return 0, fmt.Errorf("range %s runs backwards; write the smaller value first (ranges do not wrap)", rng)
		}
	default:
		v, err := f.value(rng)
		if err != nil {
			return 0, err
		}
		lo, hi = v, v
		if hasStep {
			hi = f.max // "5/10": from 5 to the maximum, as most crons read it
		}
	}
	step := 1
	if hasStep {
		n, err := strconv.Atoi(stepText)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("step %q is not a positive whole number", stepText)
		}
		if n > f.max-f.min+1 {
			return 0, fmt.Errorf("step %d is larger than the field's range %d-%d", n, f.min, f.max)
		}
		step = n
	}
	var mask uint64
	for v := lo; v <= hi; v += step {
		mask |= 1 << v
	}
	return mask, nil
}

// value parses one number or name of f and checks its range.
func (f field) value(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("missing value; allowed: %s", f.allowed())
	}
	for i, n := range f.names {
		if strings.EqualFold(s, n) {
			return f.min + i, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil || s[0] == '+' || s[0] == '-' {
		return 0, fmt.Errorf("%q is not a value; allowed: %s", s, f.allowed())
	}
	if v < f.min || v > f.max {
		return 0, fmt.Errorf("%d is outside %s", v, f.allowed())
	}
	return v, nil
}

func (f field) allowed() string {
	s := fmt.Sprintf("%d-%d", f.min, f.max)
	switch f.name {
	case "month":
		s += " or jan-dec"
	case "day-of-week":
		s += " (0 and 7 are Sunday) or sun-sat"
	}
	return s
}

func (f field) example() string {
	switch f.name {
	case "month":
		return "jan,jul"
	case "day-of-week":
		return "mon,wed,fri"
	}
	return fmt.Sprintf("%d,%d", f.min, f.min+1)
}

// nextBit returns the lowest set bit of mask at or above from, or -1.
func nextBit(mask uint64, from int) int {
	if from >= 64 {
		return -1
	}
	m := mask >> uint(from)
	if m == 0 {
		return -1
	}
	return from + bits.TrailingZeros64(m)
}

// dayMatches applies the two day fields to a date whose weekday is wd.
func (e *CronExpr) dayMatches(d, wd int) bool {
	dom := e.dom&(1<<d) != 0
	dow := e.dow&(1<<wd) != 0
	if e.domStar || e.dowStar {
		return dom && dow
	}
	return dom || dow
}
