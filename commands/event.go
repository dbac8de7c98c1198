package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wo-runner/wo/intake"
	"github.com/wo-runner/wo/store"
)

func newEventCommand(f *Factory) *cli.Command { return eventCommand(f, runEvent) }

// eventOptions are what wo event is asked.
type eventOptions struct {
	Store   StoreConfig
	Key     string
	Kind    string
	Message string
}

func eventCommand(f *Factory, run func(context.Context, *Factory, *eventOptions) (result, error)) *cli.Command {
	return &cli.Command{
		Name:      "event",
		Usage:     "record a formation event on a task's timeline: a question (clarify) or progress",
		ArgsUsage: "KEY clarify|plan_progress",
		Description: `While a task is being formed, its planner may ask the person a question
(clarify) or tell them how far it got (plan_progress). wo event writes the
event onto the task's timeline first, so that what the person was shown is
always on record; wo log and wo status show it.`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "message", Aliases: []string{"m"}, Required: true, Usage: "what the person is asked or told"},
		),
		Action: f.action(func(c *cli.Context) (result, error) {
			opts, err := eventOptionsFrom(c, f)
			if err != nil {
				return result{}, err
			}
			return run(c.Context, f, opts)
		}),
	}
}

// eventOptionsFrom reads the arguments and flags.
func eventOptionsFrom(c *cli.Context, f *Factory) (*eventOptions, error) {
	if c.Args().Len() != 2 {
		return nil, usagef(fmt.Sprintf("wo event takes a task KEY and a kind (%s)", strings.Join(intake.EventKinds, " or ")))
	}
	return &eventOptions{Store: f.storeConfig(c), Key: c.Args().Get(0), Kind: c.Args().Get(1), Message: c.String("message")}, nil
}

func runEvent(ctx context.Context, f *Factory, o *eventOptions) (result, error) {
	err := f.useStore(ctx, o.Store, func(s store.Store) error {
		return newIntake(s).RecordEvent(ctx, o.Key, o.Kind, o.Message, time.Now().UTC())
	})
	var bad *intake.BadRequestError
	if errors.As(err, &bad) {
		return result{}, usagef(bad.Error())
	}
	if err != nil {
		return result{}, err
	}
	data := eventData{Key: o.Key, Event: o.Kind, Message: o.Message}
	return result{data: data, human: func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%s: %s recorded\n", o.Key, o.Kind)
		return err
	}}, nil
}

// eventData is wo event's --json data: the event recorded.
type eventData struct {
	Key     string `json:"key"`
	Event   string `json:"event"`
	Message string `json:"message"`
}
