package ghstandin

import (
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/wo-runner/wo/gitops"
)

// GitHub's official GraphQL schema, vendored whole (testdata/graphql/README.md).
//
//go:embed testdata/graphql/schema.docs.graphql
var schemaSource string

// GraphQLSchema is GitHub's schema, parsed and validated once.
var GraphQLSchema = sync.OnceValues(func() (*ast.Schema, error) {
	doc, err := parser.ParseSchemas(validator.Prelude, &ast.Source{Name: "schema.docs.graphql", Input: schemaSource})
	if err != nil {
		return nil, err
	}
	for _, d := range append(doc.Definitions, doc.Extensions...) {
		d.Fields = dropRepeatedFields(d)
	}
	return validator.ValidateSchemaDocument(doc)
})

// RepeatedSchemaFields lists the fields that GitHub's published schema
// defines twice, identically (a defect of the published file: at 15.26.1,
// EnterpriseOwnerInfo.repositoryDeployKeySetting and
// repositoryDeployKeySettingOrganizations). The second definition is
// dropped so that a strict parser accepts the schema.
var RepeatedSchemaFields []string

func dropRepeatedFields(d *ast.Definition) ast.FieldList {
	seen := map[string]bool{}
	var out ast.FieldList
	for _, f := range d.Fields {
		if seen[f.Name] {
			RepeatedSchemaFields = append(RepeatedSchemaFields, d.Name+"."+f.Name)
			continue
		}
		seen[f.Name] = true
		out = append(out, f)
	}
	return out
}

// ValidateGraphQL checks a GraphQL document and its variables against
// GitHub's schema, as GitHub would before running it.
func ValidateGraphQL(query string, variables map[string]any) (*ast.QueryDocument, error) {
	schema, err := GraphQLSchema()
	if err != nil {
		return nil, fmt.Errorf("loading GitHub's GraphQL schema: %w", err)
	}
	doc, errs := gqlparser.LoadQuery(schema, query)
	if len(errs) > 0 {
		return nil, errs
	}
	if len(doc.Operations) != 1 {
		return nil, fmt.Errorf("the document has %d operations; wo sends one", len(doc.Operations))
	}
	if _, err := validator.VariableValues(schema, doc.Operations[0], variables); err != nil {
		return nil, err
	}
	return doc, nil
}

// thread is a review thread: the scripted reviewer's comment on a line and
// the replies to it.
type thread struct {
	id        string
	path      string
	line      int
	startLine int
	sha       string // the head it was opened on
	resolved  bool
	outdated  bool
	comments  []threadComment
}

type threadComment struct {
	id    int64
	login string
	body  string
	at    time.Time
}

// Thread is a review thread as tests see it.
type Thread struct {
	ID       string
	Path     string
	Line     int
	Resolved bool
	Outdated bool
	Comments []ThreadComment
}

// ThreadComment is one comment of a Thread.
type ThreadComment struct{ Login, Body string }

// GraphQLCalls counts the GraphQL operations the stand-in ran (valid ones:
// a refused document is a Violation instead).
type GraphQLCalls struct {
	Queries int
	// Points is the rate-limit cost the queries were charged, as their
	// rateLimit.cost reported it.
	Points int
	// Mutations counts each mutation by name (addPullRequestReviewThreadReply,
	// resolveReviewThread).
	Mutations map[string]int
}

// GraphQL returns what GraphQL operations the stand-in ran so far.
func (s *Server) GraphQL() GraphQLCalls {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.gql
	out.Mutations = map[string]int{}
	for k, v := range s.gql.Mutations {
		out.Mutations[k] = v
	}
	return out
}

// Threads returns a pull request's review threads, oldest first.
func (s *Server) Threads(repo string, number int) []Thread {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.find(repo, strconv.Itoa(number))
	if p == nil {
		return nil
	}
	var out []Thread
	for _, t := range p.threads {
		th := Thread{ID: t.id, Path: t.path, Line: t.line, Resolved: t.resolved, Outdated: t.outdated}
		for _, c := range t.comments {
			th.Comments = append(th.Comments, ThreadComment{Login: c.login, Body: c.body})
		}
		out = append(out, th)
	}
	return out
}

// AddReview submits a review of the PR's current head by login, as a
// person (or another bot) would.
func (s *Server) AddReview(repo string, number int, login, state, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.find(repo, strconv.Itoa(number))
	if p == nil {
		return
	}
	s.nextID++
	p.reviews = append(p.reviews, s.reviewJSON(repo, p, s.nextID, login, state, body, s.headSHA(repo, p.Head)))
}

// ResolveThread marks a thread resolved, as a person clicking "Resolve
// conversation" would.
func (s *Server) ResolveThread(repo string, number int, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.find(repo, strconv.Itoa(number)); p != nil {
		for _, t := range p.threads {
			if t.id == id {
				t.resolved = true
			}
		}
	}
}

// linesChanged reports whether a push from one commit to another of the
// bare repository behind repo changed the lines around line of path (or
// added or removed the file).
func (s *Server) linesChanged(repo, from, to, path string, line int) bool {
	r, err := git.PlainOpen(s.Remotes[repo])
	if err != nil {
		return false
	}
	contents := func(sha string) (string, bool) {
		c, err := r.CommitObject(plumbing.NewHash(sha))
		if err != nil {
			return "", false
		}
		f, err := c.File(path)
		if err != nil {
			return "", false
		}
		text, err := f.Contents()
		return text, err == nil
	}
	before, had := contents(from)
	after, has := contents(to)
	if !had || !has {
		return had != has
	}
	return gitops.LinesTouched(before, after).Near(line, diffContext)
}

// diffContext is the lines of context GitHub shows around a change: a
// thread becomes outdated when a push changes the lines it shows.
const diffContext = 3

// headMoved marks outdated the threads whose lines a push changed, as
// GitHub does; a change elsewhere in the file leaves them current.
func (s *Server) headMoved(repo string, p *pr, sha string) {
	for _, t := range p.threads {
		if !t.outdated && s.linesChanged(repo, t.sha, sha, t.path, t.line) {
			t.outdated = true
		}
	}
}

// graphql answers POST /graphql: the query is validated against GitHub's
// schema first; an invalid one is answered as GitHub answers it (200 with
// errors) and kept as a violation.
func (s *Server) graphql(w http.ResponseWriter, r *http.Request) int {
	var in struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		return s.errorJSON(w, http.StatusBadRequest, "Problems parsing JSON")
	}
	doc, err := ValidateGraphQL(in.Query, in.Variables)
	if err != nil {
		s.violation(fmt.Errorf("GraphQL document not valid against GitHub's schema: %v\n%s", err, in.Query))
		var list gqlerror.List
		if e, ok := err.(gqlerror.List); ok {
			list = e
		} else {
			list = gqlerror.List{gqlerror.Errorf("%s", err)}
		}
		return s.writeGraphQL(w, map[string]any{"errors": list})
	}
	op := doc.Operations[0]
	vars, _ := validator.VariableValues(mustSchema(), op, in.Variables)
	s.graphqlCost++
	root := s.queryRoot()
	if op.Operation == ast.Mutation {
		root = s.mutationRoot()
		for _, sel := range op.SelectionSet {
			if f, ok := sel.(*ast.Field); ok {
				s.gql.Mutations[f.Name]++
			}
		}
	} else {
		s.gql.Queries++
		s.gql.Points++ // rateLimitNode's cost: 1 a query
	}
	s.gqlErrors = nil
	data := execute(root, op.SelectionSet, vars)
	answer := map[string]any{"data": data}
	if len(s.gqlErrors) > 0 {
		answer["errors"] = s.gqlErrors
	}
	return s.writeGraphQL(w, answer)
}

// gqlError adds an error to the answer being built, in GitHub's shape.
func (s *Server) gqlError(kind, msg, field string) {
	s.gqlErrors = append(s.gqlErrors, map[string]any{"type": kind, "message": msg, "path": []any{field}})
}

func mustSchema() *ast.Schema { sc, _ := GraphQLSchema(); return sc }

func (s *Server) writeGraphQL(w http.ResponseWriter, v any) int {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	json.NewEncoder(w).Encode(v)
	return http.StatusOK
}

// resolver is a field with arguments.
type resolver func(args map[string]any) any

// execute walks a selection set over a tree of maps, lists and resolvers.
func execute(val any, set ast.SelectionSet, vars map[string]any) any {
	switch v := val.(type) {
	case map[string]any:
		out := map[string]any{}
		for _, sel := range set {
			switch f := sel.(type) {
			case *ast.Field:
				key := f.Alias
				if key == "" {
					key = f.Name
				}
				x := v[f.Name]
				if fn, ok := x.(resolver); ok {
					x = fn(f.ArgumentMap(vars))
				}
				if len(f.SelectionSet) > 0 {
					x = execute(x, f.SelectionSet, vars)
				}
				out[key] = x
			case *ast.InlineFragment:
				for k, x := range execute(v, f.SelectionSet, vars).(map[string]any) {
					out[k] = x
				}
			case *ast.FragmentSpread:
				for k, x := range execute(v, f.Definition.SelectionSet, vars).(map[string]any) {
					out[k] = x
				}
			}
		}
		return out
	case []map[string]any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = execute(x, set, vars)
		}
		return out
	default:
		return val
	}
}

func (s *Server) rateLimitNode() map[string]any {
	return map[string]any{"cost": 1, "remaining": 5000 - s.graphqlCost, "limit": 5000, "used": s.graphqlCost,
		"resetAt": stamp(s.resetAt), "nodeCount": 0}
}

func (s *Server) queryRoot() map[string]any {
	return map[string]any{
		"rateLimit": s.rateLimitNode(),
		"repository": resolver(func(a map[string]any) any {
			repo := fmt.Sprint(a["owner"]) + "/" + fmt.Sprint(a["name"])
			if _, ok := s.Remotes[repo]; !ok && len(s.prs[repo]) == 0 {
				return nil
			}
			return map[string]any{"pullRequest": resolver(func(a map[string]any) any {
				p := s.find(repo, fmt.Sprint(a["number"]))
				if p == nil {
					return nil
				}
				return s.prNode(repo, p)
			})}
		}),
	}
}

func (s *Server) prNode(repo string, p *pr) map[string]any {
	return map[string]any{
		"number": p.Number,
		"reviewThreads": resolver(func(a map[string]any) any {
			nodes := make([]map[string]any, 0, len(p.threads))
			for _, t := range p.threads {
				nodes = append(nodes, s.threadNode(repo, p, t))
			}
			return connection(nodes, a)
		}),
		"reviews": resolver(func(a map[string]any) any {
			nodes := make([]map[string]any, 0, len(p.reviews))
			for _, r := range p.reviews {
				user, _ := r["user"].(map[string]any)
				nodes = append(nodes, map[string]any{"id": r["node_id"], "databaseId": r["id"], "state": r["state"],
					"body": r["body"], "author": actorNode(fmt.Sprint(user["login"])), "authorAssociation": r["author_association"],
					"commit": map[string]any{"oid": r["commit_id"]}, "submittedAt": r["submitted_at"]})
			}
			return connection(nodes, a)
		}),
	}
}

func (s *Server) threadNode(repo string, p *pr, t *thread) map[string]any {
	var line, start any = t.line, nil
	if t.startLine > 0 && t.startLine < t.line {
		start = t.startLine
	}
	if t.outdated {
		line, start = nil, nil // GitHub has no current line for an outdated thread
	}
	return map[string]any{
		"id": t.id, "isResolved": t.resolved, "isOutdated": t.outdated, "path": t.path, "line": line,
		"startLine": start, "diffSide": "RIGHT",
		"originalLine": t.line,
		"comments": resolver(func(a map[string]any) any {
			nodes := make([]map[string]any, 0, len(t.comments))
			for _, c := range t.comments {
				nodes = append(nodes, map[string]any{"id": nodeID("PullRequestReviewComment", c.id), "databaseId": c.id,
					"author": actorNode(c.login), "authorAssociation": s.association(c.login),
					"body": c.body, "url": webBase + "comment/" + strconv.FormatInt(c.id, 10),
					"createdAt": stamp(c.at)})
			}
			return connection(nodes, a)
		}),
	}
}

// actorNode is an author as GitHub's GraphQL API gives it: an app's bot
// is a Bot whose login has no "[bot]" (the REST API's coderabbitai[bot]
// is coderabbitai here).
func actorNode(login string) map[string]any {
	if name, ok := strings.CutSuffix(login, "[bot]"); ok {
		return map[string]any{"login": name, "__typename": "Bot"}
	}
	return map[string]any{"login": login, "__typename": "User"}
}

// connection pages nodes by first/after or last/before, with cursors that
// are the nodes' positions.
func connection(nodes []map[string]any, a map[string]any) map[string]any {
	from, to := 0, len(nodes)
	if c, ok := a["after"].(string); ok && c != "" {
		from = min(cursorPos(c)+1, len(nodes))
	}
	if c, ok := a["before"].(string); ok && c != "" {
		to = max(min(cursorPos(c), to), from)
	}
	if n, ok := intArg(a["first"]); ok {
		to = min(to, from+n)
	}
	if n, ok := intArg(a["last"]); ok {
		from = max(from, to-n)
	}
	page := nodes[from:to]
	end := ""
	if len(page) > 0 {
		end = cursor(to - 1)
	}
	start := ""
	if len(page) > 0 {
		start = cursor(from)
	}
	return map[string]any{"nodes": page, "totalCount": len(nodes),
		"pageInfo": map[string]any{"hasNextPage": to < len(nodes), "hasPreviousPage": from > 0, "endCursor": end, "startCursor": start}}
}

func cursor(i int) string {
	return base64.StdEncoding.EncodeToString([]byte("cursor:" + strconv.Itoa(i)))
}

func cursorPos(c string) int {
	b, err := base64.StdEncoding.DecodeString(c)
	if err != nil || len(b) < 7 {
		return -1
	}
	n, err := strconv.Atoi(string(b[7:]))
	if err != nil {
		return -1
	}
	return n
}

func intArg(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		return int(n), true
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil
	}
	return 0, false
}

// findThread finds a thread by node ID in any PR.
func (s *Server) findThread(id string) (*pr, *thread) {
	for _, list := range s.prs {
		for _, p := range list {
			for _, t := range p.threads {
				if t.id == id {
					return p, t
				}
			}
		}
	}
	return nil, nil
}

func (s *Server) mutationRoot() map[string]any {
	input := func(a map[string]any) map[string]any { m, _ := a["input"].(map[string]any); return m }
	return map[string]any{
		"rateLimit": s.rateLimitNode(),
		"addPullRequestReviewThreadReply": resolver(func(a map[string]any) any {
			in := input(a)
			_, t := s.findThread(fmt.Sprint(in["pullRequestReviewThreadId"]))
			if t == nil {
				return nil
			}
			s.nextID++
			t.comments = append(t.comments, threadComment{id: s.nextID, login: s.Login, body: fmt.Sprint(in["body"]), at: time.Now()})
			return map[string]any{"clientMutationId": in["clientMutationId"],
				"comment": map[string]any{"id": nodeID("PullRequestReviewComment", s.nextID), "databaseId": s.nextID, "body": in["body"]}}
		}),
		"deletePullRequestReviewComment": resolver(func(a map[string]any) any {
			in := input(a)
			id := fmt.Sprint(in["id"])
			for _, list := range s.prs {
				for _, p := range list {
					for _, t := range p.threads {
						for i, c := range t.comments {
							if nodeID("PullRequestReviewComment", c.id) != id {
								continue
							}
							if c.login != s.Login {
								s.gqlError("FORBIDDEN", "Resource not accessible by integration", "deletePullRequestReviewComment")
								return nil
							}
							t.comments = append(t.comments[:i:i], t.comments[i+1:]...)
							p.comments = slices.DeleteFunc(p.comments, func(rc map[string]any) bool { return rc["id"] == c.id })
							return map[string]any{"clientMutationId": in["clientMutationId"], "pullRequestReviewComment": nil}
						}
					}
				}
			}
			s.gqlError("NOT_FOUND", "Could not resolve to a node with the global id of '"+id+"'", "deletePullRequestReviewComment")
			return nil
		}),
		"resolveReviewThread": resolver(func(a map[string]any) any {
			in := input(a)
			_, t := s.findThread(fmt.Sprint(in["threadId"]))
			if t == nil {
				return nil
			}
			t.resolved = true
			return map[string]any{"clientMutationId": in["clientMutationId"],
				"thread": map[string]any{"id": t.id, "isResolved": true, "isOutdated": t.outdated, "path": t.path}}
		}),
	}
}

// ReviewedHead reports whether the scripted reviewer has reviewed the
// pull request's current head, so that a test can let the review land
// before wo polls and count wo's requests exactly.
func (s *Server) ReviewedHead(repo string, number int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.find(repo, strconv.Itoa(number))
	return p != nil && p.reviewedSHA != "" && p.reviewedSHA == s.headSHA(repo, p.Head)
}
