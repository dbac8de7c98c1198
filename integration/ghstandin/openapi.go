package ghstandin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Contract is GitHub's OpenAPI description of the REST API (a vendored
// subset: integration/testdata/openapi) applied to the stand-in's traffic
// with kin-openapi, so that the double cannot drift from what GitHub
// documents. It checks wo's requests (path, method, query, body) and the
// stand-in's answers (status, documented headers, body schema).
type Contract struct {
	doc    *openapi3.T
	router routers.Router
	opts   *openapi3filter.Options
	// basicError is GitHub's error body, for answers that any operation
	// may give but not every operation lists (401, 403, 404, 429, 5xx).
	basicError *openapi3.Schema

	mu      sync.Mutex
	covered map[string]map[int]int // operationId → status → answers
}

// LoadContract reads and validates an OpenAPI description.
func LoadContract(path string) (*Contract, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading the OpenAPI description %s: %w", path, err)
	}
	// GitHub's description uses formats of its own (repo.nwo, uri-template);
	// they are documentation, not something kin-openapi can check.
	if err := doc.Validate(loader.Context, openapi3.DisableSchemaFormatValidation(), openapi3.DisableExamplesValidation()); err != nil {
		return nil, fmt.Errorf("the OpenAPI description %s is not valid: %w", path, err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("routing %s: %w", path, err)
	}
	c := &Contract{doc: doc, router: router, covered: map[string]map[int]int{}}
	c.opts = &openapi3filter.Options{
		MultiError:         true,
		AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		SchemaValidationOptions: []openapi3.SchemaValidationOption{
			openapi3.WithStringFormatValidator("uri", uriFormat{}),
			openapi3.DisableSchemaErrorDetails(), // the field at fault, not the whole schema
		},
	}
	if ref, ok := doc.Components.Schemas["basic-error"]; ok && ref.Value != nil {
		c.basicError = ref.Value
	}
	return c, nil
}

// Doc is the description the contract checks against.
func (c *Contract) Doc() *openapi3.T { return c.doc }

// uriFormat is JSON Schema's "uri": an absolute URI.
type uriFormat struct{}

func (uriFormat) Validate(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return fmt.Errorf("not an absolute URI: %q", s)
	}
	return nil
}

// route finds the operation for a request as it would reach
// api.github.com: GitHub Enterprise's /api/v3 prefix and the stand-in's
// loopback address are not part of the description.
func (c *Contract) route(r *http.Request, body []byte) (*openapi3filter.RequestValidationInput, error) {
	u := *r.URL
	u.Scheme, u.Host = "https", "api.github.com"
	u.Path = strings.TrimPrefix(u.Path, "/api/v3")
	u.RawPath = ""
	req := r.Clone(context.Background())
	req.URL, req.Host, req.RequestURI = &u, u.Host, ""
	req.Body = io.NopCloser(bytes.NewReader(body))
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s is not an operation in GitHub's description (%v)", r.Method, u.Path, err)
	}
	return &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: c.opts}, nil
}

// CheckRequest says whether GitHub documents the request: its operation,
// path parameters, query parameters and JSON body.
func (c *Contract) CheckRequest(r *http.Request, body []byte) error {
	in, err := c.route(r, body)
	if err != nil {
		return err
	}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		return fmt.Errorf("request %s (%s): %w", in.Route.Operation.OperationID, describe(r), compact(err))
	}
	return nil
}

// CheckResponse says whether GitHub documents the answer to the request:
// for a status the operation lists, the documented headers and the body
// schema; for an error any operation may give (401, 403, 404, 429, 5xx),
// GitHub's basic-error body; any other status is not documented.
func (c *Contract) CheckResponse(r *http.Request, reqBody []byte, status int, header http.Header, body []byte) error {
	in, err := c.route(r, reqBody)
	if err != nil {
		return err
	}
	op := in.Route.Operation
	c.mu.Lock()
	if c.covered[op.OperationID] == nil {
		c.covered[op.OperationID] = map[int]int{}
	}
	c.covered[op.OperationID][status]++
	c.mu.Unlock()
	fail := func(err error) error {
		return fmt.Errorf("response %d to %s (%s): %w", status, op.OperationID, describe(r), compact(err))
	}
	if status == http.StatusNotModified {
		if len(body) > 0 {
			return fail(errors.New("a 304 has no body"))
		}
		if header.Get("ETag") == "" {
			return fail(errors.New("a 304 repeats the ETag"))
		}
		return nil
	}
	if op.Responses.Status(status) == nil && op.Responses.Default() == nil {
		if !anyOperationMay(status) {
			return fail(fmt.Errorf("status %d is not documented for %s", status, op.OperationID))
		}
		if c.basicError == nil {
			return nil
		}
		if !strings.HasPrefix(header.Get("Content-Type"), "application/json") {
			return fail(fmt.Errorf("Content-Type %q, want application/json", header.Get("Content-Type")))
		}
		v, err := decodeJSON(body)
		if err != nil {
			return fail(err)
		}
		if err := c.basicError.VisitJSON(v, openapi3.MultiErrors(), openapi3.DisableSchemaErrorDetails()); err != nil {
			return fail(fmt.Errorf("not GitHub's basic-error: %w", err))
		}
		return nil
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header, Options: c.opts}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return fail(err)
	}
	return nil
}

// anyOperationMay lists the answers GitHub's REST documentation allows on
// every operation, whether or not the operation's description names them:
// bad credentials, rate limits, a resource that is not there, server errors.
func anyOperationMay(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusTooManyRequests:
		return true
	}
	return status >= 500
}

func decodeJSON(body []byte) (any, error) {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("the body is not JSON: %w", err)
	}
	return v, nil
}

// compact shortens kin-openapi's list of schema errors for people: the
// same fault in every item of a list is said once, with the index as [*].
func compact(err error) error {
	parts := strings.Split(err.Error(), " | ")
	if len(parts) < 2 {
		return err
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range parts {
		p = arrayIndex.ReplaceAllString(p, "/[*]$1")
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return &compactError{msg: strings.Join(out, " | "), err: err}
}

var arrayIndex = regexp.MustCompile(`/\d+(/|")`)

type compactError struct {
	msg string
	err error
}

func (e *compactError) Error() string { return e.msg }
func (e *compactError) Unwrap() error { return e.err }

func describe(r *http.Request) string {
	s := r.Method + " " + r.URL.Path
	if r.URL.RawQuery != "" {
		s += "?" + r.URL.RawQuery
	}
	return s
}

// Uncovered lists the operations of the description that saw no answer
// with a 2xx status, and so were not checked on the path that matters.
func (c *Contract) Uncovered() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for path, item := range c.doc.Paths.Map() {
		for method, op := range item.Operations() {
			ok := false
			for status := range c.covered[op.OperationID] {
				ok = ok || (status >= 200 && status < 300)
			}
			if !ok {
				out = append(out, method+" "+path+" ("+op.OperationID+")")
			}
		}
	}
	sort.Strings(out)
	return out
}

// Covered lists, per operationId, the statuses answered and checked,
// as "pulls/get 200×3 304×1".
func (c *Contract) Covered() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for id, statuses := range c.covered {
		var codes []int
		for s := range statuses {
			codes = append(codes, s)
		}
		sort.Ints(codes)
		line := id
		for _, s := range codes {
			line += " " + strconv.Itoa(s) + "×" + strconv.Itoa(statuses[s])
		}
		out = append(out, line)
	}
	sort.Strings(out)
	return out
}
