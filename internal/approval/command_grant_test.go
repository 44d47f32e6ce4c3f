package approval

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
)

// commandTemplate is what run_command puts on a Plan for argv in the
// workspace root.
func commandTemplate(program string, args ...string) (policy.Template, policy.Risk) {
	v := policy.ClassifyCommand(policy.Command{Program: program, Path: "/usr/bin/" + program, RealPath: "/usr/bin/" + program, Args: args}, nil)
	t := v.Template
	t.Dir, t.TimeoutS, t.SHA256 = ".", 60, "00ff"
	return t, v.Risk
}

// gradedTemplate is commandTemplate for a command run_command runs graded
// (policy.Template.Graded: bwrap or landlock, on an overlay).
func gradedTemplate(program string, args ...string) (policy.Template, policy.Risk) {
	t, risk := commandTemplate(program, args...)
	t.Graded = true
	return t, risk
}

// requestCommand makes a pending run_command approval carrying its template.
func (e *env) requestCommand(t *testing.T, program string, args ...string) Approval {
	t.Helper()
	tm, risk := commandTemplate(program, args...)
	return e.requestTemplate(t, tm, risk, program, args...)
}

// requestGraded is requestCommand for a command run graded.
func (e *env) requestGraded(t *testing.T, program string, args ...string) Approval {
	t.Helper()
	tm, risk := gradedTemplate(program, args...)
	return e.requestTemplate(t, tm, risk, program, args...)
}

func (e *env) requestTemplate(t *testing.T, tm policy.Template, risk policy.Risk, program string, args ...string) Approval {
	t.Helper()
	plan, hash := planFor(`{"argv":"` + program + " " + strings.Join(args, " ") + `"}`)
	b := Binding{Tool: "run_command", PlanHash: hash, Owner: "alice", Session: "s1"}
	a, err := e.svc.Request(t.Context(), b, Card{Display: program, Plan: plan, Targets: []string{"."}, Risk: risk,
		Rule: "mode.safe", Reason: "safe mode asks", Template: &tm})
	if err != nil {
		t.Fatalf("Request: %v", err)
	}
	return a
}

// insideWorkspace stands for run_command's resolver: here every clean
// relative path is inside (there are no symlinks).
func insideWorkspace(dir, slot, op string, _ bool) bool { return policy.InSlot(slot, op) }

// TestCommandGrantIsATemplate: approving "mkdir build" for the session
// lets another mkdir run (the twin), and nothing else.
func TestCommandGrantIsATemplate(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	a := e.requestCommand(t, "mkdir", "build")
	if a.Template == nil || a.Template.String() != "mkdir ‹new name in ./›" {
		t.Fatalf("the card's template = %v; want mkdir ‹new name in ./›", a.Template)
	}
	if _, err := e.svc.Approve(ctx, a.ID, "alice", ScopeSession); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		argv []string
		want bool
	}{
		{[]string{"mkdir", "build"}, true},
		{[]string{"mkdir", "src"}, true},      // a second mkdir under the session grant
		{[]string{"mkdir", "build/x"}, false}, // a destination stays in the folder the owner saw
		{[]string{"cp", "/etc/passwd", "important.txt"}, false},
		{[]string{"mkdir", "-p", "x", "--mode=4777"}, false},
		{[]string{"gcc", "-wrapper", "/bin/sh,-c,id", "x.c"}, false},
		{[]string{"mkdir", "../x"}, false},
		{[]string{"mkdir", "-x"}, false},
		{[]string{"mkdir", "/etc/x"}, false},
	} {
		call, risk := commandTemplate(tc.argv[0], tc.argv[1:]...)
		_, ok, err := e.svc.MatchCommandGrant(ctx, "alice", "s1", "run_command", call, risk, insideWorkspace)
		if err != nil || ok != tc.want {
			t.Errorf("after approving mkdir build (session), %q covered = %v, %v; want %v", tc.argv, ok, err, tc.want)
		}
	}
	// Another session, and a resolver that finds the path outside (a
	// symlink), are not covered.
	call, risk := commandTemplate("mkdir", "src")
	if _, ok, _ := e.svc.MatchCommandGrant(ctx, "alice", "s2", "run_command", call, risk, insideWorkspace); ok {
		t.Error("a session grant covered another session")
	}
	if _, ok, _ := e.svc.MatchCommandGrant(ctx, "alice", "s1", "run_command", call, risk, func(string, string, string, bool) bool { return false }); ok {
		t.Error("a slot covered a path the resolver found outside")
	}
	// The path-pattern matcher never uses a command grant.
	if _, ok, _ := e.svc.MatchGrant(ctx, "alice", "s1", "run_command", []string{"."}, policy.RiskMedium); ok {
		t.Error("MatchGrant covered a plan by a command grant's patterns")
	}
	grants, err := e.svc.Grants(ctx, "alice")
	if err != nil || len(grants) != 1 || grants[0].Template == nil || grants[0].Template.Entry != "mkdir" {
		t.Fatalf("Grants = %+v, %v; want one mkdir template grant", grants, err)
	}
}

// TestRunsCodeIsApprovedOnce: a command that runs code outside a graded
// sandbox (the host backend, a read-only root) gets no standing grant;
// once still works. TestGradedCodeIsGrantedForTheSession is its twin.
func TestRunsCodeIsApprovedOnce(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	for _, scope := range []Scope{ScopeSession, ScopeAlways} {
		a := e.requestCommand(t, "go", "test", "./...", string(scope))
		_, err := e.svc.Approve(ctx, a.ID, "alice", scope)
		if !errors.Is(err, ErrScopeNotAllowed) || !strings.Contains(err.Error(), "runs code") {
			t.Errorf("approve go test with scope %s: %v; want ErrScopeNotAllowed saying it runs code", scope, err)
		}
	}
	a := e.requestCommand(t, "go", "test", "./...")
	if _, err := e.svc.Approve(ctx, a.ID, "alice", ScopeOnce); err != nil {
		t.Errorf("approve go test once: %v", err)
	}
	if g, _ := e.svc.Grants(ctx, "alice"); len(g) != 0 {
		t.Errorf("grants after approving code: %+v; want none", g)
	}
	call, risk := commandTemplate("go", "test", "./...")
	if _, ok, _ := e.svc.MatchCommandGrant(ctx, "alice", "s1", "run_command", call, risk, insideWorkspace); ok {
		t.Error("code was covered by a grant")
	}
}

// TestGradedCodeIsGrantedForTheSession: a command that runs code, run
// graded (sandboxed, no network, its change set graded), may be approved
// for the session: the grant covers exactly that command run graded again
// in that session, and nothing wider. Always is refused.
func TestGradedCodeIsGrantedForTheSession(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	a := e.requestGraded(t, "make", "test")
	if a.OnceOnly() || !a.NoAlways() {
		t.Fatalf("graded make test: OnceOnly %v NoAlways %v; want session but not always", a.OnceOnly(), a.NoAlways())
	}
	if c := a.Covers(); !strings.Contains(c, "make test") || !strings.Contains(c, "no network") || !strings.Contains(c, "held for you") {
		t.Errorf("Covers() = %q; want the template, no network and what is still held", c)
	}
	if _, err := e.svc.Approve(ctx, a.ID, "alice", ScopeAlways); !errors.Is(err, ErrScopeNotAllowed) {
		t.Fatalf("approve graded make test always: %v; want ErrScopeNotAllowed", err)
	}
	if _, err := e.svc.Approve(ctx, a.ID, "alice", ScopeSession); err != nil {
		t.Fatalf("approve graded make test for the session: %v", err)
	}
	graded := func(argv ...string) policy.Template { tm, _ := gradedTemplate(argv[0], argv[1:]...); return tm }
	host := func(argv ...string) policy.Template { tm, _ := commandTemplate(argv[0], argv[1:]...); return tm }
	for _, tc := range []struct {
		name    string
		session string
		call    policy.Template
		want    bool
	}{
		{"the same command, graded", "s1", graded("make", "test"), true},
		{"the same command on the host backend", "s1", host("make", "test"), false},
		{"another target", "s1", graded("make", "install"), false},
		{"an added option", "s1", graded("make", "-f", "other.mk", "test"), false},
		{"another program", "s1", graded("go", "test", "./..."), false},
		{"another session", "s2", graded("make", "test"), false},
	} {
		_, risk := gradedTemplate("make", "test")
		_, ok, err := e.svc.MatchCommandGrant(ctx, "alice", tc.session, "run_command", tc.call, risk, insideWorkspace)
		if err != nil || ok != tc.want {
			t.Errorf("%s: covered = %v, %v; want %v", tc.name, ok, err, tc.want)
		}
	}
	// Another binary at the same path is not covered.
	other := graded("make", "test")
	other.SHA256 = "ee"
	if _, ok, _ := e.svc.MatchCommandGrant(ctx, "alice", "s1", "run_command", other, policy.RiskMedium, insideWorkspace); ok {
		t.Error("the grant covered another binary")
	}
	grants, err := e.svc.Grants(ctx, "alice")
	if err != nil || len(grants) != 1 || grants[0].Scope != ScopeSession || grants[0].Session != "s1" ||
		grants[0].Template == nil || !grants[0].Template.Graded || !grants[0].Template.RunsCode {
		t.Fatalf("Grants = %+v, %v; want one session grant of a graded code template", grants, err)
	}
}

// TestCodeGrantForAlwaysNeverCovers: a stored always grant of a code
// template (Approve never makes one; an old or edited row) covers nothing,
// while the same grant for the session covers the call (the twin).
func TestCodeGrantForAlwaysNeverCovers(t *testing.T) {
	for _, scope := range []Scope{ScopeAlways, ScopeSession} {
		t.Run(string(scope), func(t *testing.T) {
			e := newEnv(t)
			ctx := t.Context()
			a := e.requestGraded(t, "make", "test")
			tm, risk := gradedTemplate("make", "test")
			enc, err := encodeTemplate(&tm)
			if err != nil {
				t.Fatal(err)
			}
			g := store.Grant{ID: "gr_0123456789abcdef", Owner: "alice", Tool: "run_command", MaxRisk: int(risk), Scope: string(scope),
				ApprovalID: a.ID, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour), Template: enc}
			if scope == ScopeSession {
				g.SessionID = "s1"
			}
			if err := e.st.Write(ctx, func(tx *store.Tx) error { return tx.InsertGrant(g) }); err != nil {
				t.Fatal(err)
			}
			_, ok, err := e.svc.MatchCommandGrant(ctx, "alice", "s1", "run_command", tm, risk, insideWorkspace)
			if want := scope == ScopeSession; err != nil || ok != want {
				t.Errorf("a %s grant of graded make test covers it = %v, %v; want %v", scope, ok, err, want)
			}
		})
	}
}

// TestOnceOnlyIsWhatApproveTakes: Approval.OnceOnly, which every card
// shows, is exactly the rule Approve enforces: a once-only approval
// refuses session and always and takes once; any other takes session (the
// twin).
func TestOnceOnlyIsWhatApproveTakes(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(e *env) Approval
		want bool
		// noAlways: session is taken but always is not (a command that
		// runs code, graded).
		noAlways bool
	}{
		{"medium write", func(e *env) Approval { a, _ := e.request(t, "alice", "s1", "a.md", policy.RiskMedium); return a }, false, false},
		{"high write", func(e *env) Approval { a, _ := e.request(t, "alice", "s1", "a.md", policy.RiskHigh); return a }, false, false},
		{"critical write", func(e *env) Approval { a, _ := e.request(t, "alice", "s1", "a.md", policy.RiskCritical); return a }, true, false},
		{"task run", func(e *env) Approval {
			a, _ := e.request(t, "alice", TaskSessionPrefix+"task_0123456789abcdef", "a.md", policy.RiskMedium)
			return a
		}, true, false},
		{"paired client", func(e *env) Approval {
			a, _ := e.request(t, "alice", PairedSessionPrefix+"x", "a.md", policy.RiskLow)
			return a
		}, true, false},
		{"mkdir", func(e *env) Approval { return e.requestCommand(t, "mkdir", "build") }, false, false},
		{"go test runs code", func(e *env) Approval { return e.requestCommand(t, "go", "test", "./...") }, true, false},
		{"find -exec runs code", func(e *env) Approval { return e.requestCommand(t, "find", ".", "-exec", "true", ";") }, true, false},
		{"go test runs code, graded", func(e *env) Approval { return e.requestGraded(t, "go", "test", "./...") }, false, true},
		{"find -exec runs code, graded", func(e *env) Approval { return e.requestGraded(t, "find", ".", "-exec", "true", ";") }, false, true},
		{"mkdir, graded", func(e *env) Approval { return e.requestGraded(t, "mkdir", "build") }, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, scope := range []Scope{ScopeSession, ScopeAlways, ScopeOnce} {
				e := newEnv(t)
				a := tc.make(e)
				if got := a.OnceOnly(); got != tc.want {
					t.Fatalf("OnceOnly() = %v; want %v", got, tc.want)
				}
				if got, want := a.NoAlways(), tc.want || tc.noAlways; got != want {
					t.Fatalf("NoAlways() = %v; want %v", got, want)
				}
				_, err := e.svc.Approve(t.Context(), a.ID, "alice", scope)
				refused := errors.Is(err, ErrScopeNotAllowed)
				want := scope == ScopeSession && tc.want || scope == ScopeAlways && (tc.want || tc.noAlways)
				if refused != want || (err != nil && !refused) {
					t.Errorf("Approve(%s) = %v; want refused %v (OnceOnly %v, NoAlways %v)", scope, err, want, tc.want, tc.noAlways)
				}
			}
		})
	}
}
