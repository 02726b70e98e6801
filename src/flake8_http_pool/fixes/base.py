"""What every libcst fix shares: a command that carries out a plan made from the engine's findings.

Importing this module imports libcst; `fixing.py` does so only for files with something to fix.

Each fix is also a libcst codemod that runs alone (`python -m libcst.tool codemod -x
flake8_http_pool.fixes.htp101.UnpooledCallInLoopCommand PATH`). libcst's codemod package costs more to import
than the rest of a pre-commit `fix` of a small file together (~0.35 s: it builds libcst.matchers' hundreds of
classes), so the commands stand on it only where it is loaded already, as under libcst's tool; `fix` never
loads it first, and there they stand on `_LightCommand`, which does for them what the codemod framework did:
the metadata wrapper, the transform, then the imports a fix scheduled (through libcst's own AddImportsVisitor
and RemoveImportsVisitor, loaded for the few fixes that add or drop an import).
"""

from __future__ import annotations

import ast
import sys
from typing import Any, ClassVar, List, Optional, Sequence, Tuple

import libcst as cst
from libcst.metadata import CodePosition, MetadataWrapper, PositionProvider

from ..engine import check_source
from ..finding import Finding
from ..fix_facts import NO_FACTS, FixFacts
from ..source_files import quiet_parse
from .positions import source_lines


class LightContext:
    """What `fix` hands a command in place of libcst's CodemodContext: the file's name."""

    def __init__(self, filename: Optional[str] = None) -> None:
        self.filename = filename


class _LightCommand(cst.CSTTransformer):
    """The codemod command's interface, as `fix` uses it, without libcst's codemod package."""

    def __init__(self, context: Any) -> None:
        super().__init__()
        self.context = context
        self._wrapper: Optional[MetadataWrapper] = None
        self._codemod_context: Any = None

    def transform_module(self, tree: cst.Module, fresh: bool = False) -> cst.Module:
        """`tree` transformed, then the imports scheduled carried out (as libcst's CodemodCommand does).

        `fresh`: the tree comes straight from libcst's parser and is used nowhere else, so it holds no node
        twice and the metadata may be computed on it without the deep copy libcst makes first (a second on
        a 5,000-line module)."""
        wrapper = self._wrapper = MetadataWrapper(tree, unsafe_skip_copy=fresh)
        with self.resolve(wrapper):
            tree = self.transform_module_impl(wrapper.module)
        scheduled = self._codemod_context
        if scheduled is None:
            return tree
        from .scheduled_imports import carry_out

        return carry_out(tree, scheduled)

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        return tree.visit(self)

    # The scheduling methods libcst's CodemodCommand gives a codemod command.
    def add_needed_import(self, module: str, obj: Optional[str] = None, asname: Optional[str] = None,
                          relative: int = 0) -> None:
        from libcst.codemod.visitors import AddImportsVisitor

        AddImportsVisitor.add_needed_import(self.scheduling_context(), module, obj, asname, relative)

    def remove_unused_import(self, module: str, obj: Optional[str] = None, asname: Optional[str] = None) -> None:
        from libcst.codemod.visitors import RemoveImportsVisitor

        RemoveImportsVisitor.remove_unused_import(self.scheduling_context(), module, obj, asname)

    def remove_unused_import_by_node(self, node: cst.CSTNode) -> None:
        from libcst.codemod.visitors import RemoveImportsVisitor

        RemoveImportsVisitor.remove_unused_import_by_node(self.scheduling_context(), node)

    def scheduling_context(self) -> Any:
        """A CodemodContext for libcst's import visitors to schedule in, bound to this transform's tree."""
        if self._codemod_context is None:
            from libcst.codemod import CodemodContext

            name = getattr(self.context, "filename", None)
            self._codemod_context = CodemodContext(filename=name, wrapper=self._wrapper)
        return self._codemod_context


if "libcst.codemod" in sys.modules:  # loaded already (libcst's tool): the commands are codemods proper
    from libcst.codemod import CodemodContext as _Context, VisitorBasedCodemodCommand as _Base
else:
    _Context, _Base = LightContext, _LightCommand  # type: ignore[assignment, misc]


def new_context(filename: Optional[str]) -> Any:
    """The context to build a command with in this process (see the module docstring)."""
    return _Context(filename=filename)


def transform_parsed(command: Any, tree: cst.Module) -> cst.Module:
    """`command` carried out on `tree`, fresh from libcst's parser and used nowhere else (no deep copy first,
    where the command is ours rather than libcst's codemod)."""
    if isinstance(command, _LightCommand):
        return command.transform_module(tree, fresh=True)
    return command.transform_module(tree)  # type: ignore[no-any-return]


class FindingFixCommand(_Base):  # type: ignore[valid-type, misc]
    """A codemod driven by engine findings.

    `fix` hands it a plan it made already; run by `python -m libcst.tool codemod`, it has none and makes
    its own from the module's text (running the engine). `applied` counts the findings it fixed.
    """

    CODE: ClassVar[str] = ""
    # Run alone, the command plans from the findings of these rules (CODE's when empty): one command may
    # carry out the fixes of several FIXES entries. Safety is not consulted: naming the command is the opt-in.
    RULES: ClassVar[Tuple[str, ...]] = ()
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, context: Any, plan: Optional[Sequence[Any]] = None) -> None:
        super().__init__(context)
        self.plan: Optional[Sequence[Any]] = plan
        self.applied = 0

    def make_plan(self, findings: Sequence[Finding], tree: ast.Module, text: str, facts: FixFacts) -> List[Any]:
        """The edits to make for `findings` (overridden by each fix)."""
        raise NotImplementedError

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        if self.plan is None:
            text = tree.code
            findings = [f for f in check_source(text) if f.code in (self.RULES or (self.CODE,))]
            if findings:
                module = quiet_parse(text)
                self.plan = self.make_plan(findings, module, text, NO_FACTS.with_module("", module))
            else:
                self.plan = []
        if not self.plan:
            return tree
        self.prepare(self.plan)
        return tree.visit(self)

    def prepare(self, plan: Sequence[Any]) -> None:
        """Index the plan before the visit (overridden by each fix)."""

    def start(self, node: cst.CSTNode) -> Tuple[int, int]:
        """Where `node` starts, as (line, character column)."""
        position: CodePosition = self.get_metadata(PositionProvider, node).start
        return (position.line, position.column)

    def span(self, node: cst.CSTNode) -> Tuple[int, int, int, int]:
        """Where `node` starts and ends, as (line, column, end line, end column) in characters."""
        where = self.get_metadata(PositionProvider, node)
        return (where.start.line, where.start.column, where.end.line, where.end.column)


def lines_of(text: str) -> List[str]:
    """The source's lines as `ast` numbers them (for byte to character column conversion)."""
    return source_lines(text)
