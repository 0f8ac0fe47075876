-- Events enter the search index in batches, after they are committed,
-- instead of one trigger call each in the transaction that writes them:
-- a small transaction's index segment cost several times the event's
-- own write. events_fts_done holds the highest event id the index
-- holds; a search reads the events after it from the table itself.
CREATE TABLE events_fts_done (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	indexed INTEGER NOT NULL
);
INSERT INTO events_fts_done (id, indexed) VALUES (1, (SELECT COALESCE(MAX(id), 0) FROM events));

DROP TRIGGER events_fts_insert;
DROP TRIGGER events_fts_delete;
DROP TRIGGER events_fts_update;

-- Only an event the index holds is taken out of it.
CREATE TRIGGER events_fts_delete AFTER DELETE ON events
WHEN old.id <= (SELECT indexed FROM events_fts_done) BEGIN
	INSERT INTO events_fts (events_fts, rowid, text, tool, data) VALUES ('delete', old.id, old.text, old.tool, old.data);
END;

CREATE TRIGGER events_fts_update AFTER UPDATE ON events
WHEN old.id <= (SELECT indexed FROM events_fts_done) BEGIN
	INSERT INTO events_fts (events_fts, rowid, text, tool, data) VALUES ('delete', old.id, old.text, old.tool, old.data);
	INSERT INTO events_fts (rowid, text, tool, data) VALUES (new.id, new.text, new.tool, new.data);
END;
