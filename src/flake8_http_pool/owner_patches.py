"""`fix --split-by-owner DIR`: the changes `fix --diff` would show, written as one patch per CODEOWNERS owner.

A large-scale change is reviewed and merged by the teams that own its parts: each patch holds the files of one
owner set (the owners CODEOWNERS gives a file, as a set: `@org/a @org/b` is one reviewer group, and their
patch is `org-a+org-b.patch`), and the files no owner is listed for go to one patch per top-level folder
(`unowned-<folder>.patch`; files at the repository root, `unowned.patch`). Each applies alone, from the
repository root, with `git apply` or `patch -p1`: its diffs are computed on the files' bytes (their encoding,
BOM and line ends kept) with `a/` and `b/` paths relative to the root. A change across modules (fix_across.py:
HTP104's client parameter threaded through callers) is never split: its files would not work apart, so they
all go in the patch of the owners of the file holding the finding, and the summary and that patch say which
files of other owners came along.

The folder is created if missing. Patches a previous run wrote there (recognised by their first line) are
replaced, and those this run has no use for removed; any other `*.patch` file in it stops the run before a
file is read (mixing them would make `git apply DIR/*.patch` apply someone else's). Every patch is written to
a temporary file first and renamed into place once all are written.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from .codeowners import NO_CODEOWNERS, PLACES, CodeOwners, find_codeowners, read_codeowners, repository_root
from .escaping import shown

# The first line of every patch this writes: how a later run knows a patch in the folder is its own.
MARKER = b"# flake8-http-pool fix --split-by-owner\n"
_NAME_LIMIT = 100
_WINDOWS_DEVICES = frozenset({"CON", "PRN", "AUX", "NUL", *(f"COM{n}" for n in range(1, 10)),
                              *(f"LPT{n}" for n in range(1, 10))})


def file_hunks(old: bytes, new: bytes) -> bytes:
    """The unified diff hunks (no file header) turning `old` into `new`, lines split at `\\n` only, as git
    and patch split them: a `\\r` stays part of its line, and a last line without a newline is marked."""
    out = []
    lines = difflib.diff_bytes(difflib.unified_diff, _lines(old), _lines(new), b"", b"", n=3)
    for number, line in enumerate(lines):
        if number < 2:
            continue  # the `---` / `+++` header: the patch writes its own, with the file's path
        out.append(line if line.endswith(b"\n") else line + b"\n\\ No newline at end of file\n")
    return b"".join(out)


def _lines(data: bytes) -> List[bytes]:
    parts = data.split(b"\n")
    last = parts.pop()
    return [part + b"\n" for part in parts] + ([last] if last else [])


def file_header(relative: str) -> bytes:
    """`diff --git a/P b/P`, `--- a/P`, `+++ b/P` for a repository-relative path, quoted as git quotes one.

    A name with a blank gets a tab after it on the `---` / `+++` lines, as git writes it, so that GNU patch
    does not read the blank as the end of the name.
    """
    old, new = _quoted("a/" + relative), _quoted("b/" + relative)
    tab = b"\t" if b" " in old else b""
    return b"diff --git %s %s\n--- %s%s\n+++ %s%s\n" % (old, new, old, tab, new, tab)


def _quoted(name: str) -> bytes:
    raw = os.fsencode(name)
    if not any(byte < 0x20 or byte in (0x22, 0x5C, 0x7F) for byte in raw):
        return raw
    escapes = {0x07: b"\\a", 0x08: b"\\b", 0x09: b"\\t", 0x0A: b"\\n", 0x0B: b"\\v", 0x0C: b"\\f",
               0x0D: b"\\r", 0x22: b'\\"', 0x5C: b"\\\\"}
    body = b"".join(escapes.get(byte) or (b"\\%03o" % byte if byte < 0x20 or byte == 0x7F else bytes([byte]))
                    for byte in raw)
    return b'"' + body + b'"'


class _Entry(NamedTuple):
    relative: str
    hunks: bytes
    lead: str  # the repository-relative path whose owners decide the patch: the file's own, or its change's first


class Patch(NamedTuple):
    """One patch to write: its file name, whom it is for, and its files (sorted), each with its hunks."""

    name: str
    label: str  # `@org/web`, `@org/a @org/b`, or `no owner: tools/`
    files: Tuple[Tuple[str, bytes], ...]
    # The files of other owners that a change across modules brought in: (path, their label).
    carried: Tuple[Tuple[str, str], ...]


def check_folder(folder: str) -> List[str]:
    """The patches a previous run left in `folder` (to replace); UsageError when it cannot take the patches."""
    from .cli import UsageError

    if not os.path.lexists(folder):
        return []
    if not os.path.isdir(folder):
        raise UsageError(f"--split-by-owner {folder}: not a folder")
    ours = []
    try:
        names = sorted(os.listdir(folder))
    except OSError as error:
        raise UsageError(f"--split-by-owner {folder}: cannot read it: {error.strerror or error}") from None
    for name in names:
        if not name.endswith(".patch"):
            continue
        if not _written_here(os.path.join(folder, name)):
            raise UsageError(f"--split-by-owner {folder}: {shown(name)} was not written by --split-by-owner; "
                             "give an empty or new folder, or move it away")
        ours.append(name)
    return ours


def _written_here(path: str) -> bool:
    """Whether the file starts with the mark our patches carry. Only a regular file is opened, never blocking: a
    FIFO named `x.patch` in the folder would otherwise wait for a writer forever."""
    from .source_files import read_head

    return read_head(path, len(MARKER)) == MARKER


def load_codeowners(explicit: Optional[str], root: str, warn: Callable[[str], None]) -> CodeOwners:
    """The CODEOWNERS file named by --codeowners, else the one GitHub would use at `root`; NO_CODEOWNERS when
    there is none. UsageError when the file cannot be read."""
    from .cli import UsageError

    path = explicit if explicit is not None else find_codeowners(root)
    if path is None:
        return NO_CODEOWNERS
    try:
        return read_codeowners(path, warn)
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise UsageError(f"{'--codeowners ' if explicit is not None else ''}{path}: cannot read it: {reason}") from None


class OwnerPatches:
    """Collects the changed files of a run and writes them out as one patch per owner set (see the module)."""

    def __init__(self, folder: str, previous: Sequence[str], root: str, owners: CodeOwners) -> None:
        self.folder = folder
        self.previous = list(previous)
        self.root = root
        self.owners = owners
        self.entries: List[_Entry] = []

    @classmethod
    def for_paths(cls, folder: str, previous: Sequence[str], explicit: Optional[str], paths: Sequence[str],
                  warn: Callable[[str], None]) -> "OwnerPatches":
        """For the files of a run: their repository root (codeowners.repository_root) and its CODEOWNERS."""
        root = repository_root(paths)
        return cls(folder, previous, root, load_codeowners(explicit, root, warn))

    def relative(self, path: str) -> str:
        return os.path.relpath(os.path.abspath(path), self.root).replace(os.sep, "/")

    def add(self, path: str, hunks: bytes, change: Sequence[str] = ()) -> None:
        """A changed file; `change` lists the files of the change across modules it belongs to, its site first."""
        relative = self.relative(path)
        self.entries.append(_Entry(relative, hunks, self.relative(change[0]) if change else relative))

    def patches(self) -> List[Patch]:
        """The patches, sorted by file name, each with its files sorted by path."""
        groups: Dict[Tuple[str, ...], List[_Entry]] = {}
        labels: Dict[Tuple[str, ...], str] = {}
        for entry in self.entries:
            key, label = self._group(entry.lead)
            groups.setdefault(key, []).append(entry)
            labels[key] = label
        names = _file_names(list(groups))
        out = []
        for key, entries in groups.items():
            carried = tuple(sorted(
                (e.relative, self._group(e.relative)[1]) for e in entries
                if e.relative != e.lead and self._group(e.relative)[0] != key
            ))
            files = tuple(sorted((e.relative, e.hunks) for e in entries))
            out.append(Patch(names[key], labels[key], files, carried))
        return sorted(out)

    def _group(self, relative: str) -> Tuple[Tuple[str, ...], str]:
        """A path's patch key and label: its owner set, or, unowned, its top-level folder ("" at the root)."""
        owners = self.owners.owners_of(relative)
        if owners:
            spelled: Dict[str, str] = {}
            for owner in owners:
                spelled.setdefault(owner.lower(), owner)  # GitHub's names are not case-sensitive
            ordered = sorted(spelled)
            return ("owners", *ordered), " ".join(spelled[o] for o in ordered)
        top = relative.split("/", 1)[0] if "/" in relative else ""
        return ("unowned", top), f"no owner: {shown(top)}/" if top else "no owner: the root's files"

    def write(self) -> List[Patch]:
        """Write the patches into the folder (created if missing), all staged before any is renamed into place,
        and remove the previous run's that were not rewritten. UsageError when the folder cannot take them."""
        from .cli import UsageError
        from .report_output import OutputFile

        patches = self.patches()
        try:
            os.makedirs(self.folder, exist_ok=True)
        except OSError as error:
            raise UsageError(f"--split-by-owner {self.folder}: cannot create it: {error.strerror or error}") from None
        staged: List[OutputFile] = []
        try:
            for patch in patches:
                target = OutputFile(os.path.join(self.folder, patch.name), f"--split-by-owner {self.folder}",
                                    binary=True)
                staged.append(target)
                target.stream.write(self._text(patch))
        except BaseException:
            for target in staged:
                target.discard()
            raise
        for number, target in enumerate(staged):
            try:
                target.commit()
            except BaseException:
                for rest in staged[number + 1:]:  # no temporary file left behind in the user's folder
                    rest.discard()
                raise
        written = {patch.name for patch in patches}
        for name in self.previous:
            if name not in written:
                try:
                    os.unlink(os.path.join(self.folder, name))
                except FileNotFoundError:
                    pass
                except OSError as error:
                    raise UsageError(f"--split-by-owner {self.folder}: cannot remove the previous run's {name}: "
                                     f"{error.strerror or error}") from None
        return patches

    def _text(self, patch: Patch) -> bytes:
        carried = dict(patch.carried)
        lines = [f"owners: {patch.label}", f"files: {len(patch.files)}"]
        for relative, _ in patch.files:
            why = f" ({carried[relative]}; here because a change across modules edits it with these files)" \
                if relative in carried else ""
            lines.append(f"  {shown(relative)}{why}")
        lines.append("apply from the repository root: git apply FILE, or patch -p1 < FILE")
        head = MARKER + b"".join(b"# " + line.encode("utf-8", "backslashreplace") + b"\n" for line in lines)
        return head + b"\n" + b"".join(file_header(relative) + hunks for relative, hunks in patch.files)

    def summary(self, patches: Iterable[Patch]) -> List[str]:
        """The closing lines: where the patches went, one `name (owners, N files)` each, and the files a change
        across modules carried into another owner's patch; a note when there was no CODEOWNERS file."""
        patches = list(patches)
        lines = []
        if self.owners.path is None:
            lines.append(f"no CODEOWNERS in {self.root} ({', '.join(PLACES)}): every file is unowned, "
                         "one patch per top-level folder")
        if not patches:
            lines.append(f"nothing would change; no patch written to {self.folder}")
            return lines
        parts = [f"{p.name} ({p.label}; {len(p.files)} file{'s' if len(p.files) != 1 else ''})" for p in patches]
        lines.append(f"wrote {len(patches)} patch{'es' if len(patches) != 1 else ''} to {self.folder}: "
                     + ", ".join(parts))
        for patch in patches:
            for relative, owners in patch.carried:
                lines.append(f"{shown(relative)} ({owners}) is in {patch.name}: a change across modules edits it "
                             "together with that patch's files, and they do not work apart")
        return lines


def _file_names(keys: List[Tuple[str, ...]]) -> Dict[Tuple[str, ...], str]:
    """A safe, distinct file name per patch key; keys whose names clash (`@org/team-a` and `@org-team-a`, or
    names differing in case only) each get a short hash of their owners."""
    stems = {key: _stem(key) for key in keys}
    count: Dict[str, int] = {}
    for stem in stems.values():
        count[stem.lower()] = count.get(stem.lower(), 0) + 1
    names = {}
    for key, stem in stems.items():
        if count[stem.lower()] > 1:
            stem += "-" + _digest("\0".join(key))
        names[key] = stem + ".patch"
    return names


def _stem(key: Tuple[str, ...]) -> str:
    kind, rest = key[0], key[1:]
    if kind == "unowned":
        stem = f"unowned-{_safe(rest[0])}" if rest[0] else "unowned"
    else:
        stem = "+".join(_safe(owner) for owner in rest)
    if len(stem) > _NAME_LIMIT:  # many owners, or a long name: kept under every file system's limit
        stem = stem[:_NAME_LIMIT - 9] + "-" + _digest(stem)
    return stem + "_" if stem.split(".")[0].upper() in _WINDOWS_DEVICES else stem


def _safe(text: str) -> str:
    """A file-name-safe form of an owner or folder: `@org/team-a` -> `org-team-a`, `me@x.org` -> `me-at-x.org`."""
    text = text[1:] if text.startswith("@") else text.replace("@", "-at-")
    text = re.sub(r"[^A-Za-z0-9._-]+", "-", text)
    return re.sub(r"-{2,}", "-", text).strip("-.") or "owner"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:8]
