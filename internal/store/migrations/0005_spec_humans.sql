-- The orchestration plan of a spec may hold <Human> markers too: their
-- requests belong to no task (task_id 0, step_key spec:ID:...), so the
-- table loses its foreign key to tasks. SQLite cannot drop a constraint:
-- the table is rebuilt with the same columns and rows.
CREATE TABLE human_interactions_new (
	id          INTEGER PRIMARY KEY,
	task_id     INTEGER NOT NULL DEFAULT 0,     -- 0: the request of a spec
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
INSERT INTO human_interactions_new (id, task_id, step_key, type, prompt, options, status, response, created_at, timeout_at, resolved_at)
	SELECT id, task_id, step_key, type, prompt, options, status, response, created_at, timeout_at, resolved_at FROM human_interactions;
DROP TABLE human_interactions;
ALTER TABLE human_interactions_new RENAME TO human_interactions;
