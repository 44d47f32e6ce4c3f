package config

import (
	"fmt"
	"strings"
)

// diffContext is how many unchanged lines a hunk of Migration.Diff shows
// around a change.
const diffContext = 2

// maxDiffCells bounds the table of the longest-common-subsequence search:
// past it the changed middle is shown as removed then added, which is
// honest but not minimal. A migration changes a few lines, so the bound is
// never reached in practice.
const maxDiffCells = 1 << 20

// Diff is the migration as a unified diff of lines ("-" the file now, "+"
// after), with diffContext lines of context; "" when nothing changes. A
// line's "\r" (a CRLF file) is not shown. Lines are the file's text as it
// is: whoever prints them to a terminal puts them through termtext.
// Hand-rolled (a longest common subsequence of the lines between the
// common head and tail) rather than a diff library for a few lines.
func (m *Migration) Diff() string {
	a, b := diffLines(m.Before), diffLines(m.After)
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	if head == len(a) && head == len(b) {
		return ""
	}
	ops := make([]diffOp, 0, len(a)+len(b))
	for _, l := range a[:head] {
		ops = append(ops, diffOp{' ', l})
	}
	ops = append(ops, middleOps(a[head:len(a)-tail], b[head:len(b)-tail])...)
	for _, l := range a[len(a)-tail:] {
		ops = append(ops, diffOp{' ', l})
	}
	return hunks(ops)
}

// diffOp is one line of a diff: kind ' ' (kept), '-' or '+'.
type diffOp struct {
	kind byte
	line string
}

// middleOps diffs a and b by their longest common subsequence.
func middleOps(a, b []string) []diffOp {
	var ops []diffOp
	if len(a)*len(b) > maxDiffCells {
		for _, l := range a {
			ops = append(ops, diffOp{'-', l})
		}
		for _, l := range b {
			ops = append(ops, diffOp{'+', l})
		}
		return ops
	}
	// lcs[i][j] is the length of the longest common subsequence of
	// a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i]})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, diffOp{'-', a[i]}) // removals before additions
			i++
		default:
			ops = append(ops, diffOp{'+', b[j]})
			j++
		}
	}
	return ops
}

// hunks writes ops as unified-diff hunks: changes closer than twice the
// context share a hunk.
func hunks(ops []diffOp) string {
	var out strings.Builder
	for start := 0; start < len(ops); {
		// The next change at or after start.
		first := start
		for first < len(ops) && ops[first].kind == ' ' {
			first++
		}
		if first == len(ops) {
			break
		}
		// Its hunk ends diffContext lines after the last change that
		// is followed by fewer than 2*diffContext kept lines.
		last := first
		for k := first + 1; k < len(ops) && k-last <= 2*diffContext; k++ {
			if ops[k].kind != ' ' {
				last = k
			}
		}
		from, to := max(first-diffContext, 0), min(last+diffContext+1, len(ops))
		// Line numbers: count the old and new lines before from.
		oldAt, newAt := 1, 1
		for _, op := range ops[:from] {
			if op.kind != '+' {
				oldAt++
			}
			if op.kind != '-' {
				newAt++
			}
		}
		oldN, newN := 0, 0
		for _, op := range ops[from:to] {
			if op.kind != '+' {
				oldN++
			}
			if op.kind != '-' {
				newN++
			}
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", oldAt, oldN, newAt, newN)
		for _, op := range ops[from:to] {
			out.WriteByte(op.kind)
			out.WriteString(op.line)
			out.WriteByte('\n')
		}
		start = to
	}
	return out.String()
}

// diffLines splits data into lines without their "\n" or "\r\n".
func diffLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	ls := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i, l := range ls {
		ls[i] = strings.TrimSuffix(l, "\r")
	}
	return ls
}
