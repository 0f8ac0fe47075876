-- Counting one kind of a task's events (the tamper count ralph status,
-- the dashboard and every task's end show) reads only those events, not
-- the task's whole stream.
CREATE INDEX events_task_kind ON events(task_id, kind);
