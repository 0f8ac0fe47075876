-- Notifications (internal/notify): who answered a human request and
-- through what, the durable outbox of messages to channels, and the
-- taps and replies refused.
ALTER TABLE human_interactions ADD COLUMN answered_via TEXT NOT NULL DEFAULT ''; -- cli | dashboard | temporal | telegram | slack | …
ALTER TABLE human_interactions ADD COLUMN answered_by  TEXT NOT NULL DEFAULT ''; -- the person, as the channel names them

CREATE TABLE notify_outbox (
	id         INTEGER PRIMARY KEY,
	channel    TEXT    NOT NULL,                 -- telegram | slack | ntfy | webhook
	key        TEXT    NOT NULL,                 -- what the message is about: human:ID, event:ID, cost:TASK:PCT
	request_id INTEGER NOT NULL DEFAULT 0,       -- the human request it asks, 0 for none
	nonce      TEXT    NOT NULL DEFAULT '',      -- unguessable token its buttons carry
	body       TEXT    NOT NULL,                 -- JSON: the message as rendered
	status     TEXT    NOT NULL DEFAULT 'queued', -- queued | sent | closed
	attempts   INTEGER NOT NULL DEFAULT 0,
	next_at    TEXT    NOT NULL,
	ref        TEXT    NOT NULL DEFAULT '',      -- the channel's id of the sent message
	last_error TEXT    NOT NULL DEFAULT '',
	created_at TEXT    NOT NULL,
	sent_at    TEXT,
	UNIQUE (channel, key)
);
CREATE INDEX notify_outbox_due ON notify_outbox(status, next_at);
CREATE INDEX notify_outbox_nonce ON notify_outbox(nonce);

CREATE TABLE notify_refusals (
	id         INTEGER PRIMARY KEY,
	channel    TEXT    NOT NULL,
	who        TEXT    NOT NULL,
	request_id INTEGER NOT NULL DEFAULT 0,
	at         TEXT    NOT NULL
);
