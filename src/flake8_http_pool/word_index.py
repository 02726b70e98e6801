"""Which of the files phase 1 of the gate left out name which of the project's modules, and what they write after
those names: the index the gate's later search rounds look their needles up in, instead of reading every
remaining file again (project.py, `_solve_gated`).

Phase 2 of the gate searches the bytes of the remaining modules for the functions that can matter
(`project.Needles.match`), once per round while new ones join. A chain of wrappers across modules made one round
per link, each reading every remaining file: quadratic in the project's size. From the third round on, the gate
reads each remaining file once more into this index, then looks each round's new needles up in it.

`Needles.match` holds when one of its atoms does, each a module's token (its file stem, or its package's folder
name), a name searched for from that module, and for a module in a package a folder above it:

- direct (token, name): the token is a word of an import statement, and a statement holding it is a star
  import, or holds the name too, or the name is written after the token and a dot, or after any dot when the
  token is imported under an alias;
- through (folder, token, name): the folder is a word of an import statement, and the name is written after the
  token and a dot.

Tokens and folders are words of the project's module paths, so a file keeps only what touches such a word: the
words of its import statements and the statements holding one, the names written after one and a dot (found by
`project._after` itself: the same bytes give the same answer), and the names after any dot when one is imported
under an alias. A file whose import statements hold no such word can match no needle and keeps nothing. The
project's words are a Bloom filter (`WordFilter`: a few bytes a module, sent to workers once); a word it takes
for one wrongly only keeps a few more rows.

A lookup gives every file that matches the atoms asked (`WordIndex.candidates`), and a few that may: for a token
that is not a run of word bytes (a module named `my-mod.py` in a package), every file importing the folder. The
gate's `search` reads the candidates and decides, as it decided every file before; the per-file data is plain
tuples (`FileWords`), so a later cache of it by file signature can keep it as it is.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Set, Tuple

try:
    from _blake2 import blake2b  # as project_cache: the same function without loading OpenSSL
except ImportError:  # pragma: no cover - every CPython 3.9 to 3.13 has it
    from hashlib import blake2b

TOKEN, FOLDER = b"t", b"f"  # the kinds of words a WordFilter holds
_HASHES = 4
_BITS_PER_MODULE = 32  # a module adds its token and, at most, a folder or two not met before


class WordFilter:
    """The tokens and folders of the project's modules as a Bloom filter: `holds(kind, word)` is True for every
    word added under that kind, and for a few in a thousand others. Picklable, deterministic across processes."""

    def __init__(self, modules: int) -> None:
        self.size = max(1024, _BITS_PER_MODULE * modules)
        self.bits = bytearray((self.size + 7) // 8)

    def _places(self, kind: bytes, word: bytes) -> Iterator[int]:
        digest = blake2b(kind + b"\0" + word, digest_size=4 * _HASHES).digest()
        for start in range(0, 4 * _HASHES, 4):
            yield int.from_bytes(digest[start:start + 4], "little") % self.size

    def add(self, kind: bytes, word: str) -> None:
        """Hold `word` (a token or folder name, as project paths give it) under `kind`."""
        for place in self._places(kind, word.encode("utf-8", "surrogatepass")):
            self.bits[place >> 3] |= 1 << (place & 7)

    def holds(self, kind: bytes, word: bytes) -> bool:
        """Whether `word` (bytes as a file writes it, UTF-8) may have been added under `kind`."""
        bits = self.bits
        return all(bits[place >> 3] & (1 << (place & 7)) for place in self._places(kind, word))


class FileWords(NamedTuple):
    """What the index keeps of one file (see the module docstring); every word as `Needles.match` reads it."""

    imports: Tuple[Tuple[str, bool, bool], ...]  # (project word of an import statement, in a star import, aliased)
    statements: Tuple[Tuple[str, ...], ...]  # the words of each import statement holding a project word
    after: Tuple[Tuple[str, Tuple[str, ...]], ...]  # (project token, the names written after it and a dot)
    dots: Tuple[str, ...]  # the names written after any dot, when a project word is imported under an alias


# Every file's bytes reversed, the word (reversed) written right before each dot, spaces between: every word a
# name is written after (`project._after` looks for `token[ \t]*\.[ \t]*name`), and a few more. Reversed, the
# pattern starts with a literal, which `re` finds fast; forwards it tried every byte of every word.
_BEFORE_DOT_REVERSED = re.compile(rb"\.[ \t]*([\w\x80-\xff]+)")


def file_words(data: bytes, project: WordFilter) -> Optional[FileWords]:
    """What the index keeps of a file whose searchable bytes (`project.searchable`) are `data`; None when its
    import statements hold no word of the project's paths (no needle can match it)."""
    from .project import _AFTER_DOT, _ALIASED, _WORD, _after, import_statements

    statements = import_statements(data)
    if not statements:
        return None
    words = [set(_WORD.findall(statement)) for statement in statements]
    kept = {word for held in words for word in held
            if project.holds(TOKEN, word) or project.holds(FOLDER, word)}
    if not kept:
        return None
    aliased = {word for statement in statements for word in _ALIASED.findall(statement)}
    imports = tuple((word.decode("ascii"), any(b"*" in statement for held, statement in zip(words, statements)
                                               if word in held), word in aliased)
                    for word in sorted(kept))
    held_statements = tuple(tuple(sorted(word.decode("ascii") for word in held)) for held in words if held & kept)
    heads: Set[bytes] = set(kept)
    if any(project.holds(FOLDER, word) for word in kept):
        # A package imported: its modules' names after a dot count wherever they are written (`app.http.get`).
        heads.update(head[::-1] for head in set(_BEFORE_DOT_REVERSED.findall(data[::-1]))
                     if project.holds(TOKEN, head[::-1]))
    after = []
    for head in sorted(heads):
        try:
            token = head.decode("utf-8")
        except UnicodeDecodeError:
            continue  # no project token (a path's name, as UTF-8) is written so
        names = _after(token, data)
        if names:
            after.append((token, tuple(sorted(names))))
    dots: Tuple[str, ...] = ()
    if kept & aliased:
        dots = tuple(sorted({word.decode("utf-8", "replace") for word in _AFTER_DOT.findall(data)}))
    return FileWords(imports, held_statements, tuple(after), dots)


# A token `Needles.match` can find only as a whole run of word bytes followed by a dot: the index holds what is
# written after such runs. Any other token is looked for by `search` itself (see the module docstring).
_RUN = re.compile(rb"[\w\x80-\xff]+")
_IMPORT_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # what `_WORD` finds in an import statement, decoded


def is_run(token: str) -> bool:
    """Whether `token` is written as a whole run of word bytes (what the index holds names after)."""
    try:
        return _RUN.fullmatch(token.encode("utf-8")) is not None
    except UnicodeEncodeError:
        return False


class Atom(NamedTuple):
    """One atom of a round's new needles: `folder` None for a direct one."""

    token: str
    name: str
    folder: Optional[str]


class WordIndex:
    """FileWords of the remaining files by their number (project._Rest's), in tables of the project's database
    (ondisk.py): a big project's were most of what its files hold."""

    def __init__(self, db: Any) -> None:
        self._db = db
        db.execute("CREATE TABLE word_imports(word TEXT NOT NULL, file INTEGER NOT NULL, star INTEGER NOT NULL, "
                   "aliased INTEGER NOT NULL)")
        db.execute("CREATE TABLE word_statements(word TEXT NOT NULL, file INTEGER NOT NULL, "
                   "statement INTEGER NOT NULL)")
        db.execute("CREATE TABLE word_after(head TEXT NOT NULL, name TEXT NOT NULL, file INTEGER NOT NULL)")
        db.execute("CREATE TABLE word_dots(name TEXT NOT NULL, file INTEGER NOT NULL)")

    def add(self, files: Iterable[Tuple[int, Optional[FileWords]]]) -> None:
        """Index each numbered file's words (None: nothing to keep), then build the lookups' indexes."""
        from . import ondisk

        statement = 0
        for batch in ondisk.batches(files):
            imports: List[Tuple[str, int, int, int]] = []
            statements: List[Tuple[str, int, int]] = []
            after: List[Tuple[str, str, int]] = []
            dots: List[Tuple[str, int]] = []
            for number, found in batch:
                if found is None:
                    continue
                imports.extend((word, number, star, alias) for word, star, alias in found.imports)
                for words in found.statements:
                    statement += 1
                    statements.extend((word, number, statement) for word in words)
                after.extend((head, name, number) for head, names in found.after for name in names)
                dots.extend((name, number) for name in found.dots)
            for sql, rows in (("INSERT INTO word_imports VALUES (?, ?, ?, ?)", imports),
                              ("INSERT INTO word_statements VALUES (?, ?, ?)", statements),
                              ("INSERT INTO word_after VALUES (?, ?, ?)", after),
                              ("INSERT INTO word_dots VALUES (?, ?)", dots)):
                if rows:
                    ondisk.insert_all(self._db, sql, rows)
        for sql in ("CREATE INDEX word_imports_word ON word_imports(word, file)",
                    "CREATE INDEX word_imports_star ON word_imports(word) WHERE star",
                    "CREATE INDEX word_imports_file ON word_imports(file, word)",
                    "CREATE INDEX word_statements_word ON word_statements(word, file, statement)",
                    "CREATE INDEX word_after_head ON word_after(head, name, file)",
                    "CREATE INDEX word_dots_name ON word_dots(name, file)"):
            self._db.execute(sql)

    def candidates(self, atoms: Sequence[Atom]) -> Set[int]:
        """The numbers of the files that match one of `atoms` (`Needles.match`), with, for a token that is not a
        run of word bytes, every file importing its folder."""
        found: Set[int] = set()
        run = self._db.execute
        for token, name, folder in atoms:
            if folder is None:
                if not _IMPORT_WORD.fullmatch(token):
                    continue  # never a word of an import statement: the atom matches nothing
                rows = run("SELECT file FROM word_imports WHERE word = ? AND star", (token,)).fetchall()
                rows += run("SELECT b.file FROM word_statements AS b WHERE b.word = ? AND EXISTS (SELECT 1 FROM "
                            "word_statements AS a WHERE a.word = ? AND a.file = b.file AND a.statement = "
                            "b.statement)", (name, token)).fetchall()
                rows += run("SELECT d.file FROM word_dots AS d WHERE d.name = ? AND EXISTS (SELECT 1 FROM "
                            "word_imports AS i WHERE i.file = d.file AND i.word = ? AND i.aliased)",
                            (name, token)).fetchall()
                importer = token
            elif not _IMPORT_WORD.fullmatch(folder):
                continue
            elif not is_run(token):
                rows = run("SELECT file FROM word_imports WHERE word = ?", (folder,)).fetchall()
                found.update(row[0] for row in rows)
                continue
            else:
                rows = []
                importer = folder
            rows += run("SELECT p.file FROM word_after AS p WHERE p.head = ? AND p.name = ? AND EXISTS (SELECT 1 "
                        "FROM word_imports AS i WHERE i.file = p.file AND i.word = ?)",
                        (token, name, importer)).fetchall()
            found.update(row[0] for row in rows)
        return found
