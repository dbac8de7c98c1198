package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tcarangodb "github.com/testcontainers/testcontainers-go/modules/arangodb"

	"github.com/wo-runner/wo/arango"
	"github.com/wo-runner/wo/store"
	"github.com/wo-runner/wo/store/storetest"
)

// The ArangoDB conformance run. It needs a real ArangoDB:
//
//   - WO_TEST_ARANGO_URL (arangodb+http://host:8529 or http://host:8529),
//     with WO_TEST_ARANGO_DATABASE (default _system), WO_TEST_ARANGO_USER
//     (default root) and WO_TEST_ARANGO_PASSWORD; or
//   - a Docker daemon, in which case testcontainers starts arangodb:3.11.
//
// Without either the tests skip and say why. Set WO_REQUIRE_ARANGO=1 in a CI
// that has ArangoDB to turn that skip into a failure.

// arangoTarget is where the conformance run connects.
type arangoTarget struct {
	URL, Database, User, Password string
}

var (
	targetOnce sync.Once
	target     *arangoTarget
	targetWhy  string // why there is no target
	container  *tcarangodb.Container
)

func arangoFor(t *testing.T) arangoTarget {
	t.Helper()
	targetOnce.Do(findArango)
	if target == nil {
		msg := "ArangoDB conformance not run: " + targetWhy
		if os.Getenv("WO_REQUIRE_ARANGO") != "" {
			t.Fatal(msg + " (WO_REQUIRE_ARANGO is set)")
		}
		t.Skip(msg)
	}
	return *target
}

func findArango() {
	if u := os.Getenv("WO_TEST_ARANGO_URL"); u != "" {
		target = &arangoTarget{
			URL:      u,
			Database: envOr("WO_TEST_ARANGO_DATABASE", "_system"),
			User:     envOr("WO_TEST_ARANGO_USER", "root"),
			Password: os.Getenv("WO_TEST_ARANGO_PASSWORD"),
		}
		return
	}
	if why := dockerUnavailable(); why != "" {
		targetWhy = "WO_TEST_ARANGO_URL is not set and testcontainers cannot start one: " + why
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const password = "wo-conformance"
	c, err := tcarangodb.Run(ctx, "arangodb:3.11.5", tcarangodb.WithRootPassword(password))
	if err != nil {
		targetWhy = "starting arangodb:3.11.5 with testcontainers failed: " + err.Error()
		return
	}
	container = c
	endpoint, err := c.HTTPEndpoint(ctx)
	if err != nil {
		targetWhy = "reading the container's endpoint: " + err.Error()
		return
	}
	target = &arangoTarget{URL: endpoint, Database: "_system", User: "root", Password: password}
}

// dockerUnavailable says why no Docker daemon can be used, or "".
func dockerUnavailable() (why string) {
	defer func() {
		if r := recover(); r != nil {
			why = fmt.Sprintf("no Docker daemon (%v)", r)
		}
	}()
	provider, err := testcontainers.ProviderDocker.GetProvider()
	if err != nil {
		return "no Docker daemon: " + err.Error()
	}
	defer provider.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := provider.Health(ctx); err != nil {
		return "no Docker daemon: " + err.Error()
	}
	return ""
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// arangoLocator is what a worker process needs to open the same store; the
// password travels in the environment, not in the locator.
type arangoLocator struct {
	URL, Database, User, Collection string
}

func openArango(loc arangoLocator, password string) (store.Store, error) {
	return arango.Open(context.Background(), arango.Config{
		URL: loc.URL, Database: loc.Database, User: loc.User, Password: password, Collection: loc.Collection,
	})
}

func openArangoWorker(locator string) (store.Store, error) {
	var loc arangoLocator
	if err := json.Unmarshal([]byte(locator), &loc); err != nil {
		return nil, err
	}
	return openArango(loc, os.Getenv("WO_TEST_ARANGO_PASSWORD"))
}

func TestArangoConformance(t *testing.T) {
	tgt := arangoFor(t)
	t.Setenv("WO_TEST_ARANGO_PASSWORD", tgt.Password) // for the worker processes
	storetest.Run(t, func(t *testing.T) (store.Store, string) {
		// Each test gets its own collections, created by wo init's code path.
		var b [4]byte
		rand.Read(b[:])
		loc := arangoLocator{URL: tgt.URL, Database: tgt.Database, User: tgt.User, Collection: "wo_conf_" + hex.EncodeToString(b[:]) + "_tasks"}
		s, err := openArango(loc, tgt.Password)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Init(context.Background()); err != nil {
			t.Fatal(err)
		}
		locator, _ := json.Marshal(loc)
		return s, string(locator)
	})
}
