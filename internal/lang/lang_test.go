package lang

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParse(t *testing.T) {
	for in, want := range map[string]Tag{"en": EN, "en_US.UTF-8": EN, "zh": ZH, "zh-hans": ZH, "zh_CN.UTF-8": ZH, "ZH-Hant-TW": ZH, "zh@pinyin": ZH} {
		if got, ok := Parse(in); !ok || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "C", "POSIX", "fr_FR.UTF-8", "zhx"} {
		if _, ok := Parse(in); ok {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
}

func TestFromEnvFollowsPOSIXOrder(t *testing.T) {
	if got := FromEnv(env(map[string]string{"LANG": "zh_CN.UTF-8"})); got != ZH {
		t.Errorf("LANG=zh_CN: %v", got)
	}
	if got := FromEnv(env(map[string]string{"LC_ALL": "C", "LANG": "zh_CN.UTF-8"})); got != EN {
		t.Errorf("LC_ALL=C over LANG=zh: %v", got)
	}
	if got := FromEnv(env(map[string]string{"LC_MESSAGES": "zh_TW", "LANG": "en_US"})); got != ZH {
		t.Errorf("LC_MESSAGES=zh over LANG=en: %v", got)
	}
	if got := FromEnv(env(nil)); got != EN {
		t.Errorf("empty environment: %v", got)
	}
}

func TestResolve(t *testing.T) {
	zh := env(map[string]string{"LANG": "zh_CN.UTF-8"})
	for in, want := range map[string]Tag{"auto": ZH, "": ZH, "en": EN, "zh": ZH, "ZH": ZH} {
		if got, err := Resolve(in, zh); err != nil || got != want {
			t.Errorf("Resolve(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := Resolve("fr", zh); err == nil || !strings.Contains(err.Error(), "auto, en, zh") {
		t.Errorf("Resolve(fr) = %v", err)
	}
}

func TestPrinterFallsBackToEnglish(t *testing.T) {
	zhSets = append(zhSets, map[string]string{"%d tasks due": "%d 个任务到期"})
	defer func() { zhSets = zhSets[:len(zhSets)-1]; zhAll = nil; zhOnce = newOnce() }()
	zhAll = nil
	zhOnce = newOnce()
	p := For(ZH)
	if got := p.Sprintf("%d tasks due", 3); got != "3 个任务到期" {
		t.Errorf("zh = %q", got)
	}
	if got := p.T("not in the catalog"); got != "not in the catalog" {
		t.Errorf("missing key = %q", got)
	}
	if got := For(EN).Sprintf("%d tasks due", 3); got != "3 tasks due" {
		t.Errorf("en = %q", got)
	}
	if err := p.Errorf("open: %w", os.ErrNotExist); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Errorf does not wrap: %v", err)
	}
}

func TestDatesAndNumbers(t *testing.T) {
	d := time.Date(2026, 12, 6, 18, 0, 0, 0, time.UTC)
	if got := For(ZH).DateTime(d); got != "2026年12月6日 18:00" {
		t.Errorf("zh = %q", got)
	}
	if got := For(EN).DateTime(d); got != "6 Dec 2026 18:00" {
		t.Errorf("en = %q", got)
	}
	if got := For(ZH).Weekday(time.Monday); got != "星期一" {
		t.Errorf("zh weekday = %q", got)
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567"} {
		if got := For(ZH).Int(n); got != want {
			t.Errorf("Int(%d) = %q, want %q", n, got, want)
		}
	}
}
