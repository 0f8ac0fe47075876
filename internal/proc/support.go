package proc

import "runtime"

// OrphanSupport says in one line why programs left running by a ralph
// that died are not looked for on this system, or "" where they are
// (Linux, through /proc).
func OrphanSupport() string { return orphanSupport(runtime.GOOS) }

func orphanSupport(goos string) string {
	switch goos {
	case "linux":
		return ""
	case "windows":
		return "not looked for on windows: the system ends the programs of a ralph that dies, through their job objects"
	default:
		return "not looked for on " + goos + ": without /proc ralph cannot tell what a ralph killed outright left running; look for its programs by hand (ps -ax)"
	}
}
