package task

import "testing"

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		plan bool
		want Type
	}{
		// Seed 002 Phase 2 tests.
		{"build me a dashboard", false, Fresh},
		{"build me a dashboard", true, Fresh},
		{"fix the theme toggle", true, Bugfix},
		{"fix the theme toggle", false, Bugfix},
		{"add 2 more drinks", true, Mutation},
		{"make it better", true, NeedsClarification},

		// The table's other rows.
		{"start over with a recipe tracker", true, Fresh},
		{"Create a landing page for my café", true, Fresh},
		{"a recipe tracker with tags", false, Fresh},
		{"add 2 more drinks", false, Fresh},
		{"the login button doesn't respond on mobile", true, Bugfix},
		{"Dark mode is broken on the store page", false, Bugfix},
		{"dark mode toggle is broken", true, Bugfix},
		{"The cart total isn’t working", true, Bugfix}, // typographic apostrophe
		{"the cart total is not working", true, Bugfix},
		{"change the hero copy to sound more adult", true, Mutation},
		{"fix the toggle and add a settings page", true, Mutation},
		{"refine ad copy! less generic, more adult, less monster energy.\ntwo moods not working. add 2 more drinks for nighttime.", true, Mutation},
		{"improve", true, NeedsClarification},
		{"Update it.", true, NeedsClarification},
		{"please make it look nicer", false, NeedsClarification},
		{"fix it", true, NeedsClarification},
		{"", true, NeedsClarification},
		{"   ", false, NeedsClarification},
		{"prefix the routes with /api", true, Mutation}, // "fix" only as a word
	} {
		if got := Classify(tc.msg, tc.plan); got != tc.want {
			t.Errorf("Classify(%q, plan=%v) = %q, want %q", tc.msg, tc.plan, got, tc.want)
		}
	}
}
