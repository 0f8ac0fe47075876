// Package scope checks that an agent's changes stay inside the scope a
// mutation plan declares: a section marked "[ADD] 2" must gain two items, a
// PRESERVED section must lose and convert none, a "NO CHANGES" file must be
// untouched (SPEC §9).
//
// Counting is heuristic. CountItems reads a React/TSX section file with a
// small tokenizer that knows JavaScript strings, template literals,
// comments, regular expressions and JSX (so text like "Don't, [really]" and
// commas inside strings never count), and tries, in order:
//
//  1. .map( over a data array. The receiver of each outermost .map call
//     (a .map inside another's callback is not counted) is resolved: a
//     name declared in the file (const flavors = […], const flavors:
//     Flavor[] = […], export const …, useState([…])), a property path
//     (data.features), or an import (named, default, namespace; .ts, .tsx,
//     .js, .jsx, .json and index files; re-exports) read through the
//     siblings callback. Spreads of arrays that resolve are expanded.
//     Receivers may pass through slice, filter, sort and the like;
//     Object.values/keys/entries(obj) counts obj's properties;
//     Array.from({length: N}) and Array(N) count N with no per-item text
//     (placeholders such as skeletons or stars are rendered items, but their
//     content cannot be compared). The counts of distinct arrays are summed,
//     so a list split into two arrays still counts as one list.
//  2. Array literals of objects or of strings assigned to a const, whether
//     mapped or not; an array only spread into another is not counted twice.
//     Distinct arrays are summed.
//  3. The largest run of two or more consecutive sibling JSX elements with
//     the same tag name (blank text and {/* comments */} between them do not
//     break a run).
//
// Check compares each marked section's file at task-N-pre with the file now
// and returns one Finding per marker, and one for each requirement of
// task.md no marker carries. Every [ADD], [MODIFY], [FIX] and [REMOVE]
// marker is linked to the task.md requirement it stands for, and fails
// when its file is unchanged since task-N-pre, so a task whose
// requirements all went untouched never completes; a requirement's own
// check (task.md's " — check: [argv]") must pass too. Items are named by
// what a person sees: an object's name or title (else its id or key), an
// element's text (else its key, title or alt), never its class name. Besides counts it compares the items
// themselves, by a normalised text of each, so "converted two and added
// two" — ten items where ten were expected — still fails PRESERVED.
package scope
