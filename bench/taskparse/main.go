// Command taskparse measures the task parser against a model: it parses a
// set of 44 task messages of all three types (fresh, mutation, bug fix;
// cases.json) and prints the type accuracy and the requirement recall,
// the figures behind seed 002's targets (">90% classification, >80%
// correct markers").
//
// The model is the api agent's of the workspace's ralph.toml
// ([agents.api]: provider, base_url, api_key_env, model):
//
//	go run ./bench/taskparse -C path/to/workspace [-v]
//
// With -local it scores the local classifier instead, the guess a template
// records when no model splits the task ("Type: pending (likely fresh)").
//
// Its test runs the same evaluation against the fake model servers of
// internal/testutil, scoring whatever they answer.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/ralph-harness/ralph/internal/agent/api"
	"github.com/ralph-harness/ralph/internal/agent/registry"
	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/task"
)

func main() {
	dir := flag.String("C", ".", "workspace whose ralph.toml names the model")
	local := flag.Bool("local", false, "score the local classifier (no model), the template's guess")
	verbose := flag.Bool("v", false, "list every wrong type and missed requirement")
	flag.Parse()
	if *local {
		cases, err := Cases()
		if err != nil {
			fmt.Fprintln(os.Stderr, "taskparse:", err)
			os.Exit(1)
		}
		Classified(cases).Print(os.Stdout, *verbose)
		return
	}
	if err := run(*dir, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "taskparse:", err)
		os.Exit(1)
	}
}

func run(dir string, verbose bool) error {
	cfg, err := config.Load(dir)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	m, err := api.NewModel(registry.APIConfig(cfg, cfg.Agents["api"], registry.Flags{}), logger)
	if err != nil {
		return fmt.Errorf("no model: %w", err)
	}
	cases, err := Cases()
	if err != nil {
		return err
	}
	s, err := Evaluate(context.Background(), &task.Parser{Model: m, Logger: logger}, cases)
	if err != nil {
		return err
	}
	s.Print(os.Stdout, verbose)
	return nil
}
