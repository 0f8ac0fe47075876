// Package theme is ralph's OKLCH theme engine: it turns a seed hue, a
// harmony pattern and a mood (or a named preset) into a complete light and
// dark set of shadcn/ui design tokens, checks every text/background pair
// against WCAG AA, and writes the tokens into a project stylesheet between
// markers.
//
// Colour flows one way: OKLCH (what the tokens are written in) → OKLab →
// linear sRGB → sRGB. A colour that falls outside the sRGB gamut keeps its
// lightness and hue and loses chroma until it fits, so every emitted value
// displays as written on an sRGB screen.
//
// The registries — patterns, moods, presets, fonts, shadow profiles and
// radius stops — are returned by functions, never held in package state, so
// a caller cannot change what another caller sees.
//
// Output is deterministic: the same request always yields the same bytes
// (fixed decimals, fixed token order), so applying a theme twice leaves the
// stylesheet byte-identical.
package theme
