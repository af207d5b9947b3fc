"""qmgr's command language: ``<command> <object> [name] [attr op value[, attr op value]...]``."""

from __future__ import annotations

from dataclasses import dataclass, field

VERBS = {
    "set": "set",
    "s": "set",
    "list": "list",
    "l": "list",
    "print": "print",
    "p": "print",
    "create": "create",
    "c": "create",
    "delete": "delete",
    "d": "delete",
    "unset": "unset",
    "u": "unset",
    "active": "active",
    "a": "active",
    "help": "help",
    "h": "help",
    "?": "help",
    "quit": "quit",
    "q": "quit",
    "exit": "quit",
}
OBJECTS = {
    "server": "server",
    "s": "server",
    "queue": "queue",
    "que": "queue",
    "q": "queue",
    "node": "node",
    "n": "node",
    "sched": "sched",
    "sc": "sched",
    "scheduler": "sched",
    "resource": "resource",
    "r": "resource",
    "hook": "hook",
    "h": "hook",
}
OPS = ("=", "+=", "-=")


class QmgrSyntaxError(ValueError):
    pass


@dataclass
class Command:
    verb: str
    obj: str | None = None
    name: str | None = None
    attrs: list[tuple[str, str, str]] = field(default_factory=list)  # (attr, op, value)


def tokenize(text: str) -> list[tuple[str, str]]:
    """``(kind, text)`` with kind one of word, quoted, op, comma."""
    tokens: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch == ",":
            tokens.append(("comma", ","))
            i += 1
        elif ch == "=":
            tokens.append(("op", "="))
            i += 1
        elif ch in "+-" and i + 1 < n and text[i + 1] == "=":
            tokens.append(("op", ch + "="))
            i += 2
        elif ch in "\"'":
            end = text.find(ch, i + 1)
            if end < 0:
                raise QmgrSyntaxError(f"unbalanced quote in: {text.strip()}")
            tokens.append(("quoted", text[i + 1 : end]))
            i = end + 1
        else:
            j = i
            while j < n:
                c = text[j]
                if c.isspace() or c in ",=\"'":
                    break
                if c in "+-" and j + 1 < n and text[j + 1] == "=":
                    break
                j += 1
            tokens.append(("word", text[i:j]))
            i = j
    return tokens


def parse(text: str) -> Command:
    tokens = tokenize(text)
    if not tokens:
        raise QmgrSyntaxError("empty command")
    kind, word = tokens[0]
    verb = VERBS.get(word.lower()) if kind == "word" else None
    if verb is None:
        raise QmgrSyntaxError(
            f"unknown command {word!r}; batchd's qmgr knows create, delete, set, list and print"
        )
    if verb in ("help", "quit"):
        return Command(verb)
    if len(tokens) < 2 or tokens[1][0] != "word":
        raise QmgrSyntaxError(f"{word}: name an object: server, sched, queue or node")
    obj = OBJECTS.get(tokens[1][1].lower())
    if obj is None:
        raise QmgrSyntaxError(
            f"unknown object {tokens[1][1]!r}; batchd's qmgr knows server, sched, queue and node"
        )
    cmd = Command(verb, obj)
    rest = tokens[2:]
    if verb == "unset":  # unset OBJ [NAME] ATTR[, ATTR...]: a name is followed by a word
        named = len(rest) >= 2 and rest[0][0] in ("word", "quoted") and rest[1][0] == "word"
    else:
        named = bool(rest) and rest[0][0] in ("word", "quoted")
        named = named and (len(rest) == 1 or rest[1][0] != "op")
    if named:
        cmd.name = rest[0][1]
        rest = rest[1:]
    cmd.attrs = _names(rest, text) if verb == "unset" else _attributes(rest, text)
    return cmd


def _names(tokens: list[tuple[str, str]], text: str) -> list[tuple[str, str, str]]:
    """``unset``'s attribute names, comma-separated: (name, "", "") each."""
    names: list[tuple[str, str, str]] = []
    expect_name = True
    for kind, word in tokens:
        if expect_name and kind == "word":
            names.append((word, "", ""))
        elif not expect_name and kind == "comma":
            pass
        else:
            raise QmgrSyntaxError(f"unset: expected attribute names at {word!r} in: {text.strip()}")
        expect_name = not expect_name
    if not names or expect_name:
        raise QmgrSyntaxError(f"unset: name the attributes to unset in: {text.strip()}")
    return names


def _attributes(tokens: list[tuple[str, str]], text: str) -> list[tuple[str, str, str]]:
    attrs: list[tuple[str, str, str]] = []
    i = 0
    while i < len(tokens):
        kind, attr = tokens[i]
        if kind != "word":
            raise QmgrSyntaxError(f"expected an attribute name at {attr!r} in: {text.strip()}")
        if i + 1 >= len(tokens) or tokens[i + 1][0] != "op":
            raise QmgrSyntaxError(f"{attr}: expected '=' and a value in: {text.strip()}")
        op = tokens[i + 1][1]
        i += 2
        words = []
        while i < len(tokens) and tokens[i][0] in ("word", "quoted"):
            words.append(tokens[i][1])
            i += 1
        if not words:
            raise QmgrSyntaxError(f"{attr} {op}: missing value in: {text.strip()}")
        attrs.append((attr, op, " ".join(words)))
        if i < len(tokens):
            if tokens[i][0] != "comma":
                raise QmgrSyntaxError(f"expected ',' before {tokens[i][1]!r} in: {text.strip()}")
            i += 1
            if i == len(tokens):
                raise QmgrSyntaxError(f"trailing ',' in: {text.strip()}")
    return attrs
