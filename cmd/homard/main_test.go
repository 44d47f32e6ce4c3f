package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/app"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/mcp/mcptest"
)

func TestMain(m *testing.M) {
	// First: a re-exec of this binary may be a sandbox stage or a
	// service's relay (which has the server's environment), as for homard.
	app.MaybeRunSandboxHelper()
	if spec := os.Getenv(mcptest.SpecEnv); spec != "" { // the MCP tests' stdio server (mcp_test.go)
		mcptest.Serve(os.Stdin, os.Stdout, spec)
		os.Exit(0)
	}
	testscript.Main(cleanup{m}, map[string]func(){
		"homard": func() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// cleanup removes the shared test binary (buildHomard) after the tests.
type cleanup struct{ m *testing.M }

func (c cleanup) Run() int {
	// The tests compare English output: they run in English whatever the
	// machine's locale (a test that wants Chinese sets LANG itself).
	os.Setenv("LANG", "C")
	os.Unsetenv("LC_ALL")
	os.Unsetenv("LC_MESSAGES")
	code := c.m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	return code
}

// TestScripts runs the CLI as a user types it: testdata/script/*.txtar.
func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams("testdata/script"))
}

// scriptParams runs the scripts in dir, each with its own home and the
// commands below.
func scriptParams(dir string) testscript.Params {
	return testscript.Params{
		Dir: dir,
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOMARD_HOME", env.WorkDir+"/home")
			env.Setenv("XDG_CONFIG_HOME", env.WorkDir+"/xdg-config")
			env.Setenv("XDG_DATA_HOME", env.WorkDir+"/xdg-data")
			scriptStore(env)
			return nil
		},
		// [postgres]: the homes keep their state in PostgreSQL, not in
		// data/homard.db; [pgengine]: homard has the PostgreSQL engine
		// (-tags postgres) whether or not they do (store_test.go).
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "postgres":
				return onPostgres(), nil
			case "pgengine":
				return postgresBuild, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":  exitcode,
			"fakemodel": fakemodel,
			"fakezhipu": fakezhipu,
			"totpcode":  totpcode,
			"readenv":   readenv,
			"replace":   replace,
			"headlines": headlines,
		},
	}
}

// exitcode N PROG ARGS... runs PROG like exec and checks its exact exit
// status; stdout and stderr are kept for the next stdout/stderr check.
func exitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit status %d; want %d", got, want)
	}
}

// fakemodel REPLY... starts a loopback OpenAI-compatible server that
// answers the script's model requests in order, one text REPLY each (a
// literal \n in REPLY is a line break), and sets MODEL_URL to its base
// URL. It stops when the script ends.
func fakemodel(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: fakemodel REPLY...")
	}
	var replies []llmtest.Reply
	for _, a := range args {
		text := strings.ReplaceAll(a, `\n`, "\n")
		replies = append(replies, llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{text}})})
	}
	srv := llmtest.NewServer(replies...)
	ts.Defer(srv.Close)
	ts.Setenv("MODEL_URL", srv.URL+"/v1")
}

// totpcode FILE OUT [SECONDS] reads the otpauth:// URI `homard totp setup`
// printed into FILE and writes to OUT the code an authenticator app shows
// SECONDS from now (default 0) — what the owner would type.
func totpcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: totpcode FILE OUT [SECONDS]")
	}
	uri := regexp.MustCompile(`otpauth://\S+`).FindString(ts.ReadFile(args[0]))
	u, err := url.Parse(uri)
	if err != nil || uri == "" {
		ts.Fatalf("no otpauth URI in %s", args[0])
	}
	at := time.Now()
	if len(args) == 3 {
		n, err := strconv.Atoi(args[2])
		ts.Check(err)
		at = at.Add(time.Duration(n) * time.Second)
	}
	code, err := totp.GenerateCodeCustom(u.Query().Get("secret"), at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(code), 0o600))
}
