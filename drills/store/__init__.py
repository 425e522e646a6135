"""The review store: the repository over one SQLite file (``repository``), its schema and migrations
(``schema``), times and days (``clock``), which files may be a store (``files``), waiting for a lock
(``lock``), and the whole-store check (``integrity``)."""
