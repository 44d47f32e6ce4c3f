package main

import (
	"bytes"
	"strings"
	"testing"
)

// homard completion SHELL prints a script for each shell that names
// homard, and the shell's completion request answers with commands.
func TestCompletion(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		t.Run(sh, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run([]string{"completion", sh}, strings.NewReader(""), &out, &errb)
			if code != 0 || out.Len() < 500 || !strings.Contains(out.String(), "homard") {
				t.Fatalf("homard completion %s: exit %d, %d bytes of script, stderr %q; want a script naming homard", sh, code, out.Len(), errb.String())
			}
			if !strings.Contains(out.String(), "__complete") {
				t.Errorf("homard completion %s: the script does not ask homard (__complete)", sh)
			}
		})
	}
	var out, errb bytes.Buffer
	if code := run([]string{"__complete", "config", ""}, strings.NewReader(""), &out, &errb); code != 0 || !strings.Contains(out.String(), "migrate\t") {
		t.Errorf("homard __complete config '': exit %d, %q; want migrate offered", code, out.String())
	}
	out.Reset()
	if code := run([]string{"--help"}, strings.NewReader(""), &out, &errb); code != 0 || !strings.Contains(out.String(), "homard completion bash|zsh|fish") ||
		!strings.Contains(out.String(), "\n  completion ") {
		t.Errorf("homard --help does not teach completion:\n%s", out.String())
	}
	if code := run([]string{"completion", "tcsh"}, strings.NewReader(""), &out, &errb); code != exitUsage {
		t.Errorf("homard completion tcsh: exit %d; want %d (an unknown shell is a usage error)", code, exitUsage)
	}
}
