-- The tree of the working tree after each iteration (snapshot.SaveIteration),
-- for the dashboard's per-iteration diff; empty for iterations from
-- before, or that recorded none.
ALTER TABLE iterations ADD COLUMN tree TEXT NOT NULL DEFAULT '';
