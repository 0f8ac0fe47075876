-- A trigram full-text index of the events' text, tool and data, so that
-- a substring search answers from the index instead of scanning the
-- table. External content: the index holds no copy of the text.
CREATE VIRTUAL TABLE events_fts USING fts5(text, tool, data, content = 'events', content_rowid = 'id', tokenize = 'trigram');

INSERT INTO events_fts (events_fts) VALUES ('rebuild');

CREATE TRIGGER events_fts_insert AFTER INSERT ON events BEGIN
	INSERT INTO events_fts (rowid, text, tool, data) VALUES (new.id, new.text, new.tool, new.data);
END;

CREATE TRIGGER events_fts_delete AFTER DELETE ON events BEGIN
	INSERT INTO events_fts (events_fts, rowid, text, tool, data) VALUES ('delete', old.id, old.text, old.tool, old.data);
END;

CREATE TRIGGER events_fts_update AFTER UPDATE ON events BEGIN
	INSERT INTO events_fts (events_fts, rowid, text, tool, data) VALUES ('delete', old.id, old.text, old.tool, old.data);
	INSERT INTO events_fts (rowid, text, tool, data) VALUES (new.id, new.text, new.tool, new.data);
END;
