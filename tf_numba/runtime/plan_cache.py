"""The prepared-plan cache: bounded LRU, thread-safe, single-flight, negative entries.

One thread prepares a key while the others wait for it (``waits``); a deterministic
failure (a TfNumbaError from preparing) is kept as a negative entry and re-raised on the
next request (``negative_hits``) instead of preparing again. Waiting uses one Event per
key, which stays set once set, so a waiter that registers just before the preparer
publishes and starts waiting just after cannot miss the wake-up.
"""
import collections
import threading

from ..errors import TfNumbaError


class _Failure:
    __slots__ = ("error",)

    def __init__(self, error):
        self.error = error


class PlanCache:
    def __init__(self, max_entries=128, max_bytes=64 << 20):
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries = collections.OrderedDict()
        self._sizes = {}
        self._inflight = {}
        self._lock = threading.Lock()
        self._counts = collections.Counter()
        self.on_wait = None         # test hook: called after a waiter registers

    def get_or_prepare(self, key, prepare):
        """The value for ``key``; ``prepare()`` runs at most once per key at a time."""
        while True:
            with self._lock:
                found = self._entries.get(key)
                if found is not None:
                    self._entries.move_to_end(key)
                    if type(found) is _Failure:
                        self._counts["negative_hits"] += 1
                        raise found.error
                    self._counts["hits"] += 1
                    return found
                event = self._inflight.get(key)
                if event is None:
                    event = self._inflight[key] = threading.Event()
                    self._counts["misses"] += 1
                    break
                self._counts["waits"] += 1
            if self.on_wait is not None:
                self.on_wait(key)
            event.wait()
        try:
            value = prepare()
        except TfNumbaError as err:
            self._publish(key, _Failure(err), 0)
            raise
        except BaseException:
            with self._lock:
                del self._inflight[key]
            event.set()
            raise
        self._counts["preparations"] += 1
        self._publish(key, value, getattr(value, "nbytes", 0))
        return value

    def _publish(self, key, value, nbytes):
        with self._lock:
            self._entries[key] = value
            self._sizes[key] = nbytes
            self._evict()
            event = self._inflight.pop(key)
        event.set()

    def _evict(self):
        while self._entries and (len(self._entries) > self.max_entries
                                 or sum(self._sizes.values()) > self.max_bytes):
            key, _ = self._entries.popitem(last=False)
            del self._sizes[key]
            self._counts["evictions"] += 1

    def resize(self, max_entries, max_bytes):
        with self._lock:
            self.max_entries, self.max_bytes = max_entries, max_bytes
            self._evict()

    def clear(self):
        with self._lock:
            self._entries.clear()
            self._sizes.clear()

    def stats(self):
        with self._lock:
            return dict(entries=len(self._entries), hits=self._counts["hits"],
                        misses=self._counts["misses"],
                        preparations=self._counts["preparations"],
                        negative_hits=self._counts["negative_hits"],
                        waits=self._counts["waits"], evictions=self._counts["evictions"],
                        bytes=sum(self._sizes.values()))
