-- Parallel spec runs (ralph specs run --parallel N): each spec runs in a
-- git worktree on its own branch and lands through the merge queue.
-- worktree and branch say where a spec runs; landed_commit is the commit
-- it landed as; conflicts counts landings sent back to the implementer.
ALTER TABLE specs ADD COLUMN worktree TEXT NOT NULL DEFAULT '';
ALTER TABLE specs ADD COLUMN branch TEXT NOT NULL DEFAULT '';
ALTER TABLE specs ADD COLUMN landed_commit TEXT NOT NULL DEFAULT '';
ALTER TABLE specs ADD COLUMN conflicts INTEGER NOT NULL DEFAULT 0;
-- Every agent call of the spec pipeline (and every landing), with the spec
-- and the worktree it ran in, so status, log and tests can tell which ran
-- when and alongside which.
CREATE TABLE spec_calls (
	id         INTEGER PRIMARY KEY,
	spec_id    TEXT NOT NULL,
	worktree   TEXT NOT NULL DEFAULT '',
	role       TEXT NOT NULL,
	attempt    INTEGER NOT NULL,
	started_at TEXT NOT NULL,
	ended_at   TEXT,
	outcome    TEXT NOT NULL DEFAULT '',
	cost_usd   REAL NOT NULL DEFAULT 0
);
CREATE INDEX spec_calls_spec ON spec_calls (spec_id, id);
