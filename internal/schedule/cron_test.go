package schedule

import (
	"fmt"
	"strings"
	"testing"
)

// bitsOf lists the values set in mask, for readable failures.
func bitsOf(mask uint64) string {
	var vs []string
	for i := range 64 {
		if mask&(1<<i) != 0 {
			vs = append(vs, fmt.Sprint(i))
		}
	}
	return strings.Join(vs, ",")
}

func TestParseCronGood(t *testing.T) {
	tests := []struct {
		expr                       string
		minute, hour, dom, mon, dw string
		domStar, dowStar           bool
	}{
		{"* * * * *", "0-59", "0-23", "1-31", "1-12", "0-6", true, true},
		{"0 9 * * 1-5", "0", "9", "1-31", "1-12", "1,2,3,4,5", true, false},
		{"*/15 * * * *", "0,15,30,45", "0-23", "1-31", "1-12", "0-6", true, true},
		{"5/20 0-6/3 * * *", "5,25,45", "0,3,6", "1-31", "1-12", "0-6", true, true},
		{"0,30 8,12,18 1,15 jan,JUL sun", "0,30", "8,12,18", "1,15", "1,7", "0", false, false},
		{"0 0 * * 7", "0", "0", "1-31", "1-12", "0", true, false},
		{"0 0 * * 5-7", "0", "0", "1-31", "1-12", "0,5,6", true, false},
		{"0 0 * * mon-fri", "0", "0", "1-31", "1-12", "1,2,3,4,5", true, false},
		{"0 0 * mar-may *", "0", "0", "1-31", "3,4,5", "0-6", true, true},
		{"  59   23  31 12  sat ", "59", "23", "31", "12", "6", false, false},
		{"0 0 29 feb *", "0", "0", "29", "2", "0-6", false, true},
		{"0 0 31 apr mon", "0", "0", "31", "4", "1", false, false}, // OR: every Monday in April
		{"0 0 */2 * mon", "0", "0", "1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31", "1-12", "1", true, false},
		{"*/60 * * * *", "0", "0-23", "1-31", "1-12", "0-6", true, true},
	}
	expand := func(s string) string {
		if a, b, ok := strings.Cut(s, "-"); ok {
			var lo, hi int
			fmt.Sscan(a, &lo)
			fmt.Sscan(b, &hi)
			var vs []string
			for i := lo; i <= hi; i++ {
				vs = append(vs, fmt.Sprint(i))
			}
			return strings.Join(vs, ",")
		}
		return s
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			e, err := ParseCron(tt.expr)
			if err != nil {
				t.Fatalf("ParseCron(%q) error: %v", tt.expr, err)
			}
			got := []string{bitsOf(e.minute), bitsOf(e.hour), bitsOf(e.dom), bitsOf(e.month), bitsOf(e.dow)}
			want := []string{expand(tt.minute), expand(tt.hour), expand(tt.dom), expand(tt.mon), expand(tt.dw)}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("ParseCron(%q) %s = %s; want %s", tt.expr, fields[i].name, got[i], want[i])
				}
			}
			if e.domStar != tt.domStar || e.dowStar != tt.dowStar {
				t.Errorf("ParseCron(%q) stars = %v,%v; want %v,%v", tt.expr, e.domStar, e.dowStar, tt.domStar, tt.dowStar)
			}
			if e.String() != strings.Join(strings.Fields(tt.expr), " ") {
				t.Errorf("String() = %q", e.String())
			}
		})
	}
}

func TestParseCronBad(t *testing.T) {
	tests := []struct {
		expr string
		want []string // substrings the error must carry
	}{
		{"", []string{"want 5 fields", "got 0"}},
		{"* * * *", []string{"want 5 fields", "minute hour day-of-month month day-of-week"}},
		{"* * * * * *", []string{"got 6"}},
		{"@daily", []string{"want 5 fields"}},
		{"60 * * * *", []string{"minute field", "60 is outside 0-59"}},
		{"* 24 * * *", []string{"hour field", "0-23"}},
		{"* * 0 * *", []string{"day-of-month field", "1-31"}},
		{"* * 32 * *", []string{"day-of-month field"}},
		{"* * * 13 *", []string{"month field", "jan-dec"}},
		{"* * * * 8", []string{"day-of-week field", "0 and 7 are Sunday", "sun-sat"}},
		{"* * * * monday", []string{"day-of-week field", `"monday" is not a value`}},
		{"jan * * * *", []string{"minute field", `"jan" is not a value`}},
		{"* * * foo *", []string{"month field"}},
		{"*/0 * * * *", []string{"minute field", "step \"0\" is not a positive whole number"}},
		{"*/61 * * * *", []string{"step 61 is larger than the field's range 0-59"}},
		{"*/x * * * *", []string{"step \"x\""}},
		{"5-1 * * * *", []string{"range 5-1 runs backwards"}},
		{"fri-mon * * * *", []string{"minute field"}},
		{"* * * * fri-mon", []string{"range fri-mon runs backwards"}},
		{"1,,2 * * * *", []string{"empty list item"}},
		{"1, * * * *", []string{"empty list item"}},
		{"-5 * * * *", []string{"missing value"}},
		{"+5 * * * *", []string{`"+5" is not a value`}},
		{"1-2-3 * * * *", []string{"minute field"}},
		{"? * * * *", []string{"minute field"}},
		{"0 0 31 apr,jun *", []string{"day-of-month 31 never occurs", "apr,jun"}},
		{"0 0 30 feb *", []string{"day-of-month 30 never occurs", "feb"}},
		{"0 0 30,31 feb */2", []string{"never occurs"}},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			_, err := ParseCron(tt.expr)
			if err == nil {
				t.Fatalf("ParseCron(%q) = nil error; want one containing %q", tt.expr, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ParseCron(%q) error %q; want it to contain %q", tt.expr, err, w)
				}
			}
		})
	}
}

// TestCivilRoundTrip checks the date arithmetic the cron search is built
// on against the standard library, across leap years and before 1970.
func TestCivilRoundTrip(t *testing.T) {
	for _, days := range []int64{-800000, -719468, -1, 0, 1, 59, 60, 11016, 20000, 20513, 47541, 47542, 2932896} {
		y, m, d := civilFromDays(days)
		if back := daysFromCivil(y, m, d); back != days {
			t.Errorf("daysFromCivil(civilFromDays(%d)=%d-%d-%d) = %d", days, y, m, d, back)
		}
		want := unixDate(days)
		if y != want.Year() || m != int(want.Month()) || d != want.Day() {
			t.Errorf("civilFromDays(%d) = %d-%d-%d; want %s", days, y, m, d, want.Format("2006-01-02"))
		}
		if wd := weekday(y, m, d); wd != int(want.Weekday()) {
			t.Errorf("weekday(%d-%d-%d) = %d; want %d", y, m, d, wd, want.Weekday())
		}
	}
}
