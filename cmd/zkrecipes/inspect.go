package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path"
	"time"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
)

// inspected is one lock node as inspect prints it.
type inspected struct {
	Node    string  `json:"node"`
	Data    string  `json:"data"`
	Age     float64 `json:"age_seconds"`
	Token   int64   `json:"fencing_token"`
	Session string  `json:"session"`
}

type inspection struct {
	Path    string      `json:"path"`
	Holder  *inspected  `json:"holder"`
	Waiters []inspected `json:"waiters"`
}

func inspectCommand(g globals, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("inspect: want exactly one PATH, got %d", len(pos))
	}
	if err := recipes.ValidatePath(pos[0]); err != nil {
		return usagef("inspect: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), g.sessionTimeout+10*time.Second)
	defer cancel()
	sess, err := connect(ctx, g)
	if err != nil {
		return err
	}
	defer sess.Close()
	m, err := locks.NewMutex(sess, pos[0])
	if err != nil {
		return usagef("inspect: %v", err)
	}
	ps, err := m.Participants(ctx)
	if err != nil {
		return err
	}
	in := inspection{Path: pos[0], Waiters: []inspected{}}
	now := time.Now()
	for i, p := range ps {
		n := inspected{
			Node:    path.Base(p.Path),
			Data:    string(p.Data),
			Age:     now.Sub(p.Created).Seconds(),
			Token:   p.Token,
			Session: fmt.Sprintf("%#x", p.Session),
		}
		if i == 0 {
			in.Holder = &n
		} else {
			in.Waiters = append(in.Waiters, n)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(in)
	}
	if in.Holder == nil {
		fmt.Fprintf(stdout, "%s: free\n", in.Path)
		return nil
	}
	fmt.Fprintf(stdout, "%s: held by %s, queued %.1fs ago (fencing token %d)\n  holder  %s\n",
		in.Path, dataLabel([]byte(in.Holder.Data)), in.Holder.Age, in.Holder.Token, in.Holder.Node)
	for i, w := range in.Waiters {
		fmt.Fprintf(stdout, "  waiter %d  %s, waiting %.1fs  %s\n", i+1, dataLabel([]byte(w.Data)), w.Age, w.Node)
	}
	return nil
}
