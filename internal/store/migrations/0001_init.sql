-- ralph's run history. Times are RFC 3339 UTC text; costs are US dollars.

CREATE TABLE tasks (
	id            INTEGER PRIMARY KEY,
	number        INTEGER NOT NULL,            -- task-counter.txt value
	message       TEXT    NOT NULL,
	type          TEXT    NOT NULL DEFAULT '',  -- fresh | mutation | bugfix | needs-clarification | pending
	agent         TEXT    NOT NULL DEFAULT '',
	status        TEXT    NOT NULL DEFAULT 'running', -- running | done | interrupted
	reason        TEXT    NOT NULL DEFAULT '',  -- termination reason
	detail        TEXT    NOT NULL DEFAULT '',  -- one-line explanation
	started_at    TEXT    NOT NULL,
	ended_at      TEXT,
	cost_usd      REAL    NOT NULL DEFAULT 0,
	input_tokens  INTEGER NOT NULL DEFAULT 0,
	output_tokens INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE iterations (
	id            INTEGER PRIMARY KEY,
	task_id       INTEGER NOT NULL REFERENCES tasks(id),
	number        INTEGER NOT NULL,
	phase         TEXT    NOT NULL,
	step          TEXT    NOT NULL DEFAULT '',
	started_at    TEXT    NOT NULL,
	ended_at      TEXT,
	outcome       TEXT    NOT NULL DEFAULT '',  -- continue | complete-deferred | gates-failed | completed | timeout | idle | agent-error | rate-limited | interrupted
	tool_calls    INTEGER NOT NULL DEFAULT 0,
	signature     TEXT    NOT NULL DEFAULT '',
	final         TEXT    NOT NULL DEFAULT '',
	cost_usd      REAL    NOT NULL DEFAULT 0,
	input_tokens  INTEGER NOT NULL DEFAULT 0,
	output_tokens INTEGER NOT NULL DEFAULT 0,
	UNIQUE (task_id, number)
);

CREATE TABLE events (
	id        INTEGER PRIMARY KEY,
	task_id   INTEGER NOT NULL REFERENCES tasks(id),
	iteration INTEGER NOT NULL DEFAULT 0,
	at        TEXT    NOT NULL,
	source    TEXT    NOT NULL DEFAULT 'agent', -- agent | harness
	kind      TEXT    NOT NULL,
	tool      TEXT    NOT NULL DEFAULT '',
	text      TEXT    NOT NULL DEFAULT '',
	data      TEXT    NOT NULL DEFAULT ''       -- JSON: tool input, usage, …
);
CREATE INDEX events_task ON events(task_id, id);

CREATE TABLE gate_results (
	id        INTEGER PRIMARY KEY,
	task_id   INTEGER NOT NULL REFERENCES tasks(id),
	iteration INTEGER NOT NULL,
	gate      TEXT    NOT NULL,
	status    TEXT    NOT NULL,                 -- pass | fail | warn
	message   TEXT    NOT NULL DEFAULT '',
	fix       TEXT    NOT NULL DEFAULT '',
	at        TEXT    NOT NULL
);

-- Key/value state shared between processes (stop requests and the like).
CREATE TABLE state (
	key        TEXT PRIMARY KEY,
	value      TEXT NOT NULL,
	updated_at TEXT NOT NULL
);

CREATE TABLE human_interactions (
	id          INTEGER PRIMARY KEY,
	task_id     INTEGER NOT NULL REFERENCES tasks(id),
	step_key    TEXT    NOT NULL DEFAULT '',    -- which plan node asked, so a resume does not ask twice
	type        TEXT    NOT NULL,               -- confirmation | text | select
	prompt      TEXT    NOT NULL,
	options     TEXT    NOT NULL DEFAULT '',    -- JSON array for select
	status      TEXT    NOT NULL DEFAULT 'pending', -- pending | approved | rejected | timeout
	response    TEXT    NOT NULL DEFAULT '',
	created_at  TEXT    NOT NULL,
	timeout_at  TEXT,
	resolved_at TEXT
);

CREATE TABLE snapshots (
	id         INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL,
	commit_sha TEXT    NOT NULL,
	task       INTEGER NOT NULL DEFAULT 0,
	kind       TEXT    NOT NULL,
	message    TEXT    NOT NULL DEFAULT '',
	created_at TEXT    NOT NULL
);

CREATE TABLE steps (
	id         INTEGER PRIMARY KEY,
	task_id    INTEGER NOT NULL REFERENCES tasks(id),
	idx        INTEGER NOT NULL,
	kind       TEXT    NOT NULL,                -- phase | step | human | stop
	phase      TEXT    NOT NULL DEFAULT '',
	name       TEXT    NOT NULL DEFAULT '',
	status     TEXT    NOT NULL DEFAULT 'running', -- running | done | failed | skipped | stopped | rejected
	detail     TEXT    NOT NULL DEFAULT '',
	started_at TEXT    NOT NULL,
	ended_at   TEXT
);

CREATE TABLE stalls (
	id        INTEGER PRIMARY KEY,
	task_id   INTEGER NOT NULL REFERENCES tasks(id),
	iteration INTEGER NOT NULL,
	kind      TEXT    NOT NULL,
	reason    TEXT    NOT NULL,
	evidence  TEXT    NOT NULL DEFAULT '',
	action    TEXT    NOT NULL DEFAULT '',      -- recovered | rolled-back
	at        TEXT    NOT NULL
);

CREATE TABLE specs (
	id            TEXT PRIMARY KEY,             -- the spec's path relative to the specs dir
	state         TEXT NOT NULL,
	plan_attempt  INTEGER NOT NULL DEFAULT 0,
	impl_attempts INTEGER NOT NULL DEFAULT 0,
	last_result   TEXT NOT NULL DEFAULT '',
	cost_usd      REAL NOT NULL DEFAULT 0,
	updated_at    TEXT NOT NULL
);
