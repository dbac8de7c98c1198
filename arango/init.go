package arango

// Init: the collections and indexes wo needs, and the check of a cluster's
// sharding.
//
//   - Init is idempotent and safe to run concurrently (store.Store.Init).
//   - It creates what is missing and never alters or drops what exists: a
//     collection of the wrong type is an error that says how to fix it, and
//     indexes are ensured by name (wo_…), built in the background.
//   - A cluster database in which a multi-collection write could commit
//     part way gives a store.Warning: the store is ready, and the message
//     says what can happen and how to avoid it.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/arangodb/go-driver/v2/arangodb"
	"github.com/arangodb/go-driver/v2/arangodb/shared"

	"github.com/wo-runner/wo/store"
)

// Init makes sure the three collections and the indexes behind wo's
// queries exist, and that existing collections have the type wo needs. It
// is idempotent and safe to run concurrently: a collection another wo init
// creates at the same moment is waited for, and indexes are ensured by
// name, built in the background so that writers are not blocked.
//
// On a cluster it checks that a multi-collection write can be atomic: the
// database is OneShard, or the edges and logs collections follow the tasks
// collection's sharding (distributeShardsLike) and it has one shard. Where
// wo creates the collections on a cluster that is not OneShard, it creates
// them that way. Otherwise the store works, and Init returns a
// store.Warning that says what can happen and how to fix it.
func (s *Store) Init(ctx context.Context) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	cluster, oneShard, err := s.deployment(ctx)
	if err != nil {
		return s.mapErr("", err)
	}
	docType, edgeType := arangodb.CollectionTypeDocument, arangodb.CollectionTypeEdge
	one := 1
	want := []struct {
		name    string
		typ     arangodb.CollectionType
		indexes [][]string
	}{
		{s.cols.Tasks, docType, [][]string{{"parent_key"}, {"status"}}},
		// No index of wo's own on the edges: the edge index on _from is
		// what BlockedBy and Update use, and one on type (blocked_by on
		// every edge) would only cost writes.
		{s.cols.Edges, edgeType, nil},
		{s.cols.Logs, docType, [][]string{{"task_key", "created_at"}, {"action", "created_at"}}},
	}
	props := make(map[string]arangodb.CollectionProperties, len(want))
	for _, w := range want {
		create := &arangodb.CreateCollectionPropertiesV2{Type: &w.typ}
		if cluster && !oneShard {
			if w.name == s.cols.Tasks {
				create.NumberOfShards = &one
			} else {
				create.DistributeShardsLike = &s.cols.Tasks
			}
		}
		col, p, err := s.ensureCollection(ctx, w.name, create)
		if err != nil {
			return err
		}
		if p.Type != w.typ {
			return fmt.Errorf("ArangoDB database %s: collection %s is %s, but wo needs %s: rename or drop it (in arangosh: db._drop(%q)) and run wo init again, or pass --collection to use other collections",
				s.database, w.name, typeName(p.Type), typeName(w.typ), w.name)
		}
		props[w.name] = p
		yes := true
		for _, fields := range w.indexes {
			opts := &arangodb.CreatePersistentIndexOptions{Name: "wo_" + strings.Join(fields, "_"), InBackground: &yes}
			_, _, err := col.EnsurePersistentIndex(ctx, fields, opts)
			if shared.IsConflict(err) { // a concurrent wo init made it: ensuring again finds it
				_, _, err = col.EnsurePersistentIndex(ctx, fields, opts)
			}
			if err != nil {
				return s.mapErr("", fmt.Errorf("index on %s(%s): %w", w.name, strings.Join(fields, ", "), err))
			}
		}
	}
	if cluster && !oneShard {
		return s.shardingWarning(props)
	}
	return nil
}

// deployment asks the server whether it is a cluster's coordinator and,
// if so, whether the database is OneShard.
func (s *Store) deployment(ctx context.Context) (cluster, oneShard bool, err error) {
	role, err := s.client.ServerRole(ctx)
	if err != nil {
		return false, false, err
	}
	if role != arangodb.ServerRoleCoordinator {
		return false, false, nil
	}
	info, err := s.db.Info(ctx)
	if err != nil {
		return true, false, err
	}
	return true, info.Sharding == arangodb.DatabaseShardingSingle, nil
}

// shardingWarning says what a cluster database that is not OneShard gives
// up, unless the collections share one shard's placement.
func (s *Store) shardingWarning(props map[string]arangodb.CollectionProperties) error {
	tasks := props[s.cols.Tasks]
	var problems []string
	if tasks.NumberOfShards != 1 { // as the server reports it: its prototype's, when it follows one

		problems = append(problems, fmt.Sprintf("%s has %d shards", s.cols.Tasks, tasks.NumberOfShards))
	}
	for _, name := range []string{s.cols.Edges, s.cols.Logs} {
		p := props[name]
		if p.DistributeShardsLike != s.cols.Tasks && (tasks.DistributeShardsLike == "" || p.DistributeShardsLike != tasks.DistributeShardsLike) {
			problems = append(problems, fmt.Sprintf("%s does not follow the sharding of %s (distributeShardsLike)", name, s.cols.Tasks))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return store.Warning(fmt.Sprintf("ArangoDB database %s is a sharded cluster database, not OneShard, and %s: "+
		"a task and its edges are written in one transaction that can fail part way at commit (wo then removes the tasks it created; an update of dependencies can leave the document and its edges out of step). "+
		"For all-or-nothing writes, use a OneShard database (created with sharding \"single\") or recreate %s with one shard and %s and %s with distributeShardsLike %q",
		s.database, strings.Join(problems, "; "), s.cols.Tasks, s.cols.Edges, s.cols.Logs, s.cols.Tasks))
}

// initRetries bounds the wait for a collection that a concurrent wo init
// created: in a cluster, the coordinator that refused ours with 409 may
// not see it yet and answer 404 for a moment.
const (
	initRetries = 10
	initBackoff = 100 * time.Millisecond
)

// ensureCollection returns the collection and its properties, creating it
// with create when it does not exist.
func (s *Store) ensureCollection(ctx context.Context, name string, create *arangodb.CreateCollectionPropertiesV2) (arangodb.Collection, arangodb.CollectionProperties, error) {
	col, err := s.db.GetCollection(ctx, name, &arangodb.GetCollectionOptions{SkipExistCheck: true})
	if err != nil {
		return nil, arangodb.CollectionProperties{}, err
	}
	created := false
	for attempt := 0; ; attempt++ {
		p, err := col.Properties(ctx)
		if err == nil {
			return col, p, nil
		}
		if !shared.IsNotFound(err) {
			return nil, p, s.mapErr("", fmt.Errorf("collection %s: %w", name, err))
		}
		if !created {
			_, err := s.db.CreateCollectionV2(ctx, name, create)
			if err != nil && !shared.IsConflict(err) {
				return nil, p, s.mapErr("", fmt.Errorf("creating collection %s: %w", name, err))
			}
			created = true // by us or, on a conflict, by a concurrent wo init
			if err == nil {
				continue
			}
		}
		if attempt >= initRetries {
			return nil, p, fmt.Errorf("ArangoDB database %s: collection %s exists (creating it said so) but cannot be read; run wo init again", s.database, name)
		}
		select {
		case <-time.After(initBackoff):
		case <-ctx.Done():
			return nil, p, s.mapErr("", ctx.Err())
		}
	}
}

func typeName(t arangodb.CollectionType) string {
	switch t {
	case arangodb.CollectionTypeEdge:
		return "an edge collection"
	case arangodb.CollectionTypeDocument:
		return "a document collection"
	}
	return fmt.Sprintf("a collection of type %d", t)
}
