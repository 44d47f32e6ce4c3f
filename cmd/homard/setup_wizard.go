package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/charmbracelet/huh"
	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/setup"
	"github.com/homard/homard/internal/termtext"
)

// setupWizard asks setup's questions in the terminal, each answer
// pre-filled from the flags or the existing config. It fills o; Setup
// then tests and writes. Text from outside (Ollama's model names, the
// config) is shown through termtext.
func (c *cli) setupWizard(cmd *cobra.Command, p config.Paths, o *setup.Options) error {
	ctx := cmd.Context()
	var old *config.Config
	if cfg, err := config.Load(p.ConfigFile); err == nil {
		old = cfg
	}
	ollama, ollamaErr := setup.DetectOllama(ctx, o.OllamaURL)

	// 1. Provider.
	if o.Provider == "" {
		o.Provider = config.ProviderOpenAI
		if old != nil {
			o.Provider = old.Model.Provider
		} else if ollamaErr == nil && len(ollama) > 0 {
			o.Provider = "ollama"
		}
	}
	var opts []huh.Option[string]
	for _, pr := range config.Presets() {
		label := pr.Title
		if pr.Name == "ollama" {
			if ollamaErr == nil {
				label += c.say.Sprintf(" — running, %d model(s)", len(ollama))
			} else {
				label += c.say.T(" — not running here")
			}
		}
		opts = append(opts, huh.NewOption(label, pr.Name))
	}
	if err := c.ask("provider", huh.NewSelect[string]().Title(c.say.T("Which model provider?")).
		Description(c.say.T("Hosted services need an API key; local servers run on this machine.")).
		Options(opts...).Value(&o.Provider), func() string { return o.Provider }); err != nil {
		return err
	}
	preset, _ := config.LookupPreset(o.Provider)
	sameProvider := old != nil && old.Model.Provider == preset.Name

	// 2. Base URL: asked where it differs from machine to machine.
	if o.BaseURL == "" {
		o.BaseURL = preset.BaseURL
		switch {
		case sameProvider:
			o.BaseURL = old.Model.BaseURL
		case preset.Name == "ollama":
			o.BaseURL = strings.TrimRight(o.OllamaURL, "/") + "/v1"
		}
	}
	if preset.Local || preset.Name == config.ProviderOpenAI {
		if err := c.ask("base URL", // lang:en: a setting's name
			huh.NewInput().Title(c.say.T("Base URL of the API")).
				Description(c.say.T("Keep the default unless your server listens elsewhere.")).
				Value(&o.BaseURL).Validate(c.nonEmpty(c.say.T("a base URL"))), func() string { return o.BaseURL }); err != nil {
			return err
		}
	}

	// 3. Model: Ollama's own list when it answered.
	if o.Model == "" {
		o.Model = preset.Model
		if sameProvider {
			o.Model = old.Model.Name
		}
	}
	if preset.Name == "ollama" && len(ollama) > 0 {
		var mopts []huh.Option[string]
		for _, name := range ollama {
			mopts = append(mopts, huh.NewOption(termtext.Line(name), name))
		}
		if !slices.Contains(ollama, o.Model) {
			o.Model = ollama[0]
		}
		if err := c.ask("model", huh.NewSelect[string]().Title(c.say.T("Which model? (pulled in Ollama)")).Options(mopts...).Value(&o.Model),
			func() string { return o.Model }); err != nil {
			return err
		}
	} else {
		desc := c.say.T("The model name the API expects.")
		if preset.Local {
			desc = c.say.T("The name of a model your server serves.")
		}
		if preset.ModelNote != "" {
			desc += " " + preset.ModelNote
		}
		if err := c.ask("model", huh.NewInput().Title(c.say.T("Which model?")).Description(desc).
			Value(&o.Model).Validate(c.nonEmpty(c.say.T("a model name"))), func() string { return o.Model }); err != nil {
			return err
		}
	}

	// 4. Key, masked; never echoed, never in config.toml.
	if !preset.Local {
		keep := c.say.Sprintf("Leave it empty to use $%s.", preset.KeyEnv)
		if sameProvider && old.Model.APIKeySecret != "" {
			keep = c.say.Sprintf("Leave it empty to keep the one in vault secret %s.", old.Model.APIKeySecret)
		}
		if err := c.ask("key", huh.NewInput().Title(c.say.Sprintf("API key for %s", preset.Title)).
			Description(c.say.Sprintf("Stored encrypted in homard's vault as model-%s, never in config.toml. %s", preset.Name, keep)).
			EchoMode(huh.EchoModePassword).Value(&o.APIKey), func() string {
			if strings.TrimSpace(o.APIKey) == "" {
				return c.say.T("none typed")
			}
			return c.say.T("typed (not shown)")
		}); err != nil {
			return err
		}
		o.APIKey = strings.TrimSpace(o.APIKey)
	}

	// 5. Permission mode, one line each.
	if o.Mode == "" {
		o.Mode = "smart"
		if old != nil {
			o.Mode = old.Permissions.Mode
		}
	}
	var mopts []huh.Option[string]
	for _, m := range setup.Modes() {
		mopts = append(mopts, huh.NewOption(fmt.Sprintf("%-9s %s", m.Name, c.say.T(m.Line)), m.Name))
	}
	if err := c.ask("mode", huh.NewSelect[string]().Title(c.say.T("How much should homard ask before acting?")).
		Description(c.say.T("Hard limits hold in every mode; change it later in config.toml.")).
		Options(mopts...).Value(&o.Mode), func() string { return o.Mode }); err != nil {
		return err
	}

	// 6. Workspace folders; unchanged roots are left as written.
	current := []string{p.WorkspaceDir}
	var currentRO []string
	if old != nil {
		current = current[:0]
		for _, r := range old.Workspace.Roots {
			if r.ReadOnly() {
				currentRO = append(currentRO, r.Path)
			} else {
				current = append(current, r.Path)
			}
		}
	}
	answer := strings.Join(current, ", ")
	if len(o.Workspaces) > 0 {
		answer = strings.Join(o.Workspaces, ", ")
	}
	if err := c.ask("workspace", huh.NewInput().Title(c.say.T("Which folders may homard's tools use?")).
		Description(c.say.T("Separate folders with commas; the first is the root named main.")).
		Value(&answer).Validate(c.nonEmpty(c.say.T("a folder"))), func() string { return answer }); err != nil {
		return err
	}
	dirs := appendFolders(nil, answer)
	o.Workspaces = nil
	if !slices.Equal(dirs, current) {
		o.Workspaces = dirs
	}

	// 7. Read-only folders (optional): read, listed and searched, never changed.
	answerRO := strings.Join(currentRO, ", ")
	if len(o.ReadOnly) > 0 {
		answerRO = strings.Join(o.ReadOnly, ", ")
	}
	if err := c.ask("read-only", huh.NewInput().Title(c.say.T("Folders homard may read but never change? (optional)")).
		Description(c.say.T("For example ~ (your home): credentials in it stay hidden. Separate folders with commas; leave empty for none.")).
		Value(&answerRO), func() string {
		if answerRO == "" {
			return "none"
		}
		return answerRO
	}); err != nil {
		return err
	}
	ro := appendFolders([]string{}, answerRO) // empty, not nil: "none" removes the read-only roots
	o.ReadOnly = nil
	if !slices.Equal(ro, currentRO) {
		o.ReadOnly = ro
		if o.Workspaces == nil {
			o.Workspaces = dirs // both lists are written together
		}
	}
	return nil
}

// ask runs one question in the terminal, then leaves "label: answer" on
// the screen (the form clears itself) with shown() as the answer. Ctrl+C
// ends setup with nothing written.
func (c *cli) ask(label string, f huh.Field, shown func() string) error {
	form := huh.NewForm(huh.NewGroup(f)).WithShowHelp(false)
	if in, ok := c.stdin.(*os.File); ok {
		form = form.WithInput(in)
	}
	if out, ok := c.stdout.(*os.File); ok {
		form = form.WithOutput(out)
	}
	if err := form.Run(); err != nil {
		if errors.Is(err, huh.ErrUserAborted) {
			return &exitError{code: exitFailure, err: c.say.Errorf("setup cancelled; nothing was written")}
		}
		return c.say.Errorf("setup: %w", err)
	}
	fmt.Fprintf(c.stdout, "%-10s %s\n", label, termtext.Line(shown()))
	return nil
}

func (c *cli) nonEmpty(what string) func(string) error {
	return func(s string) error {
		if strings.TrimSpace(s) == "" {
			return c.say.Errorf("type %s", what)
		}
		return nil
	}
}

// appendFolders appends to dst the folders of answer, which separates
// them with commas: each trimmed, blanks left out, a leading "~/" expanded.
func appendFolders(dst []string, answer string) []string {
	for d := range strings.SplitSeq(answer, ",") {
		if d = strings.TrimSpace(d); d != "" {
			dst = append(dst, expandHome(d))
		}
	}
	return dst
}

// expandHome turns a leading "~/" into $HOME.
func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if h, err := os.UserHomeDir(); err == nil {
			return h + "/" + rest
		}
	}
	return p
}
