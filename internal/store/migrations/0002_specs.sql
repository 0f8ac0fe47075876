-- Spec pipeline counters that survive a crash: how many verifier runs a
-- spec has had, the commit its implementation started from (so the
-- verifier sees the whole change across re-implementations), and the
-- feedback the next implementation attempt must read.
ALTER TABLE specs ADD COLUMN verify_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE specs ADD COLUMN base_commit TEXT NOT NULL DEFAULT '';
ALTER TABLE specs ADD COLUMN feedback TEXT NOT NULL DEFAULT '';
