-- The index of metadata (migration 4's meta_values) is written by the
-- store's statements, no longer by triggers. A trigger parsed the whole
-- metadata with json_each in a sub-program of every INSERT and UPDATE of a
-- conversation's row: in a batch of the gateway's recordings, a sixth of
-- what storing an exchange cost. The store now inserts the members it has
-- already read, and rewrites them only when the metadata changes.
-- Deleting a conversation still takes its rows with it (trigger
-- meta_values_removed, kept).

DROP TRIGGER IF EXISTS meta_values_added;
DROP TRIGGER IF EXISTS meta_values_changed;
