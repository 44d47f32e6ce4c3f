package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/homard/homard/internal/llm/llmtest"
)

// TestRunTaskFromStdin: `homard run -` sends stdin (1 MB here), not "-",
// to the model; a task too long for model.context_tokens is cut in its
// middle, and a warning on stderr says by exactly as many characters as
// the request's marker. A short task (the twin) is sent whole, without a
// warning, and "-" with --ask always (which reads answers from stdin) is a
// usage error.
func TestRunTaskFromStdin(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-CLIKEY0123456789")
	answer := llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"Read."}})}
	srv := llmtest.NewServer(answer, answer)
	defer srv.Close()
	home := t.TempDir()
	useTestStore(t, home)
	homard := func(stdin string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(append([]string{"--home", home}, args...), strings.NewReader(stdin), &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, _, stderr := homard("", "init", "--base-url", srv.URL+"/v1"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	captureOff(t, home)

	task := "HEAD-OF-TASK " + strings.Repeat("lorem ipsum ", 1<<20/12) + " END-OF-TASK"
	code, out, stderr := homard(task, "run", "-")
	if code != exitOK || out != "Read.\n" {
		t.Fatalf("run - = exit %d, stdout %q, stderr %q; want 0 and the answer", code, out, stderr)
	}
	body := string(srv.Requests()[0].Body)
	if !strings.Contains(body, "HEAD-OF-TASK") || !strings.Contains(body, "END-OF-TASK") {
		t.Fatalf("the request lacks the task from stdin: %.300q", body)
	}
	m := regexp.MustCompile(`homard: warning: the task is (\d+) characters; (\d+) in its middle are cut before the model sees it, to fit model.context_tokens = 24000`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("stderr does not warn that the task is cut:\n%s", stderr)
	}
	if m[1] != strconv.Itoa(len(task)) {
		t.Errorf("warning says the task is %s characters; want %d", m[1], len(task))
	}
	if marker := fmt.Sprintf("[… %s characters omitted from this copy …]", m[2]); !strings.Contains(body, marker) {
		t.Errorf("the warning says %s characters are cut; the request does not hold %q", m[2], marker)
	}

	code, _, stderr = homard("a short task from stdin\n", "run", "--session", "short", "-")
	if code != exitOK || strings.Contains(stderr, "warning") {
		t.Fatalf("run - (short) = exit %d, stderr %q; want 0 and no warning", code, stderr)
	}
	if body := string(srv.Requests()[1].Body); !strings.Contains(body, "a short task from stdin") || strings.Contains(body, "omitted from this copy") {
		t.Errorf("the short task is not sent whole: %.300q", body)
	}

	if code, _, stderr = homard("o\n", "run", "--ask", "always", "-"); code != exitUsage || !strings.Contains(stderr, "--ask always") {
		t.Errorf("run --ask always - = exit %d, stderr %q; want 2 naming --ask always", code, stderr)
	}
}
