// Package action holds the actions a work order's steps name, one file
// each, named as the action (create_pr.go holds CreatePR), and their
// contract with the engine that runs them:
//
//   - an Action runs one step through a StepContext, its only way into the
//     run (the engine's side of it is Run, in small parts: TaskView,
//     Environment, Recorder, Connections, Reporter, StackTables), and
//     returns an Outcome: a note for people, the state it leaves, and
//     Facts, what it made, as data, which wo undo (procedure/undo) takes
//     as its proof;
//   - a Planner says what a step would do (--dry-run), a Checker checks its
//     inputs before anything changes, an Adviser adds rules of its own to
//     validation;
//   - the table (Actions, DefaultActions) says of each what it may make,
//     which state it forgets on a rewind and which document fields it
//     reads.
//
// The engine, in package procedure, runs the steps in order and writes the
// state back after each; it implements every part of Run.
package action
