package policy

import "sync"

// The catalog: every program homard knows by name, with its argument
// grammar. A program that is not here runs as code (contained, and asked
// about by mode); an option a grammar does not list runs as code too. The
// option lists follow each program's manual; abbreviations of long options
// are accepted where the program's parser accepts them (GNU getopt_long,
// git parse-options), never for clap (rg, fd, cargo) or Go flag programs.

// gnu builds a GNU getopt_long program: permuting, clusters, unique
// prefixes of long options, plus --help and --version.
func gnu(name string, base effect, ops operandRule, opts string) *grammar {
	g := &grammar{name: name, base: base, abbrev: true, operands: ops}
	return g.opts("help version " + opts)
}

// clap builds a Rust clap/lexopt program: like GNU but without
// abbreviations.
func clap(name string, base effect, ops operandRule, opts string) *grammar {
	g := &grammar{name: name, base: base, operands: ops}
	return g.opts(opts)
}

// literal builds a program whose every argument is an operand.
func literal(name string) *grammar {
	return &grammar{name: name, base: effRead, literal: true, operands: opsOther}
}

// catalog maps a program's base name to its grammar. It is built on first
// use, not at start: the tables are ~0.6 MB of allocations that a process
// which never classifies a command (`homard version`, an idle serve) need
// not pay for. the catalog tests build it, so a malformed entry still
// fails the tests.
var catalog = sync.OnceValue(buildCatalog)

func buildCatalog() map[string]*grammar {
	m := map[string]*grammar{}
	add := func(g *grammar, names ...string) {
		if len(names) == 0 {
			names = []string{g.name}
		}
		for _, n := range names {
			if _, dup := m[n]; dup {
				panic("catalog: " + n + " twice")
			}
			m[n] = g
		}
	}

	// Reading and listing.
	add(gnu("ls", effRead, opsRead, `a,all A,almost-all author b,escape block-size=o B,ignore-backups c C color?o
		d,directory D,dired f F,classify?o file-type format=o full-time g group-directories-first G,no-group
		h,human-readable si H,dereference-command-line dereference-command-line-symlink-to-dir hide=o hyperlink?o
		indicator-style=o i,inode I,ignore=o k,kibibytes l L,dereference m n,numeric-uid-gid N,literal o p
		q,hide-control-chars show-control-chars Q,quote-name quoting-style=o r,reverse R,recursive s,size S sort=o
		time=o time-style=o t T,tabsize=o u U v w,width=o x X Z,context z,zero 1`))
	add(gnu("cat", effRead, opsRead, `A,show-all b,number-nonblank e E,show-ends n,number s,squeeze-blank t T,show-tabs u v,show-nonprinting`), "cat", "tac")
	head := gnu("head", effRead, opsRead, `c,bytes=o n,lines=o q,quiet,silent v,verbose z,zero-terminated`)
	head.numeric = true
	add(head)
	tail := gnu("tail", effRead, opsRead, `c,bytes=o f,follow?o F max-unchanged-stats=o n,lines=o pid=o q,quiet,silent retry
		s,sleep-interval=o v,verbose z,zero-terminated`)
	tail.numeric = true
	add(tail)
	add(gnu("wc", effRead, opsRead, `c,bytes m,chars l,lines files0-from=r L,max-line-length w,words total=o`))
	grep := gnu("grep", effRead, opsPatternFirst, `E,extended-regexp F,fixed-strings G,basic-regexp P,perl-regexp e,regexp=p
		f,file=P i,ignore-case no-ignore-case y w,word-regexp x,line-regexp z,null-data s,no-messages v,invert-match
		m,max-count=o b,byte-offset n,line-number line-buffered H,with-filename h,no-filename label=o o,only-matching
		q,quiet,silent binary-files=o a,text I d,directories=o D,devices=o r,recursive R,dereference-recursive
		include=o exclude=o exclude-from=r exclude-dir=o L,files-without-match l,files-with-matches c,count
		T,initial-tab Z,null A,after-context=o B,before-context=o C,context=o color?o colour?o U,binary V`)
	grep.numeric = true
	add(grep, "grep", "egrep", "fgrep")
	sort := gnu("sort", effRead, opsRead, `b,ignore-leading-blanks d,dictionary-order f,ignore-case g,general-numeric-sort
		i,ignore-nonprinting M,month-sort h,human-numeric-sort n,numeric-sort R,random-sort random-source=r r,reverse
		sort=o V,version-sort batch-size=o c,check?o C k,key=o m,merge o,output=w s,stable S,buffer-size=o
		t,field-separator=o T,temporary-directory=o parallel=o u,unique z,zero-terminated files0-from=r debug
		compress-program=o!x`)
	sort.hook = execValueHook("--compress-program")
	add(sort)
	add(gnu("uniq", effRead, opsSecondWrite, `c,count d,repeated D all-repeated?o f,skip-fields=o group?o i,ignore-case
		s,skip-chars=o u,unique z,zero-terminated w,check-chars=o`))
	add(gnu("cut", effRead, opsRead, `b,bytes=o c,characters=o d,delimiter=o f,fields=o n complement s,only-delimited
		output-delimiter=o z,zero-terminated`))
	add(gnu("diff", effRead, opsRead, `normal q,brief s,report-identical-files c C,context?o u U,unified?o e,ed n,rcs
		y,side-by-side W,width=o left-column suppress-common-lines p,show-c-function F,show-function-line=o label=o
		expand-tabs t T,initial-tab tabsize=o suppress-blank-empty l,paginate r,recursive no-dereference N,new-file
		unidirectional-new-file ignore-file-name-case no-ignore-file-name-case x,exclude=o X,exclude-from=r
		S,starting-file=o from-file=r to-file=r i,ignore-case E,ignore-tab-expansion Z,ignore-trailing-space
		b,ignore-space-change w,ignore-all-space B,ignore-blank-lines I,ignore-matching-lines=o a,text
		strip-trailing-cr D,ifdef=o line-format=o old-line-format=o new-line-format=o unchanged-line-format=o
		old-group-format=o new-group-format=o changed-group-format=o unchanged-group-format=o d,minimal
		horizon-lines=o speed-large-files color?o palette=o`))
	add(gnu("cmp", effRead, opsRead, `b,print-bytes i,ignore-initial=o l,verbose n,bytes=o s,quiet,silent`))
	add(gnu("file", effRead, opsRead, `b,brief C,compile!w c,checking-printout d E e,exclude=o exclude-quiet=o
		F,separator=o f,files-from=r h,no-dereference i,mime mime-type mime-encoding k,keep-going l,list
		L,dereference m,magic-file=r N,no-pad n,no-buffer 0,print0 p,preserve-date P,parameter=o r,raw
		s,special-files S,no-sandbox z,uncompress Z,uncompress-noreport extension apple`))
	add(gnu("stat", effRead, opsRead, `L,dereference f,file-system c,format=o printf=o t,terse cached=o`))
	add(gnu("du", effRead, opsRead, `0,null a,all apparent-size B,block-size=o b,bytes c,total D,dereference-args
		d,max-depth=o files0-from=r H h,human-readable inodes k L,dereference l,count-links m P,no-dereference
		S,separate-dirs si s,summarize t,threshold=o time?o time-style=o X,exclude-from=r exclude=o x,one-file-system`))
	add(gnu("df", effRead, opsRead, `a,all B,block-size=o h,human-readable H,si i,inodes k l,local no-sync output?o
		P,portability sync t,type=o T,print-type x,exclude-type=o total`))
	add(clap("tree", effRead, opsRead, `a d l f x L=o R!w P=o I=o gitignore gitfile=r ignore-case matchdirs metafirst
		prune info infofile=r noreport charset=o filelimit=o o=w i q N Q p u g s h si du D timefmt=o inodes device F
		v t c U r dirsfirst filesfirst sort=o C n J X H=o T=o nolinks hintro=o houtro=o fromfile fromtabfile
		fflinks help version`))
	add(gnu("sha256sum", effRead, opsRead, `b,binary c,check ignore-missing quiet status strict t,text w,warn z,zero
		tag l,length=o`), "sha256sum", "sha1sum", "sha224sum", "sha384sum", "sha512sum", "md5sum", "b2sum", "cksum")
	add(gnu("basename", effRead, opsOther, `a,multiple s,suffix=o z,zero`))
	add(gnu("dirname", effRead, opsOther, `z,zero`))
	add(gnu("realpath", effRead, opsRead, `e,canonicalize-existing m,canonicalize-missing L,logical P,physical q,quiet
		relative-to=o relative-base=o s,strip,no-symlinks z,zero`))
	add(gnu("readlink", effRead, opsRead, `f,canonicalize e,canonicalize-existing m,canonicalize-missing n,no-newline
		q,quiet s,silent v,verbose z,zero`))
	add(gnu("date", effRead, opsOther, `d,date=o debug f,file=r I,iso-8601?o resolution r,reference=r R,rfc-email
		rfc-3339=o s,set=o!w u,utc,universal`))
	seq := gnu("seq", effRead, opsOther, `f,format=o s,separator=o w,equal-width`)
	seq.numeric = true
	add(seq)
	add(gnu("tr", effRead, opsOther, `c,C,complement d,delete s,squeeze-repeats t,truncate-set1 z,zero-terminated`))
	add(gnu("nl", effRead, opsRead, `b,body-numbering=o d,section-delimiter=o f,footer-numbering=o
		h,header-numbering=o i,line-increment=o l,join-blank-lines=o n,number-format=o p,no-renumber
		s,number-separator=o v,starting-line-number=o w,number-width=o`))
	add(gnu("od", effRead, opsRead, `A,address-radix=o j,skip-bytes=o N,read-bytes=o S,strings?o t,format=o
		v,output-duplicates w,width?o endian=o a b c d f i l o s x traditional`))
	add(clap("xxd", effRead, opsSecondWrite, `a,autoskip b,bits C,capitalize c,cols=o E,EBCDIC e g,groupsize=o
		h,help i,include l,len=o n,name=o o,offset=o p,ps,postscript,plain r,revert s,seek=o u d v,version R=o`))
	add(gnu("base64", effRead, opsRead, `d,decode i,ignore-garbage w,wrap=o`), "base64", "base32")
	add(gnu("fold", effRead, opsRead, `b,bytes s,spaces w,width=o`))
	add(gnu("comm", effRead, opsRead, `1 2 3 check-order nocheck-order output-delimiter=o total z,zero-terminated`))
	add(gnu("paste", effRead, opsRead, `d,delimiters=o s,serial z,zero-terminated`))
	add(gnu("expand", effRead, opsRead, `i,initial t,tabs=o`), "expand", "unexpand")
	add(gnu("rev", effRead, opsRead, ``))
	add(gnu("strings", effRead, opsRead, `a,all d,data f,print-file-name n,bytes=o t,radix=o e,encoding=o
		w,include-all-whitespace s,output-separator=o`))
	add(gnu("printenv", effRead, opsOther, `0,null`))
	add(gnu("pwd", effRead, opsOther, `L,logical P,physical`))
	add(gnu("whoami", effRead, opsOther, ``))
	add(gnu("id", effRead, opsOther, `a Z,context g,group G,groups n,name r,real u,user z,zero`))
	add(gnu("uname", effRead, opsOther, `a,all s,kernel-name n,nodename r,kernel-release v,kernel-version m,machine
		p,processor i,hardware-platform o,operating-system`))
	add(gnu("nproc", effRead, opsOther, `all ignore=o`))
	add(gnu("which", effRead, opsOther, `a s`))
	add(literal("echo"), "echo")
	add(literal("printf"))
	add(literal("true"))
	add(literal("false"))
	add(literal("test"))
	add(literal("["))
	add(literal("sleep"))
	add(literal("ps"))
	add(literal("pgrep"))

	// Changing files.
	add(gnu("mkdir", effWrite, opsWrite, `m,mode=o p,parents v,verbose Z context?o`))
	add(gnu("touch", effWrite, opsWrite, `a c,no-create d,date=o f h,no-dereference m r,reference=r t=o time=o`))
	cp := gnu("cp", effWrite, opsLastWrite, `a,archive attributes-only backup?o b copy-contents d debug f,force
		i,interactive H l,link L,dereference n,no-clobber P,no-dereference p preserve?o no-preserve=o parents
		R,r,recursive reflink?o remove-destination sparse=o strip-trailing-slashes s,symbolic-link S,suffix=o
		t,target-directory=w T,no-target-directory u,update?o v,verbose keep-directory-symlink x,one-file-system
		Z context?o`)
	cp.hook = targetDirHook
	add(cp)
	add(gnu("mv", effWrite, opsWrite, `b backup?o debug exchange f,force i,interactive n,no-clobber no-copy
		strip-trailing-slashes S,suffix=o t,target-directory=w T,no-target-directory u,update?o v,verbose Z,context`))
	add(gnu("rm", effWrite, opsWrite, `f,force i I interactive?o one-file-system no-preserve-root preserve-root?o
		r,R,recursive d,dir v,verbose`))
	add(gnu("rmdir", effWrite, opsWrite, `ignore-fail-on-non-empty p,parents v,verbose`))
	ln := gnu("ln", effWrite, opsLastWrite, `backup?o b d,F,directory f,force i,interactive L,logical
		n,no-dereference P,physical r,relative s,symbolic S,suffix=o t,target-directory=w T,no-target-directory v,verbose`)
	ln.hook = lnHook
	add(ln)
	chmod := gnu("chmod", effWrite, opsFirstOther, `c,changes f,silent,quiet v,verbose no-preserve-root preserve-root
		reference=r R,recursive`)
	chmod.hook = referenceHook
	add(chmod)
	chown := gnu("chown", effWrite, opsFirstOther, `c,changes f,silent,quiet v,verbose no-preserve-root preserve-root
		reference=r R,recursive from=o dereference h,no-dereference H L P`)
	chown.hook = referenceHook
	add(chown, "chown", "chgrp")
	add(gnu("tee", effWrite, opsWrite, `a,append i,ignore-interrupts p output-error?o`))
	add(tarGrammar())
	gz := gnu("gzip", effRead, opsRead, `c,stdout,to-stdout d,decompress,uncompress f,force k,keep l,list L,license
		n,no-name N,name q,quiet r,recursive rsyncable S,suffix=o synchronous t,test v,verbose V 1,fast 2 3 4 5 6 7 8
		9,best`)
	gz.hook = gzipHook
	add(gz, "gzip", "gunzip", "zcat")
	add(zipGrammar())
	add(unzipGrammar())

	// Searching.
	add(findGrammar())
	rg := clap("rg", effRead, opsPatternFirst, `e,regexp=p f,file=P i,ignore-case s,case-sensitive S,smart-case
		F,fixed-strings w,word-regexp x,line-regexp v,invert-match c,count count-matches l,files-with-matches
		files-without-match files n,line-number N,no-line-number H,with-filename I,no-filename o,only-matching
		r,replace=o A,after-context=o B,before-context=o C,context=o g,glob=o iglob=o t,type=o T,type-not=o
		type-list type-add=o type-clear=o hidden no-hidden .,u,unrestricted L,follow no-ignore no-ignore-vcs
		no-ignore-dot no-ignore-global no-ignore-parent no-ignore-files ignore-file=r max-depth,maxdepth,d=o
		M,max-columns=o m,max-count=o max-filesize=o j,threads=o z,search-zip P,pcre2 engine=o U,multiline
		multiline-dotall json color=o colors=o p,pretty heading no-heading 0,null null-data sort=o sortr=o stats
		trim vimgrep column no-column a,text binary no-binary E,encoding=o no-messages q,quiet passthru,passthrough
		b,byte-offset h,help V,version debug trace one-file-system no-config crlf block-buffered line-buffered mmap
		no-mmap glob-case-insensitive ignore-case-glob pre=o!x pre-glob=o hostname-bin=o!x hyperlink-format=o
		field-match-separator=o field-context-separator=o path-separator=o context-separator=o no-context-separator`)
	rg.hook = execValueHook("--pre", "--hostname-bin")
	add(rg)
	fd := clap("fd", effRead, opsPatternFirst, `H,hidden I,no-ignore u,unrestricted no-ignore-vcs no-ignore-parent
		s,case-sensitive i,ignore-case g,glob regex F,fixed-strings and=p a,absolute-path l,list-details L,follow
		p,full-path 0,print0 d,max-depth=o min-depth=o exact-depth=o E,exclude=o prune t,type=o e,extension=o
		S,size=o changed-within=o changed-before=o o,owner=o format=o x,exec=o!x X,exec-batch=o!x batch-size=o
		ignore-file=r c,color=o j,threads=o max-results=o 1 q,quiet show-errors base-directory=o path-separator=o
		search-path=r strip-cwd-prefix?o one-file-system h,help V,version`)
	fd.hook = execValueHook("-x", "-X")
	add(fd, "fd", "fdfind")

	// Toolchains and interpreters.
	add(gitGrammar())
	add(goGrammar())
	add(gofmtGrammar())
	add(cargoGrammar())
	add(&grammar{name: "make", base: effRuns, literal: true, operands: opsOther}, "make", "gmake")
	for _, n := range []string{"npm", "pnpm", "yarn"} {
		add(npmGrammar(n))
	}
	add(&grammar{name: "npx", base: effRuns, literal: true, operands: opsOther})
	for _, g := range interpreterGrammars() {
		add(g)
	}
	attachConfigs(m)
	return m
}

// targetDirHook: with -t DIR every operand is a source, read.
func targetDirHook(p *parse) {
	if p.has["-t"] {
		p.opsRule = opsRead
	}
}

// lnHook: "ln TARGET" makes a link named after TARGET in the working
// folder; with -t every operand is a target, read.
func lnHook(p *parse) {
	targetDirHook(p)
	if len(p.operands) == 1 && !p.has["-t"] {
		p.writes = append(p.writes, baseName(p.items[p.operands[0]].Value))
		p.raise(effWrite)
	}
}

// referenceHook: chmod --reference=F takes no mode operand.
func referenceHook(p *parse) {
	if p.has["--reference"] {
		p.opsRule = opsWrite
	}
}

func baseName(s string) string {
	for len(s) > 1 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	if i := lastSlash(s); i >= 0 && i < len(s)-1 {
		return s[i+1:]
	}
	return s
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}
