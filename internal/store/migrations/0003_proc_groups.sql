-- Every process group ralph starts (agents, their tools, gates), recorded
-- when it starts and marked ended when it ends, so a later ralph can end
-- the groups of a ralph that died (kill -9, OOM) while they still run.
-- A group is identified by its id and its leader's start time (clock ticks
-- after boot), so a reused pid is never mistaken for it; token is a random
-- value in the environment of every member. ralph_pid and ralph_start
-- identify the ralph that started it the same way.
CREATE TABLE proc_groups (
	id           INTEGER PRIMARY KEY,
	pgid         INTEGER NOT NULL,
	leader_start INTEGER NOT NULL,
	token        TEXT NOT NULL,
	ralph_pid    INTEGER NOT NULL,
	ralph_start  INTEGER NOT NULL,
	task_id      INTEGER,
	iteration    INTEGER NOT NULL DEFAULT 0,
	argv0        TEXT NOT NULL,
	started_at   TEXT NOT NULL,
	ended_at     TEXT,
	end_note     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX proc_groups_running ON proc_groups (id) WHERE ended_at IS NULL;
