package task

import (
	"slices"
	"strings"
	"unicode"
)

// Classify is the deterministic local classifier of seed 002 §5's table.
// Option B records its answer in Task.Likely, and Option A uses it as a
// sanity net. The rules, first match wins:
//
//  1. An empty or vague message ("make it better", "improve", "update it":
//     a few words, none of them naming anything) → NeedsClarification.
//  2. "start over", "from scratch", "build me a", "create a" and the like
//     → Fresh.
//  3. A specific broken behaviour ("fix", "broken", "not working", "bug",
//     "doesn't", …) with no structural words ("add", "new", "more",
//     "remove", "redesign", …; nouns such as "page" only say where)
//     → Bugfix, plan or not: a bug fix has no plan to update.
//  4. No plan exists → Fresh.
//  5. Otherwise the message changes the existing project → Mutation.
func Classify(msg string, planExists bool) Type {
	words := tokenize(msg)
	switch {
	case vague(words):
		return NeedsClarification
	case containsAny(words, freshPhrases()):
		return Fresh
	case containsAny(words, bugPhrases()) && !containsAny(words, structuralPhrases()):
		return Bugfix
	case !planExists:
		return Fresh
	default:
		return Mutation
	}
}

// maxVagueWords bounds how long a message can be and still count as vague.
const maxVagueWords = 6

// isVagueWord reports whether w says nothing about what to change.
func isVagueWord(w string) bool {
	switch w {
	case
		"a", "all", "and", "bit", "better", "change", "clean", "cleanup", "do",
		"fix", "good", "improve", "improved", "it", "look", "looks", "make",
		"more", "much", "nice", "nicer", "pls", "please", "polish", "some",
		"something", "stuff", "that", "the", "things", "this", "tweak", "up",
		"update", "work", "just", "again", "can", "you", "could":
		return true
	}
	return false
}

// vague reports whether a message is empty or only a few vague words.
func vague(words []string) bool {
	if len(words) > maxVagueWords {
		return false
	}
	for _, w := range words {
		if !isVagueWord(w) {
			return false
		}
	}
	return true
}

// The phrase tables are word sequences matched on word boundaries; they
// are built per call so that the package holds no mutable state.

// freshPhrases ask for a new project.
func freshPhrases() [][]string {
	return phrases(
		"start over", "starting over", "from scratch", "start fresh",
		"build me a", "build me an", "build a", "build an",
		"create a", "create an", "make me a", "make me an",
		"new project", "new app",
	)
}

// bugPhrases name a broken behaviour.
func bugPhrases() [][]string {
	return phrases(
		"fix", "fixes", "fixed", "broken", "breaks", "bug", "bugs", "buggy",
		"not working", "isn't working", "doesn't", "does not", "don't work",
		"won't", "can't", "cannot", "crash", "crashes", "error", "errors",
		"fails", "failing", "wrong", "regression",
	)
}

// structuralPhrases change the shape of the project, not just its behaviour.
func structuralPhrases() [][]string {
	return phrases(
		"add", "adds", "adding", "new", "more", "another", "extra",
		"create", "remove", "delete", "drop", "redesign", "restructure",
		"refactor", "rename", "move", "replace", "convert", "split", "merge",
	)
}

// phrases splits each phrase into its words.
func phrases(ps ...string) [][]string {
	out := make([][]string, len(ps))
	for i, p := range ps {
		out[i] = tokenize(p)
	}
	return out
}

// containsAny reports whether words contains any of the phrases as a run of
// consecutive words.
func containsAny(words []string, ps [][]string) bool {
	for _, p := range ps {
		for i := 0; i+len(p) <= len(words); i++ {
			if slices.Equal(words[i:i+len(p)], p) {
				return true
			}
		}
	}
	return false
}

// tokenize lowercases s and splits it into words of letters, digits and
// apostrophes; typographic apostrophes count as "'".
func tokenize(s string) []string {
	s = strings.ToLower(strings.NewReplacer("\u2019", "'", "\u2018", "'").Replace(s))
	return strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
}
