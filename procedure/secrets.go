package procedure

import "github.com/wo-runner/wo/redact"

// secrets are what the engine removes from what it writes and reports:
// Engine.Secrets, else the GitHub token in every form wo sends it.
func (e *Engine) secrets() *redact.Secrets {
	if e.Secrets != nil {
		return e.Secrets
	}
	if e.Getenv == nil {
		return nil
	}
	return redact.New().Token(githubToken(e.Getenv))
}
