"""The cache's two errors: a required entry that is missing or stale, and a file that is not an entry."""


class CacheMissError(RuntimeError):
    """A required cache entry is missing or stale; the message names the command that creates it."""


class EntryError(ValueError):
    """A file under the cache that cannot be read as an entry; the message names the file and the field."""
