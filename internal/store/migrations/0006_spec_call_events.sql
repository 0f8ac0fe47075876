-- The agent events a spec's agent call has seen so far: a worker's
-- heartbeat reports them while the call runs.
ALTER TABLE spec_calls ADD COLUMN events INTEGER NOT NULL DEFAULT 0;
