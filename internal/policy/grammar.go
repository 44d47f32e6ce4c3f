package policy

import (
	"fmt"
	"strings"
)

// argKind says whether an option takes a value.
type argKind uint8

const (
	argNone argKind = iota
	argReq          // "--opt=v", "--opt v", "-ov", "-o v"
	argOpt          // only "--opt=v" or "-ov" (attached)
)

// optSpec is one option of a grammar. Its first name is canonical; names
// of one letter are short options, longer ones long options.
type optSpec struct {
	names   []string
	arg     argKind
	role    Role   // of the value
	eff     effect // class of the option itself
	pattern bool   // the value is the search pattern: operands are all paths
	stop    bool   // after this option every argument is an operand (python -m mod args…)
}

func (o *optSpec) canonical() string {
	if len(o.names[0]) == 1 {
		return "-" + o.names[0]
	}
	return "--" + o.names[0]
}

// operandRule assigns roles to the operands of a program.
type operandRule uint8

const (
	opsRead         operandRule = iota // every operand is a path read
	opsWrite                           // every operand is a path written (mkdir, rm, touch)
	opsLastWrite                       // the last of two or more is written, the rest read (cp, ln)
	opsOther                           // not paths (echo, seq, git revisions)
	opsPatternFirst                    // the first is a pattern unless an option gave one; the rest read
	opsFirstOther                      // the first is not a path (chmod's mode), the rest written
	opsSecondWrite                     // the first is read, a second is written (uniq IN OUT)
	opsFirstRead                       // the first is a path read (a script), the rest are its arguments
	opsFirstWrite                      // the first is written (an archive), the rest read
)

// grammar is what the catalog knows about one program or subcommand.
type grammar struct {
	name     string
	base     effect // the class of a bare invocation
	short    map[byte]*optSpec
	long     map[string]*optSpec
	abbrev   bool        // unique prefixes of long options are accepted (getopt_long, git)
	goFlag   bool        // Go's flag package: -name and --name, no clusters, stops at the first operand
	numeric  bool        // "-5" is a count (head, tail, git log)
	stopAt1  bool        // options end at the first operand (interpreters: the rest is the script's)
	operands operandRule // roles of operands
	subs     map[string]*grammar
	// subDefault is the class of a subcommand the catalog does not know
	// (git: runs code, since an alias can be anything).
	subDefault effect
	// custom replaces the generic parse (find's expressions, perl).
	custom func(*parse)
	// literal: every argument is an operand (echo, test, printf).
	literal bool
	// pre rewrites the argv before parsing (tar's old-style "cf").
	pre func(g *grammar, args []string) []string
	// hook adjusts the parse once it is complete and before operands get
	// their roles (tar's modes, git branch listing versus creating, an
	// interpreter without a script).
	hook func(*parse)
	// configs lists the files in the working folder or the repository
	// that the program reads and that change what it does; set on an
	// entry's top-level grammar only (see entryConfigs).
	configs []string
}

// opts parses a compact option list into the grammar. Each space-separated
// token is NAMES[=R|?R][!E]: NAMES are comma-separated (one letter: short),
// "=" a required value, "?" an optional one (attached only), R the value's
// role (o other, r path read, w path written, p the search pattern; absent
// means o), and E the option's class (w write, x runs code, n network, X
// refused; absent means read). A trailing "^" ends option parsing after it.
func (g *grammar) opts(list string) *grammar {
	if g.short == nil {
		g.short, g.long = map[byte]*optSpec{}, map[string]*optSpec{}
	}
	for _, tok := range strings.Fields(list) {
		o := &optSpec{role: RoleOther}
		if t, ok := strings.CutSuffix(tok, "^"); ok {
			o.stop, tok = true, t
		}
		if i := strings.IndexByte(tok, '!'); i >= 0 {
			switch tok[i+1:] {
			case "w":
				o.eff = effWrite
			case "x":
				o.eff = effRuns
			case "n":
				o.eff = effNetwork
			case "X":
				o.eff = effRefused
			default:
				panic(fmt.Sprintf("catalog %s: bad class in %q", g.name, tok))
			}
			tok = tok[:i]
		}
		if i := strings.IndexAny(tok, "=?"); i >= 0 {
			o.arg = argReq
			if tok[i] == '?' {
				o.arg = argOpt
			}
			switch tok[i+1:] {
			case "", "o":
			case "r":
				o.role = RolePathRead
			case "w":
				o.role = RolePathWrite
				if o.eff < effWrite {
					o.eff = effWrite
				}
			case "p":
				o.role, o.pattern = RolePattern, true
			case "P":
				o.role, o.pattern = RolePathRead, true
			default:
				panic(fmt.Sprintf("catalog %s: bad role in %q", g.name, tok))
			}
			tok = tok[:i]
		}
		o.names = strings.Split(tok, ",")
		for _, n := range o.names {
			switch {
			case n == "":
				panic(fmt.Sprintf("catalog %s: empty name in %q", g.name, tok))
			case len(n) == 1:
				if _, dup := g.short[n[0]]; dup {
					panic(fmt.Sprintf("catalog %s: -%s twice", g.name, n))
				}
				g.short[n[0]] = o
			default:
				if _, dup := g.long[n]; dup {
					panic(fmt.Sprintf("catalog %s: --%s twice", g.name, n))
				}
				g.long[n] = o
			}
		}
	}
	return g
}

// sub adds subcommands sharing one grammar.
func (g *grammar) sub(s *grammar, names ...string) *grammar {
	if g.subs == nil {
		g.subs = map[string]*grammar{}
	}
	for _, n := range names {
		g.subs[n] = s
	}
	return g
}

// findLong resolves a long option name: an exact name, else (when the
// grammar allows abbreviations) the one option it is a prefix of. An
// abbreviation that could mean a refused option is that refused option,
// whatever else it could mean: ambiguity never makes a refusal go away.
// Nil means unknown.
func (g *grammar) findLong(name string) *optSpec {
	if o, ok := g.long[name]; ok {
		return o
	}
	if !g.abbrev || name == "" {
		return nil
	}
	var found *optSpec
	ambiguous := false
	for n, o := range g.long {
		if !strings.HasPrefix(n, name) {
			continue
		}
		if o.eff >= effNetwork {
			return o
		}
		if found != nil && found != o {
			ambiguous = true
		}
		found = o
	}
	if ambiguous {
		return nil
	}
	return found
}

// parse is the state and the result of reading one argv with a grammar.
type parse struct {
	entry    string
	g        *grammar // the current grammar (a subcommand's once chosen)
	args     []string
	items    []Item
	base     effect // the class of the program or subcommand itself
	eff      effect // the class its options and operands add
	rule     string // set when refused
	reason   string
	unknown  []string // arguments the grammar does not know, as written
	sub      []string // subcommands chosen, in order
	operands []int    // indexes into items
	pattern  bool     // an option gave the pattern
	opsRule  operandRule
	stopped  bool // option parsing ended (after "--" or a stop option)
	writes   []string
	anywhere bool // writes paths its argv does not name (tar -x, make)
	has      map[string]bool
}

func (p *parse) raise(e effect) {
	if e > p.eff {
		p.eff = e
	}
}

// refuse ends the parse with a refusal; the first reason wins.
func (p *parse) refuse(e effect, rule, reason string) {
	if p.rule == "" {
		p.rule, p.reason = rule, reason
	}
	p.raise(e)
}

// lower sets the class outright: a hook that knows better (python -V
// only prints a version).
func (p *parse) lower(e effect) { p.base, p.eff = e, e }

func (p *parse) markUnknown(a string) {
	p.unknown = append(p.unknown, a)
	p.raise(effRuns)
}

// option records one option occurrence.
func (p *parse) option(o *optSpec, spelled, val string, hasVal bool) {
	name := o.canonical()
	p.items = append(p.items, Item{Kind: ItemOption, Name: name, Value: val, HasValue: hasVal, Role: o.role})
	p.has[name] = true
	switch o.eff {
	case effRefused:
		rule := RuleLimitArgv
		if _, ok := interpreterFamilies[p.entry]; ok {
			rule = RuleLimitInlineCode
		}
		p.refuse(effRefused, rule, fmt.Sprintf("option %s (%s) of %s runs another program or inline code; homard refuses it in every mode", spelled, name, p.entry))
	case effNetwork:
		p.refuse(effNetwork, RuleLimitNetwork, fmt.Sprintf("option %s (%s) of %s reaches the network, which commands do not have; use http_get", spelled, name, p.entry))
	default:
		p.raise(o.eff)
	}
	if o.pattern {
		p.pattern = true
	}
	if hasVal && o.role == RolePathWrite {
		p.writes = append(p.writes, val)
	}
	if o.stop {
		p.stopped = true
	}
}

// next returns the argument after i as an option's separate value.
func (p *parse) next(i *int) (string, bool) {
	if *i+1 >= len(p.args) {
		return "", false
	}
	*i++
	return p.args[*i], true
}

// run reads p.args with p.g, the generic way: GNU getopt_long (permuting,
// clusters, attached and separate values, abbreviations when allowed),
// git's parse-options (the same, per subcommand) and Go's flag package.
func (p *parse) run() {
	if p.g.pre != nil {
		p.args = p.g.pre(p.g, p.args)
	}
	if p.g.custom != nil {
		p.g.custom(p)
		return
	}
	for i := 0; i < len(p.args); i++ {
		a := p.args[i]
		g := p.g
		switch {
		case p.stopped || g.literal || a == "-" || len(a) < 2 || a[0] != '-':
			p.operand(a)
		case a == "--":
			p.items = append(p.items, Item{Kind: ItemEnd})
			p.stopped = true
		case g.numeric && strings.Trim(a[1:], "0123456789") == "":
			p.items = append(p.items, Item{Kind: ItemOption, Name: "-NUM", Value: a[1:], HasValue: true, Role: RoleOther})
		case strings.HasPrefix(a, "--") || g.goFlag:
			p.long(a, &i)
		default:
			p.cluster(a, &i)
		}
	}
	p.opsRule = p.g.operands
	if h := p.g.hook; h != nil {
		h(p)
	}
	p.assignRoles()
}

func (p *parse) long(a string, i *int) {
	body := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
	name, val, hasEq := strings.Cut(body, "=")
	o := p.g.findLong(name)
	if o == nil && p.g.goFlag && len(name) == 1 {
		o = p.g.short[name[0]]
	}
	if o == nil {
		p.markUnknown(a)
		p.items = append(p.items, Item{Kind: ItemOption, Name: a, Role: RoleOther})
		return
	}
	switch {
	case o.arg == argNone && hasEq && !p.g.goFlag:
		p.markUnknown(a) // getopt refuses a value here; do not guess
	case o.arg == argReq && !hasEq:
		val, hasEq = p.next(i)
	}
	p.option(o, a, val, hasEq)
}

func (p *parse) cluster(a string, i *int) {
	for j := 1; j < len(a); j++ {
		o := p.g.short[a[j]]
		if o == nil {
			p.markUnknown(a)
			p.items = append(p.items, Item{Kind: ItemOption, Name: "-" + a[j:], Role: RoleOther})
			return
		}
		switch o.arg {
		case argNone:
			p.option(o, a, "", false)
			continue
		case argReq:
			if rest := a[j+1:]; rest != "" {
				p.option(o, a, rest, true)
			} else {
				v, ok := p.next(i)
				p.option(o, a, v, ok)
			}
		case argOpt:
			rest := a[j+1:]
			p.option(o, a, rest, rest != "")
		}
		return
	}
}

// operand records an operand, or chooses a subcommand.
func (p *parse) operand(a string) {
	if p.g.subs != nil && !p.stopped {
		p.sub = append(p.sub, a)
		p.items = append(p.items, Item{Kind: ItemSub, Name: a})
		if s, ok := p.g.subs[a]; ok {
			p.g, p.base = s, s.base
			if s.base >= effNetwork {
				p.refuse(s.base, subRule(s.base), subReason(p.entry, a, s.base))
			}
			return
		}
		p.unknown = append(p.unknown, a)
		if p.g.subDefault >= effNetwork {
			p.refuse(p.g.subDefault, subRule(p.g.subDefault), subReason(p.entry, a, p.g.subDefault))
		}
		p.raise(max(p.g.subDefault, effRuns))
		p.base = effRuns
		p.g = &grammar{name: a, base: effRuns, stopAt1: true, operands: opsOther}
		p.stopped = true
		return
	}
	p.operands = append(p.operands, len(p.items))
	p.items = append(p.items, Item{Kind: ItemOperand, Value: a, Role: RoleOther})
	if p.g.stopAt1 || p.g.goFlag {
		p.stopped = true
	}
}

func subRule(e effect) string {
	if e == effNetwork {
		return RuleLimitNetwork
	}
	return RuleLimitArgv
}

func subReason(entry, sub string, e effect) string {
	if e == effNetwork {
		return entry + " " + sub + " reaches the network, which commands do not have"
	}
	return entry + " " + sub + " runs commands or changes configuration by design; homard refuses it in every mode"
}

// assignRoles gives operands their roles by the grammar's rule and adds
// written ones to p.writes.
func (p *parse) assignRoles() {
	ops := p.operands
	if p.g.literal {
		for _, k := range ops {
			p.items[k].Role = RoleOther
		}
		return
	}
	set := func(k int, r Role) {
		it := &p.items[ops[k]]
		it.Role = r
		if r == RolePathWrite {
			p.writes = append(p.writes, it.Value)
			p.raise(effWrite)
		}
	}
	for k := range ops {
		r := RolePathRead
		switch p.opsRule {
		case opsWrite:
			r = RolePathWrite
		case opsLastWrite:
			if len(ops) >= 2 && k == len(ops)-1 {
				r = RolePathWrite
			}
		case opsOther:
			r = RoleOther
		case opsPatternFirst:
			if k == 0 && !p.pattern {
				r = RolePattern
			}
		case opsFirstOther:
			if k == 0 {
				r = RoleOther
			} else {
				r = RolePathWrite
			}
		case opsSecondWrite:
			if k == 1 {
				r = RolePathWrite
			} else if k > 1 {
				r = RoleOther
			}
		case opsFirstRead:
			if k > 0 {
				r = RoleOther
			}
		case opsFirstWrite:
			if k == 0 {
				r = RolePathWrite
			}
		}
		set(k, r)
	}
}
