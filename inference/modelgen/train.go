package modelgen

import (
	_ "embed"
	"fmt"
	"regexp"
	"sort"
	"sync"
)

//go:embed corpus.txt
var corpus string

// wordRE splits training text into words with their leading space, like
// the byte-level pre-tokenizer does.
var wordRE = regexp.MustCompile(` ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+`)

// learnMerges learns up to n BPE merges from the corpus. Each word is split
// into symbols by split; the most frequent adjacent pair (ties: the
// lexicographically smallest) is merged until no pair occurs twice.
func learnMerges(n int, split func(word string) []string) [][2]string {
	counts := map[string]int{}
	for _, w := range wordRE.FindAllString(corpus, -1) {
		counts[w]++
	}
	type word struct {
		syms  []string
		count int
	}
	keys := make([]string, 0, len(counts))
	for w := range counts {
		keys = append(keys, w)
	}
	sort.Strings(keys)
	words := make([]word, len(keys))
	for i, w := range keys {
		words[i] = word{split(w), counts[w]}
	}
	var merges [][2]string
	for len(merges) < n {
		pairs := map[[2]string]int{}
		for _, w := range words {
			for i := 0; i+1 < len(w.syms); i++ {
				pairs[[2]string{w.syms[i], w.syms[i+1]}] += w.count
			}
		}
		var best [2]string
		bestN := 1
		for p, c := range pairs {
			if c > bestN || (c == bestN && bestN > 1 && (p[0] < best[0] || (p[0] == best[0] && p[1] < best[1]))) {
				best, bestN = p, c
			}
		}
		if bestN < 2 {
			break
		}
		merges = append(merges, best)
		joined := best[0] + best[1]
		for wi := range words {
			s := words[wi].syms
			out := s[:0]
			for i := 0; i < len(s); i++ {
				if i+1 < len(s) && s[i] == best[0] && s[i+1] == best[1] {
					out = append(out, joined)
					i++
				} else {
					out = append(out, s[i])
				}
			}
			words[wi].syms = out
		}
	}
	return merges
}

var (
	mergeMu    sync.Mutex
	mergeCache = map[string][][2]string{}
)

// cachedMerges memoises learnMerges per tokenizer kind and count.
func cachedMerges(kind string, n int, split func(string) []string) [][2]string {
	key := fmt.Sprintf("%s:%d", kind, n)
	mergeMu.Lock()
	defer mergeMu.Unlock()
	if m, ok := mergeCache[key]; ok {
		return m
	}
	m := learnMerges(n, split)
	mergeCache[key] = m
	return m
}
