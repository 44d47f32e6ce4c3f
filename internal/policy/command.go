package policy

import (
	"path"
	"slices"
	"strings"
	"unicode"
)

// Command is a program invocation as a run_command Plan describes it: the
// name the model asked for, the absolute path it resolved to, that path
// with symlinks followed, and the exact arguments (argv[1:]). There is no
// shell anywhere: every argument reaches the program as one literal string.
type Command struct {
	Program  string   // as proposed: a bare name or an absolute path
	Path     string   // absolute path after the PATH lookup
	RealPath string   // Path with symlinks resolved (/bin/sh → /usr/bin/dash)
	Args     []string // argv[1:]
}

// CommandVerdict is what the catalog concludes about a Command before any
// rule or mode: a hard refusal, or its class, risk, what it writes and
// the template a standing grant for it would hold.
type CommandVerdict struct {
	Refused bool
	Rule    string // set when Refused: a limit rule id (RuleLimitShell, RuleLimitArgv, RuleLimitInlineCode, …)
	Reason  string
	// Class is read, write or runs code (never ClassNone for a command
	// that is not refused).
	Class Class
	// Risk: read is low; write is medium (rm high, recursive rm, chmod,
	// chown and history rewrites critical); runs code is medium — the
	// sandbox contains it and its changes are graded before they apply —
	// except programs that change disks, processes or the system, which
	// are critical. Refused is critical.
	Risk Risk
	// ReadOnly is Class == ClassRead, kept for callers that predate Class.
	ReadOnly bool
	// Entry is the catalog entry that read the argv ("git", "python",
	// "mkdir"); empty for a program the catalog does not know.
	Entry string
	// Writes lists the operands and option values the grammar says are
	// written, as given (relative to the command's working folder).
	Writes []string
	// WritesAnywhere says the command may write paths its argv does not
	// name (tar -x, unzip, find -exec, anything that runs code).
	WritesAnywhere bool
	// Configs lists the files in the working folder or the repository
	// that the entry's program reads and that change what it does
	// (".npmrc", "package.json", "Makefile"), for the card and the audit;
	// see entryConfigs. Empty for a program the catalog does not know.
	Configs []string
	// Template is the argv as the catalog parsed it, ready to become a
	// standing grant (see Template). Its Program is RealPath; the caller
	// fills in Dir, SHA256, Stdin and TimeoutS.
	Template Template
}

// ClassifyCommand applies the hard limits on commands and reads the argv
// with the catalog. allowed lists programs the operator permits although
// the catalog refuses them (matched against every name of the program:
// the base names of Program, Path and RealPath, and Path and RealPath
// themselves); such a program runs as code, never as a read.
//
// The catalog is an allow-list: a program it does not know, or an option
// its grammar does not list, runs as code. Refused always (whatever the
// mode): shells, inline code, programs that run another program unchecked
// (sudo, env, xargs, nsenter, …), git's -c, -O, --output, --git-dir and
// friends, and programs that reach the network.
func ClassifyCommand(c Command, allowed []string) CommandVerdict {
	if reason := badProgramName(c.Program); reason != "" {
		return refuse(RuleLimitProgramName, reason)
	}
	if !path.IsAbs(c.Path) || !path.IsAbs(c.RealPath) {
		return refuse(RuleLimitProgramName, "the program did not resolve to an absolute path")
	}
	for _, a := range c.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return refuse(RuleLimitArgv, "an argument contains a NUL byte")
		}
	}
	names := programNames(c)
	if slices.ContainsFunc(names, func(n string) bool { return slices.Contains(allowed, n) }) {
		v := CommandVerdict{Class: ClassRunsCode, Risk: RiskMedium, WritesAnywhere: true}
		v.Template = Template{Program: c.RealPath, Items: opaqueItems(c.Args), RunsCode: true}
		if criticalProgram(baseName(c.RealPath)) {
			v.Risk = RiskCritical
		}
		return v
	}
	var bases []string
	for _, n := range []string{path.Base(c.RealPath), path.Base(c.Program), path.Base(c.Path)} {
		if !slices.Contains(bases, n) {
			bases = append(bases, n)
		}
	}
	for _, n := range bases {
		if rule, ok := refusedName(n); ok {
			return refuse(rule, n+" "+kindReason[rule]+" (an operator can allow it in config: commands.allow)")
		}
	}
	// Every name the program goes by is read, the real one first; the
	// most severe reading wins (a multi-call binary behaves by the name
	// it is called with).
	var out CommandVerdict
	for i, n := range bases {
		v := classifyAs(n, c.Args)
		if v.Refused {
			return v
		}
		if i == 0 || v.Class > out.Class || v.Class == out.Class && v.Risk > out.Risk {
			configs := out.Configs
			out = v
			out.Configs = configs
		}
		// The configs of every reading: whichever name the binary
		// behaves by, the card names every file that could steer it.
		for _, f := range v.Configs {
			if !slices.Contains(out.Configs, f) {
				out.Configs = append(out.Configs, f)
			}
		}
	}
	out.Template.Program = c.RealPath
	return out
}

// classifyAs reads args with the catalog entry for the base name n.
func classifyAs(n string, args []string) CommandVerdict {
	g, entry := lookupEntry(n)
	if g == nil {
		v := CommandVerdict{Class: ClassRunsCode, Risk: RiskMedium, WritesAnywhere: true,
			Template: Template{Items: opaqueItems(args), RunsCode: true}}
		if criticalProgram(n) {
			v.Risk = RiskCritical
		}
		return v
	}
	p := &parse{entry: entry, g: g, args: args, base: g.base, has: map[string]bool{}}
	p.run()
	p.raise(p.base)
	if entry == "git" {
		gitRefusedArgs(p)
	}
	if p.rule != "" {
		return refuse(p.rule, p.reason)
	}
	v := CommandVerdict{Class: p.eff.class(), Entry: entry, Writes: p.writes, WritesAnywhere: p.anywhere,
		Configs: slices.Clone(g.configs)}
	if v.Class == ClassRunsCode {
		v.WritesAnywhere = true
	}
	v.ReadOnly = v.Class == ClassRead
	v.Risk = riskFor(entry, v.Class, p)
	v.Template = newTemplate(entry, p.items, v.Class == ClassRunsCode)
	return v
}

// lookupEntry finds the catalog entry for a base name: an exact name, or
// an interpreter with a version suffix (python3.11, perl5.36-x86_64).
// Other entries match only exactly: "cat-x" is not cat.
func lookupEntry(n string) (*grammar, string) {
	if g, ok := catalog()[n]; ok {
		return g, n
	}
	for prefix, fam := range interpreterFamilies {
		if versioned(n, prefix) {
			return catalog()[fam], fam
		}
	}
	return nil, ""
}

// versioned reports whether n is prefix followed by a version or build
// suffix: "python3", "python3.11", "perl5.36-x86_64", "bash-static",
// "vim.basic".
func versioned(n, prefix string) bool {
	if !strings.HasPrefix(n, prefix) || len(n) == len(prefix) {
		return n == prefix
	}
	return strings.IndexByte("0123456789-._", n[len(prefix)]) >= 0
}

func refuse(rule, reason string) CommandVerdict {
	return CommandVerdict{Refused: true, Rule: rule, Reason: reason, Risk: RiskCritical, Class: ClassRunsCode}
}

// opaqueItems records an argv the catalog cannot read: every argument an
// operand with no role.
func opaqueItems(args []string) []Item {
	out := make([]Item, 0, len(args))
	for _, a := range args {
		out = append(out, Item{Kind: ItemOperand, Value: a, Role: RoleOther})
	}
	return out
}

// riskFor grades a parsed command.
func riskFor(entry string, c Class, p *parse) Risk {
	r := RiskMedium
	if c == ClassRead {
		r = RiskLow
	}
	switch entry {
	case "rm":
		r = RiskHigh
		if p.has["-r"] || p.has["-d"] {
			r = RiskCritical // recursive delete
		}
	case "rmdir":
		r = RiskHigh
	case "chmod", "chown", "chgrp":
		r = RiskCritical
	case "find":
		if c == ClassWrite {
			r = RiskHigh
		}
	case "git":
		if e := gitEscalation(p.args); e > r {
			r = e
		}
	}
	return r
}

// badProgramName rejects anything but a plain name or an absolute path:
// shell syntax, spaces (a trailing space is how "ls " smuggles a different
// lookup), control characters, relative paths.
func badProgramName(p string) string {
	if p == "" {
		return "the program name is empty"
	}
	for _, r := range p {
		if unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune(";&|`$(){}<>*?[]!~'\"\\#=%", r) {
			return "the program must be a bare name or an absolute path, without spaces or shell syntax; put arguments in args"
		}
	}
	if strings.Contains(p, "/") && !strings.HasPrefix(p, "/") {
		return "a program path must be absolute; relative paths like ./x are refused"
	}
	if strings.HasPrefix(p, "/") && path.Clean(p) != p {
		return "the program path is not clean (no .., //, or trailing /)"
	}
	return ""
}

// programNames lists every name the program goes by, base names first.
func programNames(c Command) []string {
	var out []string
	for _, n := range []string{path.Base(c.Program), path.Base(c.Path), path.Base(c.RealPath), c.Path, c.RealPath} {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
