package procedure

import (
	"strings"

	"github.com/wo-runner/wo/github"
	"github.com/wo-runner/wo/redact"
)

// secrets are what the engine removes from what it writes and reports:
// Engine.Secrets, else the GitHub token in every form wo sends it.
func (e *Engine) secrets() *redact.Secrets {
	if e.Secrets != nil {
		return e.Secrets
	}
	if e.Getenv == nil {
		return nil
	}
	return redact.New().Token(github.Token(e.Getenv))
}

// githubConfig is how the engine reaches GitHub for repo: the API, the
// token, and wo's login where GitHub will not tell it (WO_GITHUB_LOGIN;
// inside GitHub Actions its GITHUB_TOKEN writes as github-actions[bot]).
func (e *Engine) githubConfig(repo string) github.Config {
	cfg := github.Config{BaseURL: e.GitHubAPI, Token: github.Token(e.Getenv), Repo: repo}
	if e.Getenv != nil {
		cfg.Login = strings.TrimSpace(e.Getenv("WO_GITHUB_LOGIN"))
		if e.Getenv("GITHUB_ACTIONS") == "true" {
			cfg.AppLogin = "github-actions[bot]"
		}
	}
	return cfg
}
