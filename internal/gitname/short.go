package gitname

// Short is a commit id cut to 12 characters, as messages and notes show it.
func Short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
