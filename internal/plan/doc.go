// Package plan reads, checks and queries .ralph/plan.tsx, the structured plan
// an agent writes before it builds.
//
// A plan is a small subset of JSX, parsed here without a JavaScript runtime:
//
//	// leading comments and import lines are allowed and ignored
//	import { App, Theme } from "@ralph/plan"
//
//	export default (
//	  <App name="Shop" description="A small shop">
//	    <Theme mood="minimal" seed={140} pattern="triadic" />
//	    <Screen name="home">
//	      <Section gumdrop="hero" />
//	    </Screen>
//	  </App>
//	)
//
// # Grammar
//
// The grammar, in the EBNF notation of the Go specification. Space is
// spaces, tabs, carriage returns and newlines; Comment is a // line comment
// or a /* block comment */ and may appear wherever Space may, except in
// element children, where comments are written {/* … */}.
//
//	File       = Prologue [ "export" "default" ] ( "(" Element ")" | Element ) [ ";" ] EOF .
//	Prologue   = { Comment | Import } .
//	Import     = "import" … ( ";" | end of line outside braces and quotes ) .
//	Element    = "<" Name { Prop } ( "/>" | ">" { Child } "</" Name ">" ) .
//	Name       = Ident .
//	Prop       = PropName [ "=" PropValue ] .              // bare flag means {true}
//	PropName   = Ident { "-" | ":" | Ident } .
//	PropValue  = AttrString | "{" Literal "}" .
//	AttrString = `"` { any but `"` } `"` | "'" { any but "'" } "'" .   // no escapes, as in JSX
//	Literal    = String | Number | "true" | "false" | Array | Object .
//	String     = JS string in '…', "…" (escapes \n \t \\ \' \" \uXXXX …) or `…` without ${ } .
//	Number     = [ "-" ] decimal [ "." decimal ] [ exponent ] .
//	Array      = "[" [ Literal { "," Literal } [ "," ] ] "]" .
//	Object     = "{" [ Key ":" Literal { "," Key ":" Literal } [ "," ] ] "}" .
//	Key        = Ident | String .
//	Child      = Element | Text | "{" { Comment } "}" | "{" String "}" .
//	Text       = { any but "<" and "{" } .
//	Ident      = ( letter | "_" | "$" ) { letter | digit | "_" | "$" } .
//
// Elements and arrays/objects together may nest at most MaxDepth deep. The
// input must be valid UTF-8. Lines and columns are 1-based; columns count
// Unicode code points.
//
// # Parsed form
//
// Parse returns the root *Node. Every Node has its Component, its Props,
// its element Children, its Text (the text children joined: each line
// trimmed, blank lines at the ends removed), its Comments with their
// change Markers, and its Line and Col. Parse errors are *SyntaxError,
// printed as "plan.tsx:LINE:COL: message".
//
// # Comments and markers
//
// A JSX comment {/* … */} belongs to the element it sits inside, with one
// exception, so that markers can be written for a self-closing section: a
// comment that immediately precedes a <Section> or <Screen> (nothing but
// space and other comments in between) belongs to that element when it is
// inside a <Content>, or when an element sibling comes before it. A comment
// at the top of an element's body therefore belongs to that element:
//
//	<Screen name="store">
//	  {/* NO CHANGES for task-3 */}      ← the Screen's
//	  <Section gumdrop="hero" />
//	  {/* TASK-3 [ADD]: 2 flavors */}    ← the next Section's
//	  <Section gumdrop="features" />
//	</Screen>
//
// Comments that carry a change marker (TASK-N [ADD|MODIFY|FIX|REMOVE]: …,
// NO CHANGES for task-N, … PRESERVED …) are parsed into Node.Markers.
//
// # Checking
//
// Validate checks a parsed plan against Registries: the component
// declarations (a Component per name, as data) and the enumerations other
// packages own (moods, presets, patterns, fonts, shadow profiles, radius
// stops, recipe ids). Findings carry stable ids; see the Rule* constants.
package plan
