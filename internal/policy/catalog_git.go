package policy

import "strings"

// git parse-options: long options take unique prefixes, short ones
// cluster and take attached values, "--no-x" negations are listed where
// they are read. The global options that hand git another program, config
// or repository (-c, --config-env, --exec-path, --git-dir, --work-tree,
// --namespace) and -O/--open-files-in-pager, --output, --ext-diff,
// --textconv are refused in every spelling: an abbreviation that could
// mean one of them is that option (grammar.findLong).

const gitDiffOpts = `p,u,patch s,no-patch U,unified=o output=o!X output-indicator-new=o output-indicator-old=o
	output-indicator-context=o raw patch-with-raw t indent-heuristic no-indent-heuristic minimal patience histogram
	anchored=o diff-algorithm=o stat?o stat-width=o stat-name-width=o stat-graph-width=o stat-count=o
	compact-summary numstat shortstat X,dirstat?o cumulative dirstat-by-file?o summary patch-with-stat z name-only
	name-status submodule?o color?o no-color color-moved?o no-color-moved color-moved-ws=o no-color-moved-ws
	word-diff?o word-diff-regex=o color-words?o no-renames rename-empty no-rename-empty check
	ws-error-highlight=o full-index binary abbrev?o B,break-rewrites?o M,find-renames?o C,find-copies?o
	find-copies-harder D,irreversible-delete l=o diff-filter=o S=o G=o find-object=o pickaxe-all pickaxe-regex
	O=o!X skip-to=o rotate-to=o R relative?o no-relative a,text ignore-cr-at-eol ignore-space-at-eol
	b,ignore-space-change w,ignore-all-space ignore-blank-lines I,ignore-matching-lines=o inter-hunk-context=o
	W,function-context exit-code quiet ext-diff!X no-ext-diff textconv!X no-textconv ignore-submodules?o
	src-prefix=o dst-prefix=o no-prefix default-prefix line-prefix=o ita-invisible-in-index
	ita-visible-in-index c cc m remerge-diff?o diff-merges=o no-diff-merges combined-all-paths `

const gitRevOpts = `n,max-count=o skip=o since,after=o since-as-filter=o until,before=o max-age=o min-age=o
	author=o committer=o grep-reflog=o grep=o all-match invert-grep i,regexp-ignore-case basic-regexp
	E,extended-regexp F,fixed-strings P,perl-regexp remove-empty merges no-merges min-parents=o max-parents=o
	no-min-parents no-max-parents first-parent exclude-first-parent-only not all branches?o tags?o remotes?o glob=o
	exclude=o exclude-hidden=o reflog alternate-refs single-worktree ignore-missing bisect stdin cherry-mark
	cherry-pick left-only right-only cherry g,walk-reflogs merge boundary simplify-by-decoration show-pulls
	full-history dense sparse simplify-merges ancestry-path?o date-order author-date-order topo-order reverse
	no-walk?o do-walk pretty?o format=o abbrev-commit no-abbrev-commit oneline encoding=o expand-tabs?o
	no-expand-tabs notes?o no-notes show-notes?o show-signature!x relative-date date=o parents children left-right
	graph no-graph show-linear-break?o follow decorate?o no-decorate decorate-refs=o decorate-refs-exclude=o
	clear-decorations source mailmap use-mailmap no-mailmap no-use-mailmap full-diff log-size L=o count objects
	objects-edge unpacked object-names no-object-names `

// gitRefusedArgs refuses, anywhere in a git argv and whatever the
// subcommand, the ext:: transport (it runs a command) and any spelling of
// --upload-pack, --receive-pack or --exec (archive --remote --exec) that
// an unknown subcommand could still accept.
func gitRefusedArgs(p *parse) {
	for _, a := range p.args {
		if strings.Contains(strings.ToLower(a), "ext::") {
			p.refuse(effRefused, RuleLimitArgv, "the ext:: transport runs a command; homard refuses it in every mode")
			return
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || len(name) < 3 {
			continue
		}
		for _, d := range []string{"upload-pack", "receive-pack", "exec"} {
			if strings.HasPrefix(d, name) && !(d == "exec" && p.g.long[name] != nil) {
				p.refuse(effRefused, RuleLimitArgv, "option "+a+" (--"+d+") makes git run another program; homard refuses it in every mode")
				return
			}
		}
	}
}

func gitSub(name string, base effect, ops operandRule, opts string) *grammar {
	g := &grammar{name: "git " + name, base: base, abbrev: true, operands: ops}
	return g.opts("h " + opts)
}

func gitGrammar() *grammar {
	g := &grammar{name: "git", base: effRead, abbrev: true, operands: opsOther, subDefault: effRuns}
	g.opts(`C=r c=o!X config-env=o!X exec-path?o!X git-dir=o!X work-tree=o!X namespace=o!X super-prefix=o!X
		html-path man-path info-path p,paginate!x P,no-pager no-replace-objects no-lazy-fetch no-optional-locks
		no-advice bare literal-pathspecs glob-pathspecs noglob-pathspecs icase-pathspecs list-cmds=o
		attr-source=o help version h v`)

	logLike := gitSub("log", effRead, opsOther, gitDiffOpts+gitRevOpts)
	logLike.numeric = true
	g.sub(logLike, "log", "show", "whatchanged", "rev-list")
	g.sub(gitSub("diff", effRead, opsOther, gitDiffOpts+"no-index cached staged merge-base base ours theirs 1 2 3 0"), "diff")
	g.sub(gitSub("shortlog", effRead, opsOther, `n,numbered s,summary e,email c,committer format?o group=o w?o all
		branches?o tags?o since,after=o until,before=o author=o grep=o no-merges merges max-count=o reverse`), "shortlog")
	g.sub(gitSub("status", effRead, opsRead, `s,short b,branch show-stash porcelain?o long v,verbose
		u,untracked-files?o ignore-submodules?o ignored?o z column?o no-column ahead-behind no-ahead-behind renames
		no-renames find-renames?o`), "status")
	grep := gitSub("grep", effRead, opsPatternFirst, `cached no-index untracked no-exclude-standard exclude-standard
		recurse-submodules a,text textconv!X no-textconv i,ignore-case I max-depth=o r,recursive no-recursive
		w,word-regexp v,invert-match H full-name E,extended-regexp G,basic-regexp F,fixed-strings P,perl-regexp
		n,line-number column l,files-with-matches name-only L,files-without-match O,open-files-in-pager?o!X z,null
		o,only-matching c,count color?o no-color break heading p,show-function A,after-context=o B,before-context=o
		C,context=o W,function-context threads=o f=P e=p and or not q,quiet all-match`)
	grep.numeric = true
	g.sub(grep, "grep")
	g.sub(gitSub("blame", effRead, opsOther, `b root show-stats score-debug f,show-name n,show-number p,porcelain
		line-porcelain c l t s e,show-email w incremental L=o S=o contents=r reverse=o first-parent date=o progress
		no-progress M?o C?o abbrev=o ignore-rev=o ignore-revs-file=r color-lines color-by-age minimal encoding=o
		since=o`), "blame", "annotate")
	revParse := gitSub("rev-parse", effRead, opsOther, `parseopt sq-quote keep-dashdash stop-at-non-option stuck-long
		verify q,quiet sq short?o not symbolic symbolic-full-name abbrev-ref?o all branches?o tags?o remotes?o glob=o
		exclude=o exclude-hidden=o disambiguate=o local-env-vars path-format=o git-dir git-common-dir
		resolve-git-dir=o git-path=o show-toplevel show-superproject-working-tree shared-index-path
		show-object-format?o show-ref-format is-inside-git-dir is-inside-work-tree is-bare-repository
		is-shallow-repository absolute-git-dir show-cdup show-prefix since,after=o until,before=o default=o prefix=o
		flags no-flags revs-only no-revs`)
	revParse.abbrev = false // rev-parse reads its options by hand
	g.sub(revParse, "rev-parse")
	g.sub(gitSub("ls-files", effRead, opsOther, `c,cached d,deleted m,modified o,others i,ignored s,stage u,unmerged
		k,killed directory no-empty-directory eol z t v f full-name recurse-submodules abbrev?o x,exclude=o
		X,exclude-from=r exclude-per-directory=o exclude-standard error-unmatch with-tree=o debug deduplicate sparse
		format=o`), "ls-files")
	g.sub(gitSub("ls-tree", effRead, opsOther, `d r t l,long z name-only,name-status object-only full-name full-tree
		abbrev?o format=o`), "ls-tree")
	g.sub(gitSub("describe", effRead, opsOther, `all tags contains abbrev=o candidates=o exact-match debug long
		match=o exclude=o always first-parent dirty?o broken?o`), "describe")
	g.sub(gitSub("cat-file", effRead, opsOther, `t s e p batch?o batch-check?o batch-command?o batch-all-objects
		buffer unordered follow-symlinks textconv!X filters!X path=o allow-unknown-type mailmap use-mailmap Z z`), "cat-file")
	reflog := gitSub("reflog", effRead, opsOther, gitRevOpts)
	reflog.hook = func(p *parse) {
		if len(p.operands) > 0 {
			switch p.items[p.operands[0]].Value {
			case "expire", "delete":
				p.raise(effWrite)
			case "show", "exists":
			default:
				if strings.HasPrefix(p.items[p.operands[0]].Value, "-") {
					p.markUnknown(p.items[p.operands[0]].Value)
				}
			}
		}
	}
	g.sub(reflog, "reflog")
	g.sub(gitSub("merge-base", effRead, opsOther, `a,all octopus independent is-ancestor fork-point`), "merge-base")
	g.sub(gitSub("count-objects", effRead, opsOther, `v,verbose H,human-readable`), "count-objects")
	g.sub(gitSub("name-rev", effRead, opsOther, `tags refs=o exclude=o all annotate-stdin stdin name-only
		no-undefined always`), "name-rev")
	g.sub(gitSub("version", effRead, opsOther, `build-options`), "version")
	g.sub(gitSub("help", effRead, opsOther, `a,all g,guides c,config i,info!x m,man!x w,web!X user-interfaces
		developer-interfaces`), "help")

	// Writing: the index, refs, objects, and for some the work tree.
	g.sub(gitSub("add", effWrite, opsOther, `n,dry-run v,verbose f,force i,interactive!x p,patch!x e,edit!x u,update
		A,all no-ignore-removal no-all ignore-removal N,intent-to-add refresh ignore-errors ignore-missing sparse
		chmod=o pathspec-from-file=r pathspec-file-nul renormalize no-warn-embedded-repo`), "add")
	commit := gitSub("commit", effWrite, opsOther, `a,all p,patch!x C,reuse-message=o c,reedit-message=o!x fixup=o
		squash=o reset-author short branch porcelain long z,null F,file=r author=o date=o m,message=o
		t,template=r!x s,signoff no-signoff trailer=o n,no-verify verify allow-empty allow-empty-message cleanup=o
		e,edit!x no-edit amend no-post-rewrite i,include o,only pathspec-from-file=r pathspec-file-nul
		u,untracked-files?o v,verbose q,quiet dry-run status no-status S,gpg-sign?o!x no-gpg-sign`)
	commit.hook = func(p *parse) {
		// Without a message git opens an editor: that runs a program.
		if !p.has["-m"] && !p.has["-F"] && !p.has["-C"] && !p.has["--fixup"] && !p.has["--no-edit"] && !p.has["--dry-run"] {
			p.raise(effRuns)
		}
	}
	g.sub(commit, "commit")
	g.sub(gitSub("restore", effWrite, opsOther, `s,source=o p,patch!x W,worktree S,staged q,quiet progress
		no-progress ours theirs m,merge conflict=o ignore-unmerged ignore-skip-worktree-bits recurse-submodules
		no-recurse-submodules overlay no-overlay pathspec-from-file=r pathspec-file-nul`), "restore")
	g.sub(gitSub("switch", effWrite, opsOther, `c,create=o C,force-create=o d,detach guess no-guess
		f,force,discard-changes m,merge conflict=o q,quiet progress no-progress t,track?o no-track orphan=o
		ignore-other-worktrees recurse-submodules no-recurse-submodules`), "switch")
	g.sub(gitSub("checkout", effWrite, opsOther, `q,quiet progress no-progress f,force ours theirs b=o B=o t,track?o
		no-track guess no-guess l detach orphan=o ignore-skip-worktree-bits m,merge conflict=o p,patch!x
		ignore-other-worktrees overwrite-ignore no-overwrite-ignore recurse-submodules no-recurse-submodules overlay
		no-overlay pathspec-from-file=r pathspec-file-nul`), "checkout")
	stash := gitSub("stash", effWrite, opsOther, `p,patch!x S,staged k,keep-index no-keep-index u,include-untracked
		a,all q,quiet m,message=o pathspec-from-file=r pathspec-file-nul index`)
	stash.subDefault = effRuns
	stash.sub(gitSub("stash list", effRead, opsOther, gitRevOpts), "list")
	stash.sub(gitSub("stash show", effRead, opsOther, gitDiffOpts+`include-untracked only-untracked`), "show")
	push := gitSub("stash push", effWrite, opsOther, `p,patch!x S,staged k,keep-index no-keep-index
		u,include-untracked a,all q,quiet m,message=o pathspec-from-file=r pathspec-file-nul`)
	stash.sub(push, "push", "save")
	stash.sub(gitSub("stash apply", effWrite, opsOther, `index q,quiet`), "pop", "apply", "drop", "clear", "branch", "create", "store")
	g.sub(stash, "stash")
	tag := gitSub("tag", effRead, opsOther, `a,annotate s,sign!x u,local-user=o!x f,force d,delete v,verify!x n?o
		l,list sort=o color?o i,ignore-case omit-empty column?o no-column contains?o no-contains?o merged?o
		no-merged?o points-at=o m,message=o F,file=r e,edit!x cleanup=o create-reflog format=o`)
	tag.hook = func(p *parse) {
		if p.has["-d"] || p.has["-f"] || (len(p.operands) > 0 && !p.has["-l"]) {
			p.raise(effWrite)
			if (p.has["-a"] || p.has["-s"]) && !p.has["-m"] && !p.has["-F"] {
				p.raise(effRuns) // the editor for the message
			}
		}
	}
	g.sub(tag, "tag")
	branch := gitSub("branch", effRead, opsOther, `d,delete D f,force m,move M c,copy C l,list r,remotes a,all
		v,verbose q,quiet abbrev=o no-abbrev column?o no-column sort=o merged?o no-merged?o contains?o no-contains?o
		points-at=o format=o show-current t,track?o no-track u,set-upstream-to=o unset-upstream edit-description!x
		create-reflog i,ignore-case omit-empty color?o no-color recurse-submodules`)
	branch.hook = func(p *parse) {
		for _, w := range []string{"-d", "-D", "-f", "-m", "-M", "-c", "-C", "-u", "--unset-upstream", "-t", "--no-track", "--create-reflog"} {
			if p.has[w] {
				p.raise(effWrite)
			}
		}
		if len(p.operands) > 0 && !p.has["-l"] {
			p.raise(effWrite)
		}
	}
	g.sub(branch, "branch")
	g.sub(gitSub("init", effWrite, opsWrite, `q,quiet bare template=o!X separate-git-dir=o!X object-format=o
		ref-format=o b,initial-branch=o shared?o`), "init")
	g.sub(gitSub("mv", effWrite, opsWrite, `f,force k n,dry-run v,verbose`), "mv")
	g.sub(gitSub("rm", effWrite, opsWrite, `f,force n,dry-run r cached ignore-unmatch sparse q,quiet
		pathspec-from-file=r pathspec-file-nul`), "rm")
	g.sub(gitSub("reset", effWrite, opsOther, `q,quiet no-quiet refresh no-refresh pathspec-from-file=r
		pathspec-file-nul soft mixed N hard merge keep recurse-submodules no-recurse-submodules p,patch!x`), "reset")
	g.sub(gitSub("merge", effWrite, opsOther, `commit no-commit edit!x e!x no-edit cleanup=o ff no-ff ff-only
		S,gpg-sign?o!x no-gpg-sign log?o no-log signoff no-signoff stat n no-stat squash no-squash verify no-verify
		s,strategy=o X,strategy-option=o verify-signatures!x no-verify-signatures summary no-summary q,quiet
		v,verbose progress no-progress autostash no-autostash allow-unrelated-histories m=o F,file=r into-name=o
		rerere-autoupdate no-rerere-autoupdate overwrite-ignore no-overwrite-ignore abort quit continue!x`), "merge")
	g.sub(gitSub("rebase", effWrite, opsOther, `onto=o keep-base continue!x abort quit skip edit-todo!x
		show-current-patch m,merge s,strategy=o X,strategy-option=o S,gpg-sign?o!x no-gpg-sign q,quiet v,verbose
		stat n,no-stat no-verify verify f,force-rebase,no-ff fork-point no-fork-point ignore-whitespace whitespace=o
		committer-date-is-author-date ignore-date,reset-author-date signoff i,interactive!x r,rebase-merges?o
		no-rebase-merges x,exec=o!X root autosquash no-autosquash autostash no-autostash reschedule-failed-exec
		no-reschedule-failed-exec update-refs no-update-refs empty=o keep-empty no-keep-empty C=o apply`), "rebase")
	g.sub(gitSub("cherry-pick", effWrite, opsOther, `e,edit!x cleanup=o x r m,mainline=o n,no-commit s,signoff
		S,gpg-sign?o!x no-gpg-sign ff allow-empty allow-empty-message keep-redundant-commits empty=o strategy=o
		X,strategy-option=o rerere-autoupdate no-rerere-autoupdate continue!x skip quit abort`), "cherry-pick", "revert")
	g.sub(gitSub("clean", effWrite, opsOther, `d f,force i,interactive!x n,dry-run q,quiet e,exclude=o x X`), "clean")

	// No network in the sandbox, and the repository's configuration is
	// the owner's: these are refused whatever their options.
	net := &grammar{name: "git (network)", base: effNetwork}
	g.sub(net, "fetch", "pull", "push", "clone", "ls-remote", "fetch-pack", "send-pack", "archimport", "cvsimport",
		"svn", "p4", "send-email", "imap-send", "request-pull", "http-fetch", "http-push", "remote-ext", "remote-fd")
	refused := &grammar{name: "git (refused)", base: effRefused}
	g.sub(refused, "config", "submodule", "bisect", "filter-branch", "difftool", "mergetool", "daemon", "instaweb",
		"credential", "credential-cache", "credential-store", "cvsserver", "cvsexportcommit", "web--browse",
		"upload-pack", "receive-pack", "upload-archive", "shell", "hook", "fsmonitor--daemon", "http-backend",
		"worktree", "remote", "filter-repo", "var", "sh-setup", "sh-i18n", "mergetool--lib")
	return g
}
