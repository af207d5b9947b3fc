"""Unfinished jobs by queue and state, kept up to date from record changes.

The service reports every record it changed (the same set it saves); the tally
moves the record's contribution from its old (queue, state) to its new one.
A scrape reads the sums and never walks the job list.
"""

from __future__ import annotations

from collections import Counter

OTHER_USERS = "_other"


class JobTally:
    def __init__(self, *, per_user: bool = False, max_users: int = 100) -> None:
        self.per_user = per_user
        self.max_users = max_users
        self.counts: Counter[tuple[str, str]] = Counter()  # (queue, state letter)
        self.backlog: Counter[str] = Counter()  # queue -> queued node-seconds
        self.by_user: Counter[tuple[str, str]] = Counter()  # (user label, state letter)
        self._users: set[str] = set()
        # seq -> (queue, letter, queued node-seconds, user label) as last counted
        self._seen: dict[int, tuple[str, str, int, str]] = {}

    def user_label(self, user: str) -> str:
        """The user's own label while fewer than ``max_users`` have one, else ``_other``."""
        if user in self._users:
            return user
        if len(self._users) < self.max_users:
            self._users.add(user)
            return user
        return OTHER_USERS

    def observe(self, seq: int, queue: str, letter: str, nodesec: int, user: str) -> None:
        """Record the current state of job ``seq``; F (finished) removes it."""
        old = self._seen.pop(seq, None)
        if old is not None:
            oq, ol, ons, ou = old
            self.counts[(oq, ol)] -= 1
            if ol == "Q":
                self.backlog[oq] -= ons
            if self.per_user:
                self.by_user[(ou, ol)] -= 1
        if letter == "F":
            return
        label = self.user_label(user) if self.per_user else ""
        self._seen[seq] = (queue, letter, nodesec, label)
        self.counts[(queue, letter)] += 1
        if letter == "Q":
            self.backlog[queue] += nodesec
        if self.per_user:
            self.by_user[(label, letter)] += 1

    def clear(self) -> None:
        """Forget every job (the service counts them again after rebuilding its state)."""
        self.counts.clear()
        self.backlog.clear()
        self.by_user.clear()
        self._seen.clear()

    def count(self, queue: str, letter: str) -> int:
        return self.counts.get((queue, letter), 0)

    def total(self, letter: str) -> int:
        return sum(n for (_, state), n in self.counts.items() if state == letter)
