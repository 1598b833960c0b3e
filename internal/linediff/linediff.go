// Package linediff owns the line diff Halo shows people: a test case's expected output
// against the observed one (halo test), a pinned MCP tool definition against the one a
// server now sends (halo lock).
package linediff

import "strings"

// Diff shows want against got line by line: "  " for a line both have, "- " for one only
// want has, "+ " for one only got has, in order (a longest common subsequence). Past maxLines
// lines on either side the diff's cost would grow with their product, so want is shown whole,
// then got.
func Diff(want, got []string, maxLines int) string {
	var b strings.Builder
	if len(want) > maxLines || len(got) > maxLines {
		for _, l := range want {
			b.WriteString("- " + l + "\n")
		}
		for _, l := range got {
			b.WriteString("+ " + l + "\n")
		}
		return b.String()
	}
	n, m := len(want), len(got)
	// lcs[i][j] is the longest common subsequence of want[i:] and got[j:].
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if want[i] == got[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && want[i] == got[j]:
			b.WriteString("  " + want[i] + "\n")
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			b.WriteString("- " + want[i] + "\n")
			i++
		default:
			b.WriteString("+ " + got[j] + "\n")
			j++
		}
	}
	return b.String()
}
