"""What a rule is: its code, name, message, docs sections, examples, and the predicate that finds it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Tuple

if TYPE_CHECKING:  # pragma: no cover
    from .analysis import Analysis
    from .finding import Hit

FIX_SAFE = "safe"
FIX_UNSAFE = "unsafe"
FIX_NONE = "none"


class Rule:
    """One rule of the catalogue. Docs pages, `rules`, `explain` and the README table are made from these fields.

    `message` is a format string filled from the fields each `Hit` of `check` carries (`{call}`, `{client}`, ...).
    `invalid` examples mark each line that must be reported with a trailing `# HTPnnn` comment; `valid`
    examples must be silent. Both run as tests, and `example` / `use_instead` are an invalid and a valid one.
    """

    __slots__ = (
        "code", "name", "summary", "message", "fix", "fix_sites", "fix_title", "what_it_does", "why_bad", "example", "use_instead",
        "fix_safety", "options", "references", "valid", "invalid", "check",
    )

    def __init__(
        self,
        *,
        code: str,
        name: str,
        summary: str,
        message: str,
        fix: str,
        fix_title: str,
        what_it_does: str,
        why_bad: str,
        example: str,
        use_instead: str,
        fix_safety: str,
        references: Tuple[str, ...],
        check: "Callable[[Analysis], Iterable[Hit]]",
        options: str = "",
        fix_sites: str = "",
        valid: Tuple[str, ...] = (),
        invalid: Tuple[str, ...] = (),
    ) -> None:
        self.code = code
        self.name = name
        self.summary = summary
        self.message = message
        self.fix = fix
        # Where the fix's class differs from `fix` at some sites, or it is not offered (RULES.md decides safety
        # per site): one sentence, shown by `rules`, `explain` and the docs page.
        self.fix_sites = fix_sites
        self.fix_title = fix_title
        self.what_it_does = what_it_does
        self.why_bad = why_bad
        self.example = example
        self.use_instead = use_instead
        self.fix_safety = fix_safety
        self.options = options
        self.references = references
        self.check = check
        self.valid = valid
        self.invalid = invalid

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<Rule {self.code} {self.name}>"
