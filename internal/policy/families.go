package policy

import (
	"fmt"
	"strings"
)

// tarGrammar: GNU tar, including the old style "tar cf a.tar dir" whose
// first argument is a cluster without a dash and whose letters take their
// values from the following arguments in order.
func tarGrammar() *grammar {
	g := gnu("tar", effRead, opsRead, `A,catenate,concatenate!w c,create!w d,diff,compare delete!w r,append!w
		t,list test-label u,update!w x,extract,get!w f,file=o C,directory=o z,gzip,gunzip,ungzip j,bzip2 J,xz lzip
		lzma lzop zstd a,auto-compress I,use-compress-program=o!x v,verbose k,keep-old-files keep-newer-files
		skip-old-files overwrite overwrite-dir remove-files!w O,to-stdout to-command=o!x checkpoint?o
		checkpoint-action=o!x F,info-script,new-volume-script=o!x rsh-command=o!x strip-components=o exclude=o
		X,exclude-from=r T,files-from=r null p,preserve-permissions,same-permissions same-owner no-same-owner
		no-same-permissions numeric-owner owner=o group=o mode=o mtime=o h,dereference hard-dereference
		P,absolute-names transform,xform=o exclude-vcs exclude-vcs-ignores anchored no-anchored wildcards
		no-wildcards totals?o W,verify w,interactive,confirmation!x b,blocking-factor=o sort=o format=o H
		warning=o show-transformed-names no-recursion recursion one-file-system atime-preserve?o`)
	g.pre = func(g *grammar, args []string) []string {
		if len(args) == 0 || args[0] == "" || args[0][0] == '-' {
			return args
		}
		var out []string
		rest := args[1:]
		for i := 0; i < len(args[0]); i++ {
			c := args[0][i]
			out = append(out, "-"+string(c))
			if o := g.short[c]; o != nil && o.arg == argReq && len(rest) > 0 {
				out = append(out, rest[0])
				rest = rest[1:]
			}
		}
		return append(out, rest...)
	}
	g.hook = func(p *parse) {
		execValueHook("-I", "--to-command", "-F", "--rsh-command")(p)
		for _, it := range p.items {
			if it.Name == "--checkpoint-action" {
				if prog, ok := strings.CutPrefix(it.Value, "exec="); ok {
					p.refuseProgram(prog)
				}
			}
		}
		archive := ""
		for _, it := range p.items {
			if it.Name == "-f" && it.HasValue {
				archive = it.Value
			}
		}
		switch {
		case p.has["-c"] || p.has["-r"] || p.has["-u"] || p.has["-A"] || p.has["--delete"]:
			if archive != "" && archive != "-" {
				p.writes = append(p.writes, archive)
			}
		case p.has["-x"]:
			p.anywhere = true // the archive decides what is written
		}
		if p.has["--remove-files"] {
			p.opsRule = opsWrite
		}
	}
	return g
}

// gzipHook: gzip replaces each file by its compressed form (gunzip the
// other way) unless it writes to stdout, lists or tests.
func gzipHook(p *parse) {
	if p.has["-c"] || p.has["-l"] || p.has["-t"] || p.entry == "zcat" {
		p.opsRule = opsRead
		return
	}
	p.raise(effWrite)
	p.opsRule = opsWrite // each file is replaced
	decompress := p.has["-d"] || p.entry == "gunzip"
	for _, k := range p.operands {
		v := p.items[k].Value
		if decompress {
			p.writes = append(p.writes, strings.TrimSuffix(v, ".gz"))
		} else {
			p.writes = append(p.writes, v+".gz")
		}
	}
}

// zipGrammar: Info-ZIP zip. Its "-TT cmd" is a two-letter short option
// that names the command testing the archive: runs code.
func zipGrammar() *grammar {
	g := gnu("zip", effWrite, opsFirstWrite, `r,recurse-paths q,quiet v,verbose j,junk-paths u,update f,freshen
		d,delete m,move D,no-dir-entries y,symlinks X,no-extra l,to-crlf o,latest-time S,system-hidden T,test
		k,DOS-names A,adjust-sfx g,grow 0 1 2 3 4 5 6 7 8 9 e,encrypt P,password=o z,archive-comment
		c,entry-comments n,suffixes=o b,temp-path=o x,exclude=p i,include=p unzip-command=o!x`)
	g.pre = func(_ *grammar, args []string) []string {
		out := make([]string, len(args))
		for i, a := range args {
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "TT") {
				a = "--unzip-command"
			}
			out[i] = a
		}
		return out
	}
	g.hook = func(p *parse) {
		if p.has["-m"] {
			p.opsRule = opsWrite // the files are deleted once archived
		}
	}
	return g
}

// unzipGrammar: extracting writes wherever the archive says (below the
// working folder or -d DIR); listing, testing and printing only read.
func unzipGrammar() *grammar {
	g := clap("unzip", effRead, opsFirstRead, `l v t z Z p c f u d=o x=o n o j C L X q a b M O=o I=o U K D W V h`)
	g.hook = func(p *parse) {
		if p.has["-l"] || p.has["-v"] || p.has["-t"] || p.has["-z"] || p.has["-Z"] || p.has["-p"] || p.has["-c"] {
			return
		}
		p.raise(effWrite)
		p.anywhere = true
	}
	return g
}

// execValueHook refuses an option whose value names a program homard
// refuses outright (rg --pre sh, fd -x bash): that is a shell by another
// name. Any other program there runs as code.
func execValueHook(names ...string) func(*parse) {
	return func(p *parse) {
		for _, it := range p.items {
			for _, n := range names {
				if it.Kind == ItemOption && it.Name == n && it.HasValue {
					p.refuseProgram(it.Value)
				}
			}
		}
	}
}

// refuseProgram refuses the parse if prog (a name or a path an argument
// makes the program run) is a program homard refuses outright.
func (p *parse) refuseProgram(prog string) {
	base := baseName(strings.TrimSpace(prog))
	if f := strings.Fields(base); len(f) > 0 {
		base = f[0]
	}
	if rule, ok := refusedName(base); ok {
		p.refuse(effRefused, rule, fmt.Sprintf("%s would run %s, which %s", p.entry, prog, kindReason[rule]))
	}
}

// findGrammar: find's own expression grammar. Leading -H -L -P -D -O,
// then start paths, then primaries: tests read, -delete/-fprint*/-fls
// write, -exec/-execdir/-ok/-okdir run code (their command up to ";" or
// "+" is checked against the refused programs).
func findGrammar() *grammar {
	return &grammar{name: "find", base: effRead, operands: opsRead, custom: parseFind}
}

var findPrimaries = func() map[string]int {
	m := map[string]int{}
	for _, n := range strings.Fields(`-depth -empty -readable -writable -executable -nouser -nogroup -true -false
		-print -print0 -ls -prune -quit -mount -xdev -noleaf -follow -daystart -ignore_readdir_race
		-noignore_readdir_race -not -a -and -o -or ! ( ) , -help --help -version --version -warn -nowarn`) {
		m[n] = 0
	}
	for _, n := range strings.Fields(`-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype
		-size -mtime -mmin -atime -amin -ctime -cmin -newer -anewer -cnewer -perm -user -group -uid -gid -links
		-inum -samefile -maxdepth -mindepth -regextype -used -fstype -lname -ilname -context -printf -files0-from`) {
		m[n] = 1
	}
	return m
}()

func parseFind(p *parse) {
	i := 0
	for ; i < len(p.args); i++ { // leading options
		a := p.args[i]
		switch {
		case a == "-H" || a == "-L" || a == "-P" || strings.HasPrefix(a, "-O"):
			p.items = append(p.items, Item{Kind: ItemOption, Name: a})
		case a == "-D" && i+1 < len(p.args):
			i++
			p.items = append(p.items, Item{Kind: ItemOption, Name: a, Value: p.args[i], HasValue: true, Role: RoleOther})
		default:
			goto paths
		}
	}
paths:
	for ; i < len(p.args); i++ {
		a := p.args[i]
		if strings.HasPrefix(a, "-") || a == "!" || a == "(" {
			break
		}
		p.operands = append(p.operands, len(p.items))
		p.items = append(p.items, Item{Kind: ItemOperand, Value: a, Role: RolePathRead})
	}
	starts := p.operands
	for ; i < len(p.args); i++ {
		a := p.args[i]
		if n, ok := findPrimaries[a]; ok {
			it := Item{Kind: ItemOption, Name: a}
			if n == 1 && i+1 < len(p.args) {
				i++
				it.Value, it.HasValue, it.Role = p.args[i], true, RolePattern
				if a == "-newer" || a == "-anewer" || a == "-cnewer" || a == "-samefile" || a == "-files0-from" {
					it.Role = RolePathRead
				}
			}
			p.items = append(p.items, it)
			continue
		}
		switch {
		case strings.HasPrefix(a, "-newer") && len(a) == 8: // -newerXY reference
			it := Item{Kind: ItemOption, Name: a}
			if i+1 < len(p.args) {
				i++
				it.Value, it.HasValue, it.Role = p.args[i], true, RoleOther
			}
			p.items = append(p.items, it)
		case a == "-delete":
			p.items = append(p.items, Item{Kind: ItemOption, Name: a})
			p.raise(effWrite)
			for _, k := range starts {
				p.writes = append(p.writes, p.items[k].Value)
			}
		case a == "-fprint" || a == "-fprint0" || a == "-fls" || a == "-fprintf":
			it := Item{Kind: ItemOption, Name: a, Role: RolePathWrite}
			if i+1 < len(p.args) {
				i++
				it.Value, it.HasValue = p.args[i], true
				p.writes = append(p.writes, it.Value)
			}
			p.items = append(p.items, it)
			p.raise(effWrite)
			if a == "-fprintf" && i+1 < len(p.args) {
				i++
				p.items = append(p.items, Item{Kind: ItemOperand, Value: p.args[i], Role: RoleOther})
			}
		case a == "-exec" || a == "-execdir" || a == "-ok" || a == "-okdir":
			p.raise(effRuns)
			p.anywhere = true
			it := Item{Kind: ItemOption, Name: a}
			if i+1 < len(p.args) {
				p.refuseProgram(p.args[i+1])
			}
			// The command's words, each quoted when it holds a space or
			// a quote (quoteWord), so two argvs never make one Value: a
			// template compares it whole, and a card shows it.
			for i+1 < len(p.args) {
				i++
				it.Value += quoteWord(p.args[i]) + " "
				if p.args[i] == ";" || p.args[i] == "+" {
					break
				}
			}
			p.items = append(p.items, it)
		default:
			p.markUnknown(a)
			p.items = append(p.items, Item{Kind: ItemOption, Name: a})
		}
	}
}
