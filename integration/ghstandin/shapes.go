package ghstandin

import (
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"
)

// The objects below are complete as GitHub's OpenAPI description has them
// (schemas simple-user, private-user, repository, pull-request,
// pull-request-simple, pull-request-review, pull-request-review-comment,
// issue-comment), laid out after the description's own examples. API URLs
// point at the stand-in; web URLs at https://github.example. Numbers that
// GitHub computes and wo never reads (additions, commits …) are plausible
// constants, and mergeable is null, as GitHub answers before it has
// computed it.

const webBase = "https://github.example/"

func (s *Server) api(path string, args ...any) string {
	return s.URL + strings.TrimPrefix(fmt.Sprintf(path, args...), "/")
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// nodeID is GitHub's global node ID form: base64 of "NNN:TypeID".
func nodeID(kind string, id int64) string {
	return base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("%03d:%s%d", len(kind), kind, id)))
}

// userID is a stable ID for a login: the token's user is 1, as before.
func (s *Server) userID(login string) int64 {
	if login == s.Login {
		return 1
	}
	h := fnv.New32a()
	h.Write([]byte(login))
	return int64(h.Sum32()%90_000_000) + 10_000_000
}

// association is a login's author_association: MEMBER for the token's
// user and the Writers, NONE for everyone else.
func (s *Server) association(login string) string {
	if login == s.Login || s.Writers[login] {
		return "MEMBER"
	}
	return "NONE"
}

// userJSON is a simple-user.
func (s *Server) userJSON(login string) map[string]any {
	kind := "User"
	switch {
	case strings.HasSuffix(login, "[bot]"), login == copilotInline:
		kind = "Bot"
	case login == s.owner(login):
		kind = "Organization"
	}
	id := s.userID(login)
	u := s.api("users/%s", login)
	return map[string]any{
		"login": login, "id": id, "node_id": nodeID("User", id),
		"avatar_url":  fmt.Sprintf("https://avatars.github.example/u/%d?v=4", id),
		"gravatar_id": "", "url": u, "html_url": webBase + login,
		"followers_url": u + "/followers", "following_url": u + "/following{/other_user}",
		"gists_url": u + "/gists{/gist_id}", "starred_url": u + "/starred{/owner}{/repo}",
		"subscriptions_url": u + "/subscriptions", "organizations_url": u + "/orgs",
		"repos_url": u + "/repos", "events_url": u + "/events{/privacy}",
		"received_events_url": u + "/received_events", "type": kind, "site_admin": false,
		"user_view_type": "public",
	}
}

// owner reports login when some repository of the stand-in belongs to it,
// so that repository owners are organizations.
func (s *Server) owner(login string) string {
	for repo := range s.Remotes {
		if o, _, _ := strings.Cut(repo, "/"); o == login {
			return login
		}
	}
	for repo := range s.prs {
		if o, _, _ := strings.Cut(repo, "/"); o == login {
			return login
		}
	}
	return ""
}

// authenticatedUserJSON is the private-user GET /user answers with.
func (s *Server) authenticatedUserJSON() map[string]any {
	u := s.userJSON(s.Login)
	since := stamp(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))
	for k, v := range map[string]any{
		"user_view_type": "private", "name": nil, "company": nil, "blog": "", "location": nil,
		"email": nil, "hireable": nil, "bio": nil, "twitter_username": nil, "notification_email": nil,
		"public_repos": 0, "public_gists": 0, "followers": 0, "following": 0,
		"created_at": since, "updated_at": since, "private_gists": 0, "total_private_repos": 0,
		"owned_private_repos": 0, "disk_usage": 0, "collaborators": 0, "two_factor_authentication": true,
		"plan": map[string]any{"name": "free", "space": 976562499, "collaborators": 0, "private_repos": 10000},
	} {
		u[k] = v
	}
	return u
}

// repoJSON is a repository.
func (s *Server) repoJSON(repo string) map[string]any {
	owner, name, _ := strings.Cut(repo, "/")
	h := fnv.New32a()
	h.Write([]byte(repo))
	id := int64(h.Sum32()%900_000_000) + 100_000_000
	a := s.api("repos/%s", repo)
	created := stamp(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))
	return map[string]any{
		"id": id, "node_id": nodeID("Repository", id), "name": name, "full_name": repo,
		"owner": s.userJSON(owner), "private": true, "html_url": webBase + repo, "description": nil,
		"fork": false, "url": a, "archive_url": a + "/{archive_format}{/ref}",
		"assignees_url": a + "/assignees{/user}", "blobs_url": a + "/git/blobs{/sha}",
		"branches_url": a + "/branches{/branch}", "collaborators_url": a + "/collaborators{/collaborator}",
		"comments_url": a + "/comments{/number}", "commits_url": a + "/commits{/sha}",
		"compare_url": a + "/compare/{base}...{head}", "contents_url": a + "/contents/{+path}",
		"contributors_url": a + "/contributors", "deployments_url": a + "/deployments",
		"downloads_url": a + "/downloads", "events_url": a + "/events", "forks_url": a + "/forks",
		"git_commits_url": a + "/git/commits{/sha}", "git_refs_url": a + "/git/refs{/sha}",
		"git_tags_url": a + "/git/tags{/sha}", "git_url": "git://github.example/" + repo + ".git",
		"issue_comment_url": a + "/issues/comments{/number}", "issue_events_url": a + "/issues/events{/number}",
		"issues_url": a + "/issues{/number}", "keys_url": a + "/keys{/key_id}", "labels_url": a + "/labels{/name}",
		"languages_url": a + "/languages", "merges_url": a + "/merges",
		"milestones_url": a + "/milestones{/number}", "notifications_url": a + "/notifications{?since,all,participating}",
		"pulls_url": a + "/pulls{/number}", "releases_url": a + "/releases{/id}",
		"ssh_url": "git@github.example:" + repo + ".git", "stargazers_url": a + "/stargazers",
		"statuses_url": a + "/statuses/{sha}", "subscribers_url": a + "/subscribers",
		"subscription_url": a + "/subscription", "tags_url": a + "/tags", "teams_url": a + "/teams",
		"trees_url": a + "/git/trees{/sha}", "clone_url": webBase + repo + ".git", "mirror_url": nil,
		"hooks_url": a + "/hooks", "svn_url": webBase + repo, "homepage": nil, "language": "Go",
		"forks_count": 0, "forks": 0, "stargazers_count": 0, "watchers_count": 0, "watchers": 0,
		"size": 0, "default_branch": "main", "open_issues_count": s.openCount(repo), "open_issues": s.openCount(repo),
		"has_issues": true, "has_projects": false, "has_wiki": false, "has_pages": false,
		"has_downloads": true, "archived": false, "disabled": false, "license": nil, "visibility": "private",
		"pushed_at": created, "created_at": created, "updated_at": created,
	}
}

func (s *Server) openCount(repo string) int {
	n := 0
	for _, p := range s.prs[repo] {
		if p.State == "open" {
			n++
		}
	}
	return n
}

// prSimpleJSON is a pull-request-simple, as lists carry it.
func (s *Server) prSimpleJSON(repo string, p *pr) map[string]any {
	owner, _, _ := strings.Cut(repo, "/")
	a := s.api("repos/%s/pulls/%d", repo, p.Number)
	issue := s.api("repos/%s/issues/%d", repo, p.Number)
	html := fmt.Sprintf("%s%s/pull/%d", webBase, repo, p.Number)
	headSHA := s.headSHA(repo, p.Head)
	if headSHA == "" {
		headSHA = p.headSeen // a deleted head branch: GitHub keeps the PR's last head
	}
	statuses := s.api("repos/%s/statuses/%s", repo, headSHA)
	side := func(ref string) map[string]any {
		sha := s.headSHA(repo, ref)
		if ref == p.Head {
			sha = headSHA
		}
		return map[string]any{"label": owner + ":" + ref, "ref": ref, "sha": sha,
			"user": s.userJSON(owner), "repo": s.repoJSON(repo)}
	}
	id := int64(p.Number) + 1_000_000
	link := func(href string) map[string]any { return map[string]any{"href": href} }
	var closedAt, mergedAt, mergeSHA any
	if p.State == "closed" {
		closedAt = stamp(p.UpdatedAt)
	}
	if p.Merged {
		mergedAt, mergeSHA = stamp(p.UpdatedAt), headSHA
		if p.mergeSHA != "" {
			mergeSHA = p.mergeSHA
		}
	}
	var body any
	if p.Body != "" {
		body = p.Body
	}
	return map[string]any{
		"url": a, "id": id, "node_id": nodeID("PullRequest", id), "html_url": html,
		"diff_url": html + ".diff", "patch_url": html + ".patch", "issue_url": issue,
		"commits_url": a + "/commits", "review_comments_url": a + "/comments",
		"review_comment_url": s.api("repos/%s/pulls/comments{/number}", repo), "comments_url": issue + "/comments",
		"statuses_url": statuses, "number": p.Number, "state": p.State, "locked": false, "title": p.Title,
		"user": s.userJSON(p.User), "body": body, "labels": []any{}, "milestone": nil,
		"active_lock_reason": nil, "created_at": stamp(p.CreatedAt), "updated_at": stamp(p.UpdatedAt),
		"closed_at": closedAt, "merged_at": mergedAt, "merge_commit_sha": mergeSHA,
		"assignee": nil, "assignees": []any{}, "requested_reviewers": []any{}, "requested_teams": []any{},
		"head": side(p.Head), "base": side(p.Base),
		"_links": map[string]any{
			"self": link(a), "html": link(html), "issue": link(issue), "comments": link(issue + "/comments"),
			"review_comments": link(a + "/comments"), "review_comment": link(s.api("repos/%s/pulls/comments{/number}", repo)),
			"commits": link(a + "/commits"), "statuses": link(statuses),
		},
		"author_association": "MEMBER", "auto_merge": nil, "draft": p.Draft,
		"stack": s.prStackJSON(repo, p),
	}
}

// prJSON is a pull-request: the simple form and what only a single pull
// request carries.
func (s *Server) prJSON(repo string, p *pr) map[string]any {
	out := s.prSimpleJSON(repo, p)
	var mergedBy any
	if p.Merged {
		mergedBy = s.userJSON(p.User)
	}
	for k, v := range map[string]any{
		"merged": p.Merged, "mergeable": nil, "rebaseable": nil, "mergeable_state": "unknown",
		"merged_by": mergedBy, "comments": len(p.issueComms), "review_comments": len(p.comments),
		"maintainer_can_modify": false, "commits": 1, "additions": 1, "deletions": 0, "changed_files": 1,
	} {
		out[k] = v
	}
	return out
}

// reviewJSON is a pull-request-review.
func (s *Server) reviewJSON(repo string, p *pr, id int64, login, state, body, sha string) map[string]any {
	html := fmt.Sprintf("%s%s/pull/%d#pullrequestreview-%d", webBase, repo, p.Number, id)
	prURL := s.api("repos/%s/pulls/%d", repo, p.Number)
	return map[string]any{
		"id": id, "node_id": nodeID("PullRequestReview", id), "user": s.userJSON(login), "body": body,
		"state": state, "html_url": html, "pull_request_url": prURL,
		"_links":       map[string]any{"html": map[string]any{"href": html}, "pull_request": map[string]any{"href": prURL}},
		"submitted_at": stamp(time.Now()), "commit_id": sha, "author_association": s.association(login),
	}
}

// reviewCommentJSON is a pull-request-review-comment on one line of the
// head commit. Its html_url keeps the stand-in's /comment/ID form, which
// procedure tests rely on.
func (s *Server) reviewCommentJSON(repo string, p *pr, id, reviewID int64, login string, c Comment, sha string) map[string]any {
	a := s.api("repos/%s/pulls/comments/%d", repo, id)
	html := webBase + "comment/" + strconv.FormatInt(id, 10)
	prURL := s.api("repos/%s/pulls/%d", repo, p.Number)
	now := stamp(time.Now())
	return map[string]any{
		"url": a, "pull_request_review_id": reviewID, "id": id, "node_id": nodeID("PullRequestReviewComment", id),
		"diff_hunk": fmt.Sprintf("@@ -0,0 +1,%d @@", max(c.Line, 1)), "path": c.Path,
		"position": max(c.Line, 1), "original_position": max(c.Line, 1),
		"commit_id": sha, "original_commit_id": sha, "user": s.userJSON(login), "body": c.Body,
		"created_at": now, "updated_at": now, "html_url": html, "pull_request_url": prURL,
		"author_association": s.association(login),
		"_links": map[string]any{"self": map[string]any{"href": a}, "html": map[string]any{"href": html},
			"pull_request": map[string]any{"href": prURL}},
		"start_line": nil, "original_start_line": nil, "line": c.Line, "original_line": c.Line,
		"side": "RIGHT", "subject_type": "line",
	}
}

// issueCommentJSON is an issue-comment on the pull request's conversation.
func (s *Server) issueCommentJSON(repo string, p *pr, id int64, login, body string) map[string]any {
	now := stamp(time.Now())
	return map[string]any{
		"id": id, "node_id": nodeID("IssueComment", id), "url": s.api("repos/%s/issues/comments/%d", repo, id),
		"body": body, "html_url": fmt.Sprintf("%s%s/pull/%d#issuecomment-%d", webBase, repo, p.Number, id),
		"user": s.userJSON(login), "created_at": now, "updated_at": now,
		"issue_url": s.api("repos/%s/issues/%d", repo, p.Number), "author_association": s.association(login),
		"performed_via_github_app": nil,
	}
}
