package config

import (
	"os"
	"path/filepath"
)

func validateAgent(a *Agent, ps *problems) {
	if a.MaxCalls <= 0 {
		ps.add("agent.max_calls = %d: want a positive number of tool calls per turn (the default is %d)", a.MaxCalls, DefaultAgentMaxCalls)
	}
	if a.MaxUnits <= 0 {
		ps.add("agent.max_units = %d: want a positive number of units per turn (the default is %d)", a.MaxUnits, DefaultAgentMaxUnits)
	}
	if a.ReserveUnits < 0 || (a.MaxUnits > 0 && a.ReserveUnits >= a.MaxUnits) {
		ps.add("agent.reserve_units = %d: want at least 0 and less than agent.max_units (%d); 0 means no reserve for read-only tools", a.ReserveUnits, a.MaxUnits)
	}
	if a.MaxTokens < 0 {
		ps.add("agent.max_tokens = %d: want at least 0 model tokens per owner turn; 0 means no limit", a.MaxTokens)
	}
	if a.GuestMaxTokens <= 0 {
		ps.add("agent.guest_max_tokens = %d: want a positive number of model tokens per guest turn (the default is %d); a guest turn always has a limit", a.GuestMaxTokens, DefaultAgentGuestMaxTokens)
	}
	if a.GuestMaxCalls <= 0 {
		ps.add("agent.guest_max_calls = %d: want a positive number of tool calls per guest turn (the default is %d)", a.GuestMaxCalls, DefaultAgentGuestMaxCalls)
	}
	if a.ExtensionToolBudget < 0 {
		ps.add("agent.extension_tool_budget = %d: want at least 0 tokens of extension tool definitions per request (the default is %d); 0 means extension tools are only found through tool_search", a.ExtensionToolBudget, DefaultAgentExtensionToolBudget)
	}
}

// validateCommandPath checks commands.path (after "~/" was expanded):
// every entry an absolute, clean, existing folder, listed once, and not in
// a writable root, where a model could put a program of its own under a
// name the owner trusts.
func validateCommandPath(dirs []string, roots []Root, ps *problems) {
	seen := make(map[string]bool)
	for i, d := range dirs {
		key := "commands.path"
		switch {
		case d == "" || !filepath.IsAbs(d) || filepath.Clean(d) != d:
			ps.add("%s[%d] = %q: want an absolute folder such as \"~/.local/bin\" or \"/opt/tool/bin\"", key, i, d)
			continue
		case d == "/":
			ps.add("%s[%d] = \"/\": want the folder that holds the programs, such as \"~/.local/bin\", not the whole file system", key, i)
			continue
		case seen[d]:
			ps.add("%s[%d] = %q: listed twice", key, i, d)
			continue
		}
		seen[d] = true
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			ps.add("%s[%d] = %q: not an existing folder; create it or remove it from the list", key, i, d)
			continue
		}
		for _, r := range roots {
			if !r.ReadOnly() && r.Path != "" && overlaps(forms(r.Path), forms(d)) {
				ps.add("%s[%d] = %q: it overlaps the writable workspace root %q (%s), where tools can write: a model could plant a program there under a name you trust; keep your programs outside writable roots, or make that root read-only (access = \"ro\")", key, i, d, r.Name, r.Path)
			}
		}
	}
}

// overlaps reports whether a path of as and one of bs are equal or one
// lies inside the other.
func overlaps(as, bs []string) bool {
	for _, a := range as {
		for _, b := range bs {
			if within(a, b) || within(b, a) {
				return true
			}
		}
	}
	return false
}
