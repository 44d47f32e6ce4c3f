package service

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/config"
)

// TestServiceUnit: the unit runs this binary's serve on this home, with
// paths quoted for systemd; a system unit names its user and needs an
// explicit home; NoNewPrivileges is there unless bubblewrap is setuid.
func TestServiceUnit(t *testing.T) {
	home := config.Paths{Home: "/srv/homard"}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		name    string
		p       config.Paths
		o       Options
		want    []string // lines the unit must hold
		notWant []string
		err     string
	}{
		{name: "user unit", p: home, o: Options{Binary: "/usr/local/bin/homard"},
			want:    []string{"ExecStart=/usr/local/bin/homard serve --home /srv/homard", "Restart=on-failure", "NoNewPrivileges=yes", "WantedBy=default.target", serviceMarker},
			notWant: []string{"User="}},
		{name: "system unit", p: home, o: Options{Binary: "/usr/local/bin/homard", System: true, RunAs: "alice"},
			want: []string{"User=alice", "WantedBy=multi-user.target", "ExecStart=/usr/local/bin/homard serve --home /srv/homard"}},
		{name: "setuid bwrap", p: home, o: Options{Binary: "/usr/bin/homard", SetuidBwrap: true},
			notWant: []string{"NoNewPrivileges=yes"}},
		{name: "quoting", p: config.Paths{Home: "/home/a b/h%o$me"}, o: Options{Binary: "/opt/my bin/homard"},
			want: []string{`ExecStart="/opt/my bin/homard" serve --home "/home/a b/h%%o$$me"`}},
		{name: "xdg layout keeps the shell's folders", p: config.Paths{},
			o:       Options{Binary: "/usr/bin/homard", Getenv: env(map[string]string{"XDG_CONFIG_HOME": "/c f", "XDG_DATA_HOME": "/d"})},
			want:    []string{"ExecStart=/usr/bin/homard serve", `Environment="XDG_CONFIG_HOME=/c f"`, "Environment=XDG_DATA_HOME=/d"},
			notWant: []string{"--home"}},
		{name: "system without user", p: home, o: Options{Binary: "/usr/bin/homard", System: true}, err: "--run-as"},
		{name: "system without home", p: config.Paths{}, o: Options{Binary: "/usr/bin/homard", System: true, RunAs: "alice"}, err: "--home"},
		{name: "relative binary", p: home, o: Options{Binary: "homard"}, err: "not absolute"},
		{name: "newline in home", p: config.Paths{Home: "/a\nExecStartPre=/bin/evil"}, o: Options{Binary: "/usr/bin/homard"}, err: "newline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unit, err := Unit(tc.p, tc.o)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Unit = %v; want an error naming %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(unit, "\n")
			for _, w := range tc.want {
				if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, w) }) {
					t.Errorf("unit has no line %q:\n%s", w, unit)
				}
			}
			for _, n := range tc.notWant {
				if strings.Contains(unit, n) {
					t.Errorf("unit holds %q:\n%s", n, unit)
				}
			}
		})
	}
}

// TestServiceUnitPath: the user unit goes under XDG_CONFIG_HOME, else
// ~/.config; the system unit under SystemDir.
func TestServiceUnitPath(t *testing.T) {
	for _, tc := range []struct {
		env    map[string]string
		system bool
		want   string
	}{
		{map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, false, "/x/systemd/user/homard.service"},
		{map[string]string{"HOME": "/h"}, false, "/h/.config/systemd/user/homard.service"},
		{map[string]string{}, true, "/etc/systemd/system/homard.service"},
		{map[string]string{}, false, ""},
		{map[string]string{"XDG_CONFIG_HOME": "rel"}, false, ""},
	} {
		got, err := UnitPath(Options{System: tc.system, Getenv: func(k string) string { return tc.env[k] }})
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("UnitPath(%v, system=%v) = %q, %v; want %q", tc.env, tc.system, got, err, tc.want)
		}
	}
}

// fakeSystemctl records the systemctl calls; fail makes the call whose
// arguments contain it fail.
type fakeSystemctl struct {
	calls []string
	fail  string
}

func (f *fakeSystemctl) run(_ context.Context, args ...string) (string, error) {
	call := strings.Join(args, " ")
	f.calls = append(f.calls, call)
	if f.fail != "" && strings.Contains(call, f.fail) {
		return "Failed to connect to bus", errors.New("exit status 1")
	}
	return "ok", nil
}

// TestInstallService: install writes the user unit where systemd reads
// it and enables it; an identical unit is left alone; a different one is
// refused (and left untouched) unless forced, then replaced and
// restarted; --no-start runs no systemctl; a missing config or a failing
// systemctl says what happened.
func TestInstallService(t *testing.T) {
	dir := t.TempDir()
	p := config.Paths{Home: filepath.Join(dir, "home"), ConfigFile: filepath.Join(dir, "home", "config.toml")}
	xdg := filepath.Join(dir, "xdg")
	getenv := func(k string) string { return map[string]string{"XDG_CONFIG_HOME": xdg}[k] }
	unitPath := filepath.Join(xdg, "systemd", "user", "homard.service")
	sc := &fakeSystemctl{}
	opts := func(o Options) Options {
		o.Getenv, o.Systemctl = getenv, sc.run
		if o.Binary == "" {
			o.Binary = "/usr/local/bin/homard"
		}
		return o
	}
	ctx := context.Background()

	if _, err := Install(ctx, p, opts(Options{})); err == nil || !strings.Contains(err.Error(), "homard setup") {
		t.Fatalf("install without a config = %v; want a hint to run homard init", err)
	}
	if err := os.MkdirAll(p.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.ConfigFile, []byte("owner = \"me\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	step := func(name string, o Options, wantErr error, wantChanged bool, wantCalls ...string) {
		t.Helper()
		sc.calls = nil
		res, err := Install(ctx, p, opts(o))
		if !errors.Is(err, wantErr) {
			t.Fatalf("%s: Install = %v; want %v", name, err, wantErr)
		}
		if res.Path != unitPath || res.Changed != wantChanged {
			t.Errorf("%s: result %+v; want path %s, changed %v", name, res, unitPath, wantChanged)
		}
		if !slices.Equal(sc.calls, wantCalls) {
			t.Errorf("%s: systemctl calls %q; want %q", name, sc.calls, wantCalls)
		}
	}
	reload, enable, restart := "--user daemon-reload", "--user enable --now homard.service", "--user try-restart homard.service"
	step("first install", Options{}, nil, true, reload, enable)
	first, err := os.ReadFile(unitPath)
	if err != nil || !strings.Contains(string(first), "ExecStart=/usr/local/bin/homard serve --home "+p.Home) {
		t.Fatalf("unit file = %q, %v", first, err)
	}
	step("same again", Options{}, nil, false, reload, enable)
	step("a different binary", Options{Binary: "/opt/homard"}, ErrExists, false)
	if now, _ := os.ReadFile(unitPath); string(now) != string(first) {
		t.Errorf("a refused install changed the unit:\n%s", now)
	}
	step("forced", Options{Binary: "/opt/homard", Force: true}, nil, true, reload, enable, restart)
	if now, _ := os.ReadFile(unitPath); !strings.Contains(string(now), "ExecStart=/opt/homard serve") {
		t.Errorf("forced install did not replace the unit:\n%s", now)
	}
	step("no start", Options{Binary: "/usr/bin/homard", Force: true, NoStart: true}, nil, true)

	sc.fail = "enable"
	sc.calls = nil
	_, err = Install(ctx, p, opts(Options{Binary: "/usr/bin/homard"}))
	if err == nil || !strings.Contains(err.Error(), unitPath) || !strings.Contains(err.Error(), "Failed to connect to bus") {
		t.Errorf("install with a failing systemctl = %v; want the unit's path and systemctl's words", err)
	}
	sc.fail = ""

	// The system unit goes to SystemDir and talks to the system manager.
	sys := filepath.Join(dir, "etc-systemd")
	sc.calls = nil
	res, err := Install(ctx, p, opts(Options{System: true, RunAs: "alice", SystemDir: sys}))
	if err != nil || res.Path != filepath.Join(sys, "homard.service") {
		t.Fatalf("system install = %+v, %v", res, err)
	}
	if want := []string{"daemon-reload", "enable --now homard.service"}; !slices.Equal(sc.calls, want) {
		t.Errorf("system install calls %q; want %q", sc.calls, want)
	}
	if b, _ := os.ReadFile(res.Path); !strings.Contains(string(b), "User=alice") {
		t.Errorf("system unit without User=alice:\n%s", b)
	}
}

// TestUninstallService: uninstall stops, disables and removes homard's
// unit; it refuses a homard.service someone else wrote unless forced; no
// unit is nothing to do.
func TestUninstallService(t *testing.T) {
	xdg := t.TempDir()
	unitPath := filepath.Join(xdg, "systemd", "user", "homard.service")
	sc := &fakeSystemctl{}
	o := Options{Getenv: func(k string) string { return map[string]string{"XDG_CONFIG_HOME": xdg}[k] }, Systemctl: sc.run}
	ctx := context.Background()

	res, err := Uninstall(ctx, o)
	if err != nil || res.Changed || len(sc.calls) != 0 {
		t.Fatalf("uninstall with no unit = %+v, %v, calls %q; want nothing done", res, err, sc.calls)
	}
	if err := os.MkdirAll(filepath.Dir(unitPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(unitPath, []byte("[Service]\nExecStart=/usr/bin/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Uninstall(ctx, o); err == nil || !strings.Contains(err.Error(), "not written by homard") {
		t.Errorf("uninstall of a foreign unit = %v; want a refusal", err)
	}
	if _, err := os.Stat(unitPath); err != nil {
		t.Errorf("the refused uninstall removed the unit: %v", err)
	}
	unit, err := Unit(config.Paths{Home: "/h"}, Options{Binary: "/usr/bin/homard"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(unitPath, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	sc.calls = nil
	res, err = Uninstall(ctx, o)
	if err != nil || !res.Changed {
		t.Fatalf("uninstall = %+v, %v", res, err)
	}
	if _, err := os.Stat(unitPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("unit still there after uninstall: %v", err)
	}
	if want := []string{"--user disable --now homard.service", "--user daemon-reload"}; !slices.Equal(sc.calls, want) {
		t.Errorf("uninstall calls %q; want %q", sc.calls, want)
	}
	if out, err := Status(ctx, o); err != nil || out != "ok" || sc.calls[len(sc.calls)-1] != "--user status --no-pager homard.service" {
		t.Errorf("Status = %q, %v, last call %q", out, err, sc.calls[len(sc.calls)-1])
	}
}
