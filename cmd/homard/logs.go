package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

// requestLine is what `homard logs` reads of a line of the request log
// (internal/reqlog.Entry); --json passes lines through as they are.
type requestLine struct {
	Time        time.Time `json:"time"`
	Role        string    `json:"role"`
	Model       string    `json:"model"`
	Bytes       int       `json:"bytes"`
	SystemBytes int       `json:"system_bytes"`
	// Earlier sums up the first messages an earlier line listed; Messages
	// lists those after them.
	Earlier *struct {
		Messages  int `json:"messages"`
		User      int `json:"user"`
		Assistant int `json:"assistant"`
		Tool      int `json:"tool"`
		Calls     int `json:"calls"`
	} `json:"earlier"`
	Messages []struct {
		Role  string   `json:"role"`
		Bytes int      `json:"bytes"`
		Calls []string `json:"calls"`
		Text  string   `json:"text"`
	} `json:"messages"`
	Tools       []string `json:"tools"`
	NoToolCalls bool     `json:"no_tool_calls"`
}

func (c *cli) logsCmd() *cobra.Command {
	var follow, asJSON bool
	var last int
	cmd := &cobra.Command{
		Use:   "logs",
		Short: lang.N("What each model request contained: sizes, message roles, tool names (--follow to watch)"),
		Long: lang.N(`homard keeps a line per model request in its data folder
(model-requests.jsonl, rotated at 16 MiB; telemetry.log_requests): which
role's model, how many bytes of system prompt and messages, each message's
role and size, the tools an assistant message called, and the tools offered.
The messages' text is kept too only with telemetry.log_model_inputs = true,
and then redacted like everything homard stores. Nothing here is sent
anywhere.`),
		/* lang:en */ Example: `  homard logs
  homard logs --follow
  homard logs -n 5 --json`,
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, lang.N("keep printing requests as they are made"))
	cmd.Flags().IntVarP(&last, "lines", "n", 20, lang.N("how many of the last requests to print first (0: all)"))
	jsonFlag(cmd, &asJSON, lang.N("print each request's line as stored (JSON Lines)"))
	return leafCmd(cmd, cobra.NoArgs, func(ctx context.Context, _ []string) error {
		p, err := c.paths()
		if err != nil {
			return err
		}
		path := app.RequestLogFile(p)
		f, err := os.Open(path)
		if os.IsNotExist(err) && !follow {
			c.say.Fprintf(c.stdout, "no model requests logged yet (%s); telemetry.log_requests keeps them\n", termtext.Line(path))
			return nil
		}
		var lines []string
		var offset int64
		if err == nil {
			lines, offset, err = readLines(f, 0)
			f.Close()
			if err != nil {
				return err
			}
		}
		if last > 0 && len(lines) > last {
			lines = lines[len(lines)-last:]
		}
		for _, l := range lines {
			c.printRequest(l, asJSON)
		}
		for follow {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(500 * time.Millisecond):
			}
			fi, err := os.Stat(path)
			if err != nil {
				continue // not written yet
			}
			if fi.Size() < offset {
				offset = 0 // rotated: the new file from its start
			}
			f, err := os.Open(path)
			if err != nil {
				continue
			}
			var more []string
			more, offset, err = readLines(f, offset)
			f.Close()
			if err != nil {
				return err
			}
			for _, l := range more {
				c.printRequest(l, asJSON)
			}
		}
		return nil
	})
}

// readLines reads the whole lines of f from offset on and returns them
// and the offset after the last one (a line still being written waits).
func readLines(f *os.File, offset int64) ([]string, int64, error) {
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, offset, err
	}
	var out []string
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF {
			return out, offset, nil
		}
		if err != nil {
			return out, offset, err
		}
		offset += int64(len(line))
		out = append(out, strings.TrimSuffix(line, "\n"))
	}
}

// printRequest prints one line of the log: as stored with asJSON, else
// one summary line and, when the text was kept, each message's start.
// Everything in it came from the model or a tool: through termtext.
func (c *cli) printRequest(line string, asJSON bool) {
	if asJSON {
		fmt.Fprintln(c.stdout, termtext.Line(line))
		return
	}
	var e requestLine
	if err := json.Unmarshal([]byte(line), &e); err != nil {
		c.say.Fprintf(c.stdout, "(unreadable line: %v)\n", err)
		return
	}
	roles := map[string]int{}
	var calls []string
	n := len(e.Messages)
	if e.Earlier != nil {
		n += e.Earlier.Messages
		roles["user"], roles["assistant"], roles["tool"] = e.Earlier.User, e.Earlier.Assistant, e.Earlier.Tool
		if e.Earlier.Calls > 0 {
			calls = append(calls, c.say.Sprintf("%d earlier", e.Earlier.Calls))
		}
	}
	for _, m := range e.Messages {
		roles[m.Role]++
		for _, call := range m.Calls {
			calls = append(calls, termtext.Line(call))
		}
	}
	c.say.Fprintf(c.stdout, "%s  %-8s %-24s %7d bytes  %d messages (%d user, %d assistant, %d tool)  %d tools offered",
		e.Time.Local().Format(time.DateTime), termtext.Line(e.Role), termtext.Line(e.Model), e.Bytes, n,
		roles["user"], roles["assistant"], roles["tool"], len(e.Tools))
	if len(calls) > 0 {
		c.say.Fprintf(c.stdout, "  calls so far: %s", strings.Join(calls, ", "))
	}
	fmt.Fprintln(c.stdout)
	for _, m := range e.Messages {
		if m.Text != "" {
			fmt.Fprintf(c.stdout, "    %-9s %s\n", m.Role, termtext.Line(firstLine(m.Text)))
		}
	}
}
