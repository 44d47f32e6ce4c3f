package langscan

import (
	"slices"
	"strings"
	"testing"
)

func TestScanFindsKeysAndLooseLiterals(t *testing.T) {
	found, err := Scan("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"Approve once", "%d tasks due", "could not open %s: %w", "Deny", "Snooze one hour", "Pending approvals:"} {
		if _, ok := found.Keys[k]; !ok {
			t.Errorf("key %q not found; keys %v", k, found.Keys)
		}
	}
	var loose []string
	for _, l := range found.Loose {
		loose = append(loose, l[strings.Index(l, ": ")+2:])
	}
	want := []string{`"left outside the catalog"`, `"你好"`, `"an error for the person"`}
	for _, w := range want {
		if !slices.Contains(loose, w) {
			t.Errorf("loose literal %s not reported; got %v", w, loose)
		}
	}
	if len(loose) != len(want) {
		t.Errorf("loose = %v, want only %v", loose, want)
	}
}

func TestVerbsMatchAcrossReordering(t *testing.T) {
	if !slices.Equal(Verbs("%s has %d tasks"), Verbs("%[2]d 个任务属于 %[1]s")) {
		t.Errorf("reordered verbs differ: %v %v", Verbs("%s has %d tasks"), Verbs("%[2]d 个任务属于 %[1]s"))
	}
	if slices.Equal(Verbs("%s has %d tasks"), Verbs("%s 有 %s 个任务")) {
		t.Error("a changed verb matched")
	}
	if len(Verbs("100%% done")) != 0 {
		t.Error("%% counted as a verb")
	}
}

func TestUserFacing(t *testing.T) {
	for s, want := range map[string]bool{
		"approved for this session": true,
		"星期一":                       true,
		"SELECT id FROM tasks":      false,
		"%s: %w":                    false,
		"run_command":               false,
		"/api/tasks":                false,
		"Deny":                      false,
	} {
		if got := UserFacing(s); got != want {
			t.Errorf("UserFacing(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestScanJS(t *testing.T) {
	got := ScanJS(`el.textContent = t("Approve once"); x(t("Say \"hi\"")); at("no")`)
	if !slices.Equal(got, []string{"Approve once", `Say "hi"`}) {
		t.Errorf("ScanJS = %q", got)
	}
}
