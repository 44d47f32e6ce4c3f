package policy

import (
	"strings"
)

// Toolchains and interpreters: what builds, tests or runs a script runs
// code (contained by the sandbox, asked about by mode); inline code
// (python -c, node -e, perl -e, awk 'prog') is refused outright, because
// it turns one argv into any program a shell would run.

func goFlag(name string, base effect, ops operandRule, opts string) *grammar {
	g := &grammar{name: name, base: base, goFlag: true, operands: ops}
	return g.opts("h,help " + opts)
}

func goGrammar() *grammar {
	g := &grammar{name: "go", base: effRead, operands: opsOther, subDefault: effRuns}
	g.opts("h,help")
	runs := goFlag("go build", effRuns, opsOther, `o=w`)
	g.sub(runs, "build", "test", "run", "vet", "generate", "install", "tool", "get")
	g.sub(goFlag("go env", effRead, opsOther, `json changed u!w w!w`), "env")
	g.sub(goFlag("go version", effRead, opsRead, `m v json`), "version")
	g.sub(goFlag("go list", effRead, opsOther, `json?o f=o e deps m u versions retracted find test compiled!x
		export!x exec=o!x toolexec=o!x reuse=r mod=o modfile=r tags=o C=r`), "list")
	g.sub(goFlag("go doc", effRead, opsOther, `all c cmd short src u`), "doc")
	g.sub(goFlag("go fmt", effWrite, opsOther, `n x mod=o`), "fmt", "fix")
	g.sub(goFlag("go clean", effWrite, opsOther, `i n r x cache testcache modcache fuzzcache`), "clean")
	g.sub(goFlag("go help", effRead, opsOther, ``), "help")
	mod := &grammar{name: "go mod", base: effRead, operands: opsOther, subDefault: effRuns}
	mod.sub(goFlag("go mod graph", effRead, opsOther, `go=o x`), "graph", "why", "verify")
	mod.sub(goFlag("go mod tidy", effWrite, opsOther, `e v x go=o compat=o diff`), "tidy", "edit", "init", "vendor", "download")
	g.sub(mod, "mod")
	g.sub(&grammar{name: "go work", base: effWrite, literal: true, operands: opsOther}, "work")
	g.sub(&grammar{name: "go bug", base: effRefused}, "bug") // opens a browser
	return g
}

func gofmtGrammar() *grammar {
	g := goFlag("gofmt", effRead, opsRead, `l d s e w!w r=o cpuprofile=w`)
	g.hook = func(p *parse) {
		if p.has["-w"] {
			p.opsRule = opsWrite
		}
	}
	return g
}

func cargoGrammar() *grammar {
	g := clap("cargo", effRead, opsOther, `V,version list v,verbose q,quiet color=o C=r locked offline frozen
		config=o!X Z=o!x h,help explain=o`)
	g.subDefault = effRuns
	runs := &grammar{name: "cargo build", base: effRuns, literal: true, operands: opsOther}
	g.sub(runs, "build", "b", "test", "t", "run", "r", "bench", "check", "c", "clippy", "doc", "d", "install",
		"fix", "rustc", "rustdoc", "package", "generate-lockfile", "update", "vendor", "fetch")
	// fmt is an external subcommand (cargo-fmt), so an [alias] in the
	// workspace's .cargo/config.toml can replace it with any cargo command
	// ("fmt = run"): runs code, --check included.
	g.sub(clap("cargo fmt", effRuns, opsOther, `all check p,package=o manifest-path=r message-format=o q,quiet
		v,verbose h,help`), "fmt")
	// metadata and tree run the rustc and rustc-wrapper that
	// .cargo/config.toml names, to learn the target: runs code. Only
	// metadata --no-deps asks rustc nothing.
	meta := clap("cargo metadata", effRuns, opsOther, `format-version=o no-deps filter-platform=o features=o
		all-features no-default-features manifest-path=r q,quiet v,verbose color=o locked offline frozen h,help`)
	meta.hook = func(p *parse) {
		if p.has["--no-deps"] && len(p.unknown) == 0 {
			p.lower(effRead)
		}
	}
	g.sub(meta, "metadata")
	g.sub(clap("cargo tree", effRuns, opsOther, `p,package=o workspace e,edges=o i,invert=o prune=o depth=o
		prefix=o no-dedupe d,duplicates charset=o f,format=o features=o all-features no-default-features
		target=o manifest-path=r q,quiet v,verbose color=o locked offline frozen h,help`), "tree")
	g.sub(clap("cargo version", effRead, opsOther, `v,verbose h,help`), "version")
	g.sub(clap("cargo help", effRead, opsOther, ``), "help")
	g.sub(&grammar{name: "cargo (network)", base: effNetwork}, "publish", "search", "login", "logout", "owner", "yank")
	return g
}

func npmGrammar(name string) *grammar {
	g := clap(name, effRead, opsOther, `v,version h,help`)
	readBase := effRead
	if name == "yarn" {
		// .yarnrc's yarn-path and .yarnrc.yml's yarnPath hand every yarn
		// command, --version included, to the script they name, and Yarn
		// 2+ loads the plugins .yarnrc.yml lists: yarn always runs code
		// (and a bare "yarn" installs, running lifecycle scripts).
		g.base, readBase = effRuns, effRuns
	}
	g.subDefault = effRuns
	read := &grammar{name: name + " ls", base: readBase, literal: true, operands: opsOther}
	g.sub(read, "ls", "list", "la", "ll", "prefix", "root", "explain", "why")
	help := read
	if name == "npm" {
		// .npmrc's viewer and browser settings name the program npm help
		// starts to show a page.
		help = &grammar{name: name + " help", base: effRuns, literal: true, operands: opsOther}
	}
	g.sub(help, "help")
	g.sub(&grammar{name: name + " (network)", base: effNetwork}, "publish", "login", "logout", "adduser", "owner",
		"unpublish", "deprecate", "search", "view", "info", "outdated", "audit")
	return g
}

// interpreterGrammars: python, node, perl, ruby, php, awk and sed. Each
// stops reading options at the script operand (the rest are the
// script's); with no script the program comes from stdin: inline code.
func interpreterGrammars() []*grammar {
	script := func(g *grammar) *grammar {
		g.base, g.stopAt1, g.operands, g.hook = effRuns, true, opsFirstRead, scriptHook
		return g
	}
	python := script(clap("python", effRuns, opsFirstRead, `c=o!X m=o!x^ W=o X=o b B d E h,help i!X I O q s S u
		v V,version x check-hash-based-pycs=o help-env help-xoptions help-all P`))
	node := script(clap("node", effRuns, opsFirstRead, `e,eval=o!X p,print=o!X r,require=o!X i,interactive!X
		import=o!X loader,experimental-loader=o!X c,check v,version h,help input-type=o C,conditions=o
		inspect?o!x inspect-brk?o!x max-old-space-size=o stack-size=o no-warnings trace-warnings
		enable-source-maps experimental-vm-modules test!x watch!x env-file=r`))
	ruby := script(clap("ruby", effRuns, opsFirstRead, `e=o!X r=o!x I=o C=o E,encoding=o F=o K=o T?o W?o a c
		d,debug h,help l n p s S v,verbose w y version copyright enable=o disable=o jit x?o i?o 0?o`))
	php := script(clap("php", effRuns, opsFirstRead, `r=o!X a!X B=o!X R=o!X F=r!x E=o!X f=r!x S=o!n t=o d=o!x c=o
		n e h,help i v,version l s w z=o!x H q`))
	perl := &grammar{name: "perl", base: effRuns, operands: opsFirstRead, custom: parsePerl}
	awk := gnu("awk", effRuns, opsRead, `F,field-separator=o v,assign=o f,file=r!x e,source=o!X E,exec=r!x
		i,include=r!x l,load=o!x b,characters-as-bytes c,traditional C,copyright d,dump-variables?w D,debug?o!x
		g,gen-pot I,trace k,csv L,lint?o M,bignum n,non-decimal-data N,use-lc-numeric o,pretty-print?w O,optimize
		p,profile?w P,posix r,re-interval s,no-optimize S,sandbox t,lint-old V`)
	awk.name, awk.hook = "awk", awkHook
	sed := gnu("sed", effRead, opsRead, `n,quiet,silent debug e,expression=p f,file=r!x follow-symlinks
		i,in-place?o!w l,line-length=o posix E,r,regexp-extended s,separate sandbox u,unbuffered z,null-data`)
	sed.hook = sedHook
	return []*grammar{python, node, ruby, php, perl, awk, sed}
}

// interpreterFamilies map version-suffixed names (python3.11,
// perl5.36-x86_64, nodejs) to their catalog entry.
var interpreterFamilies = map[string]string{
	"python": "python", "pypy": "python", "node": "node", "nodejs": "node", "perl": "perl", "ruby": "ruby",
	"php": "php", "awk": "awk", "gawk": "awk", "mawk": "awk", "nawk": "awk", "sed": "sed",
}

// scriptHook: an interpreter runs its script operand as code; without a
// script (or with "-") it reads the program from stdin, which is inline
// code; --version and --help alone only read.
func scriptHook(p *parse) {
	if p.rule != "" {
		return
	}
	onlyInfo := len(p.unknown) == 0
	module := false
	for _, it := range p.items {
		switch it.Name {
		case "-V", "-v", "-h", "--version", "--help", "--copyright":
		case "-m":
			module, onlyInfo = true, false
		default:
			onlyInfo = false
		}
	}
	switch {
	case len(p.operands) == 0 && onlyInfo && len(p.items) > 0:
		p.lower(effRead)
	case len(p.operands) == 0 && !module:
		p.refuse(effRefused, RuleLimitInlineCode, p.entry+" without a script file reads its program from standard input: inline code is refused; write the script to a file and run that")
	case len(p.operands) > 0 && p.items[p.operands[0]].Value == "-":
		p.refuse(effRefused, RuleLimitInlineCode, p.entry+" - reads its program from standard input: inline code is refused; write the script to a file and run that")
	}
}

// awkHook: an awk program given on the command line is inline code.
func awkHook(p *parse) {
	if p.has["-f"] || p.has["-E"] || p.has["--version"] || p.has["--help"] || p.has["-V"] {
		if p.has["-f"] || p.has["-E"] {
			p.opsRule = opsRead
		} else if len(p.unknown) == 0 {
			p.lower(effRead)
		}
		return
	}
	p.refuse(effRefused, RuleLimitInlineCode, p.entry+" with its program in the arguments runs inline code (awk can call system()); write the program to a file and use -f")
}

// sedHook: a sed script from the arguments only reads (or with -i writes
// the files it edits) when it has none of the letters of sed's commands
// that run a shell (e) or write a file (w, W); otherwise, or with a
// script file, it runs code.
func sedHook(p *parse) {
	var scripts []string
	for _, it := range p.items {
		if it.Name == "-e" {
			scripts = append(scripts, it.Value)
		}
	}
	if !p.has["-e"] && !p.has["-f"] && len(p.operands) > 0 {
		scripts = append(scripts, p.items[p.operands[0]].Value)
		p.pattern = false
		p.opsRule = opsPatternFirst
	}
	if p.has["-f"] {
		p.raise(effRuns)
	}
	for _, s := range scripts {
		if strings.ContainsAny(s, "ewW") {
			p.raise(effRuns)
			p.anywhere = true
		}
	}
	if p.has["-i"] {
		if p.opsRule == opsPatternFirst {
			p.opsRule = opsFirstOther
		} else {
			p.opsRule = opsWrite
		}
	}
}

// parsePerl reads perl's switches by hand: they cluster, and several
// swallow the rest of their argument (-I dir, -i ext, -x dir, -F pat,
// -l/-0 digits). -e, -E (inline code), -M, -m (a "use" line, which can be
// any code) and -d (the debugger, or -d:Module) are refused wherever they
// appear in a cluster.
func parsePerl(p *parse) {
	i := 0
	info := false
	for ; i < len(p.args); i++ {
		a := p.args[i]
		if a == "--" {
			p.items = append(p.items, Item{Kind: ItemEnd})
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		p.items = append(p.items, Item{Kind: ItemOption, Name: a})
	cluster:
		for j := 1; j < len(a); j++ {
			switch c := a[j]; {
			case strings.IndexByte("eEmMd", c) >= 0:
				p.refuse(effRefused, RuleLimitInlineCode, "perl "+a+" runs inline code (-e, -E, -M, -m and -d are refused); write the script to a file and run that")
				return
			case c == 'I' || c == 'i' || c == 'x' || c == 'F' || c == 'V' || c == 'C':
				if c == 'I' && j == len(a)-1 && i+1 < len(p.args) {
					i++ // "-I dir"
				}
				if c == 'V' && len(a) == 2 {
					info = true
				}
				break cluster
			case c == 'l' || c == '0':
				for j+1 < len(a) && (a[j+1] >= '0' && a[j+1] <= '9' || a[j+1] == 'x' && c == '0') {
					j++
				}
			case c == 'v' || c == 'h':
				info = len(a) == 2
			case strings.IndexByte("naspcwWXtTuUS", c) >= 0:
			default:
				p.markUnknown(a)
				break cluster
			}
		}
	}
	if i < len(p.args) {
		p.operands = append(p.operands, len(p.items))
		p.items = append(p.items, Item{Kind: ItemOperand, Value: p.args[i], Role: RolePathRead})
		for _, a := range p.args[i+1:] {
			p.operands = append(p.operands, len(p.items))
			p.items = append(p.items, Item{Kind: ItemOperand, Value: a, Role: RoleOther})
		}
	}
	switch {
	case len(p.operands) == 0 && info && len(p.unknown) == 0:
		p.lower(effRead)
	case len(p.operands) == 0 || p.items[p.operands[0]].Value == "-":
		p.refuse(effRefused, RuleLimitInlineCode, "perl without a script file reads its program from standard input: inline code is refused; write the script to a file and run that")
	}
}
