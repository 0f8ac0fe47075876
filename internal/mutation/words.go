package mutation

import (
	"slices"
	"strings"
	"unicode"
)

// keywords splits texts into distinct normalised keywords: letters and
// digits, camelCase split (FlavorGridSection → flavor, grid), lower-cased,
// British -our folded (flavour → flavor), plurals and -ing reduced, and
// stop words, numbers and words shorter than three letters dropped. Both
// sides of a comparison go through it, so the reductions need only be
// consistent, not correct English.
func keywords(texts ...string) map[string]bool {
	out := map[string]bool{}
	for _, s := range texts {
		for _, w := range splitWords(s) {
			if w = stem(w); w != "" && !stopWords[w] {
				out[w] = true
			}
		}
	}
	return out
}

// splitWords splits s at anything but letters and digits and at
// lower-to-upper case changes, and lower-cases the parts.
func splitWords(s string) []string {
	var (
		out  []string
		cur  []rune
		prev rune
	)
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return out
}

// stem reduces a lower-case word; "" for words too short or numeric.
func stem(w string) string {
	if len([]rune(w)) < 3 || strings.IndexFunc(w, unicode.IsLetter) < 0 {
		return ""
	}
	w = strings.ReplaceAll(w, "our", "or")
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ing") && len(w) > 5:
		w = w[:len(w)-3]
	case strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && len(w) > 3:
		w = w[:len(w)-1]
	}
	if len(w) < 3 {
		return ""
	}
	return w
}

// stopWords are stemmed words that say nothing about where a change goes.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		the and for with new more add added modify modified fix fixed remove removed
		delete existing keep kept make made less not all into from that this these
		those them their they there then than too very but also just only some each
		every any should must please want need needs change changed update updated
		unchanged get got are was were has have had its now one two three four five
		six seven eight nine ten eleven twelve item section screen page content
		element component plan task instead other another extra same like your you
		our can could would will what when where which who how why about after
		before over under out off still again nothing something everything thing
		stuff bit lot few many much per via within without while
	`) {
		if s := stem(w); s != "" {
			m[s] = true
		}
	}
	return m
}()

// related maps a recipe id, or "theme", to words that usually name it in a
// task: "refine the ad copy" touches the hero and the cta.
var related = map[string]string{
	"theme":           "theme mood moods color colors colour palette dark light toggle switch font fonts typography style styles aesthetic mode modes tone visual look",
	"hero":            "hero headline tagline banner copy intro heading above fold",
	"cta":             "cta call action signup button copy conversion",
	"features":        "feature grid card cards benefit benefits",
	"pricing":         "price prices pricing tier tiers subscription plans",
	"testimonials":    "testimonial review reviews quote quotes",
	"social-proof":    "logo logos trust customer customers",
	"faq":             "faq question questions answer answers",
	"footer":          "footer link links legal copyright",
	"contact":         "contact form email message",
	"newsletter":      "newsletter subscribe email signup",
	"team":            "team member members people staff",
	"gallery":         "gallery image images photo photos",
	"portfolio":       "portfolio project projects work case",
	"blog-grid":       "blog post posts article articles",
	"stats-dashboard": "stats statistics metric metrics number numbers chart",
	"timeline":        "timeline history milestone milestones",
	"sidebar-nav":     "sidebar nav navigation menu",
	"auth-login":      "login sign auth password",
}

// overlap returns the words of a found in b, in a stable order.
func overlap(a, b map[string]bool) []string {
	var out []string
	for w := range a {
		if b[w] {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return out
}
