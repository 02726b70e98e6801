"""Generate whole, deterministic programs that make HTTP calls, from a grammar of fragments (for the differential fuzz).

A program is described by a `ProgramSpec` (one choice per knob: library, import form and placement, where the loop
sits, the loop's shape, the URLs, the call and what is done with the response) and rendered to source by
`render`. Every knob's choices are listed simplest first, so hypothesis shrinks a failing program towards the
plainest one that still fails. Every loop is bounded and every program ends by printing its results.
"""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Tuple

from hypothesis import strategies as st

LIBRARIES = ("requests", "httpx")
IMPORT_FORMS = ("plain", "alias", "from", "from_as")
# where the library's import statement stands
PLACEMENTS = (
    "module",          # at the top of the module
    "function",        # first statement of the function holding the loop
    "loop_body",       # inside the loop body, before the call
    "if_before_loop",  # under `if urls:` just before the loop (module level: `if URLS:`)
    "if_module",       # under `if URLS:` at module level
    "try_module",      # try: import ... except ImportError: name = None, at module level
    "try_function",    # the same inside the function, before the loop
    "lazy_helper",     # in a helper function that makes the call; the loop calls the helper
)
# where the loop runs: at module level, or in `work(urls)` called once, twice in a row, or from a loop
CONTEXTS = ("module", "function_once", "function_twice", "function_loop")
LOOPS = ("for", "nested_for", "while_counter", "while_true", "for_else", "listcomp", "setcomp", "dictcomp",
         "genexp", "genexp_named")
COMPREHENSIONS = ("listcomp", "setcomp", "dictcomp", "genexp", "genexp_named")
METHODS = ("get", "post", "put", "patch", "delete", "head", "options", "request")
CALL_FORMS = ("assigned", "bare", "expression")
KWARGS = ("params", "headers", "timeout", "body", "verify", "cookies")
USES = ("status", "json", "text", "iter_content_file", "content_file", "iter_lines", "iter_chunk_sizes",
        "raise_for_status")
# a path ending in /missing is a 404; one containing "login" makes the server set a cookie
URL_POOL = ("http://a.test/items/1", "http://a.test/login", "http://b.test/items/2", "http://a.test/missing",
            "https://b.test/login/2")

_ALIASES = {"requests": "rq", "httpx": "hx"}


class ProgramSpec(NamedTuple):
    """One generated program, knob by knob (see the tuples above for each knob's choices)."""

    library: str
    import_form: str
    placement: str
    installed: bool  # whether the library is importable (a lazy or optional import may never need it)
    context: str
    loop: str
    urls: Tuple[str, ...]
    method: str
    call_form: str
    kwargs: Tuple[str, ...]
    use: str
    names_taken: bool

    def passes_cookies(self) -> bool:
        """Whether the program sends per-call cookies (the unsafe fix may then change what is sent)."""
        return "cookies" in self.kwargs


# one loop in four runs over nothing (left alone, hypothesis makes half of all lists empty)
_URL_LISTS = st.integers(min_value=0, max_value=3).flatmap(
    lambda n: st.just(()) if n == 3 else st.lists(st.sampled_from(URL_POOL), min_size=1, max_size=3).map(tuple))


@st.composite
def program_specs(draw: Any, **fixed: Any) -> ProgramSpec:
    """A strategy of program descriptions; a keyword fixes that knob (`program_specs(placement="loop_body")`)."""

    def knob(name: str, strategy: Any) -> Any:
        return fixed[name] if name in fixed else draw(strategy)

    library = knob("library", st.sampled_from(LIBRARIES))
    placement = knob("placement", st.sampled_from(PLACEMENTS))
    # one program in four runs without its library: an optional or lazy import then never runs (or takes its
    # except branch), and a fix that adds an unconditional import breaks the program
    installed = knob("installed", st.integers(min_value=0, max_value=3).map(lambda n: n != 3))
    kwargs = knob("kwargs", st.lists(st.sampled_from(KWARGS), max_size=3, unique=True).map(tuple))
    return ProgramSpec(
        library=library,
        import_form=knob("import_form", st.sampled_from(IMPORT_FORMS)),
        placement=placement,
        installed=installed,
        context=knob("context", st.sampled_from(CONTEXTS)),
        loop=knob("loop", st.sampled_from(LOOPS)),
        urls=knob("urls", _URL_LISTS),
        method=knob("method", st.sampled_from(METHODS)),
        call_form=knob("call_form", st.sampled_from(CALL_FORMS)),
        kwargs=tuple(sorted(kwargs, key=KWARGS.index)),
        use=knob("use", st.sampled_from(USES)),
        names_taken=knob("names_taken", st.booleans()),
    )


def effective_placement(spec: ProgramSpec) -> str:
    """The placement as rendered: module-level code has no function to import in, a comprehension no body."""
    placement = spec.placement
    in_function = spec.context != "module"
    if placement == "loop_body" and spec.loop in COMPREHENSIONS:
        placement = "function" if in_function else "module"
    if not in_function:
        placement = {"function": "module", "if_before_loop": "if_module", "try_function": "try_module"}.get(
            placement, placement)
    return placement


def hidden_modules(spec: ProgramSpec) -> List[str]:
    """The libraries the program runs without."""
    return [] if spec.installed else [spec.library]


def _import(spec: ProgramSpec) -> Tuple[str, str, str]:
    """The import statement, the name it binds, and the callee expression for the spec's method."""
    lib, method = spec.library, spec.method
    if spec.import_form == "plain":
        return f"import {lib}", lib, f"{lib}.{method}"
    if spec.import_form == "alias":
        alias = _ALIASES[lib]
        return f"import {lib} as {alias}", alias, f"{alias}.{method}"
    if spec.import_form == "from":
        return f"from {lib} import {method}", method, method
    name = f"http_{method}"
    return f"from {lib} import {method} as {name}", name, name


def _call(spec: ProgramSpec, callee: str) -> str:
    args = ['"GET"', "u"] if spec.method == "request" else ["u"]
    for kwarg in spec.kwargs:
        if kwarg == "params":
            args.append('params={"page": 2}')
        elif kwarg == "headers":
            args.append('headers={"X-Trace": "t1"}')
        elif kwarg == "timeout":
            args.append("timeout=5")
        elif kwarg == "body" and spec.method in ("post", "put", "patch"):
            args.append('json={"k": 1}')
        elif kwarg == "verify":
            args.append("verify=False")
        elif kwarg == "cookies":
            # a loop over users, each with their own cookie (the case a shared session gets wrong)
            args.append('cookies={"sid": "user-" + u[-1]}')
    return f"{callee}({', '.join(args)})"


def _file_name() -> str:
    return 'u.rsplit("/", 1)[-1] + ".bin"'


def _use_statements(spec: ProgramSpec) -> List[str]:
    """What the loop body does with the response `r`."""
    use = spec.use
    if spec.method == "head" and use in ("json", "iter_lines"):
        use = "status"
    chunks = "iter_content" if spec.library == "requests" else "iter_bytes"
    if use == "status":
        return ["RESULTS.append(r.status_code)"]
    if use == "json":
        return ['RESULTS.append(r.json()["path"])']
    if use == "text":
        return ["RESULTS.append(r.text)"]
    if use == "iter_content_file":
        return [f"with open({_file_name()}, \"wb\") as f:",
                f"    for chunk in r.{chunks}(chunk_size=8):",
                "        f.write(chunk)",
                "RESULTS.append(r.status_code)"]
    if use == "content_file":
        return [f"with open({_file_name()}, \"wb\") as f:",
                "    f.write(r.content)"]
    if use == "iter_lines":
        return ["RESULTS.append(list(r.iter_lines()))"]
    if use == "iter_chunk_sizes":
        return [f"RESULTS.append([len(chunk) for chunk in r.{chunks}(chunk_size=None)])"]
    return ["try:",
            "    r.raise_for_status()",
            "except Exception as error:",
            "    RESULTS.append(type(error).__name__)"]


def _use_expression(spec: ProgramSpec, call: str) -> str:
    """What a comprehension (or an expression statement) computes from the response of `call`."""
    use = spec.use
    if spec.method == "head" and use in ("json", "iter_lines"):
        use = "status"
    if use == "json":
        return f'{call}.json()["path"]'
    if use == "text":
        return f"{call}.text"
    if use == "iter_lines":
        return f"tuple({call}.iter_lines())"  # hashable, for a set comprehension
    return f"{call}.status_code"


def _indent(lines: List[str], depth: int = 1) -> List[str]:
    return ["    " * depth + line if line else line for line in lines]


def _loop(spec: ProgramSpec, iterable: str, body: List[str], expression: str) -> List[str]:
    """The loop statement(s) running `body` (or, for comprehensions, computing `expression`) per URL."""
    loop = spec.loop
    if loop == "for":
        return [f"for u in {iterable}:", *_indent(body)]
    if loop == "nested_for":
        return [f"for u in {iterable}:", "    for attempt in range(2):", *_indent(body, 2)]
    if loop == "while_counter":
        return ["i = 0", f"while i < len({iterable}):", f"    u = {iterable}[i]", "    i += 1", *_indent(body)]
    if loop == "while_true":
        return ["i = 0", "while True:", f"    if i >= len({iterable}):", "        break", f"    u = {iterable}[i]",
                "    i += 1", *_indent(body)]
    if loop == "for_else":
        return [f"for u in {iterable}:", *_indent(body), "else:", '    RESULTS.append("done")']
    if loop == "listcomp":
        return [f"RESULTS.extend([{expression} for u in {iterable}])"]
    if loop == "setcomp":
        return [f"RESULTS.append(sorted({{{expression} for u in {iterable}}}, key=repr))"]
    if loop == "dictcomp":
        return [f"RESULTS.append({{u: {expression} for u in {iterable}}})"]
    if loop == "genexp":
        return [f"RESULTS.extend({expression} for u in {iterable})"]
    return [f"answers = ({expression} for u in {iterable})", "RESULTS.append(len(RESULTS))",
            "RESULTS.extend(answers)"]


def render(spec: ProgramSpec) -> str:
    """The program's source text."""
    placement = effective_placement(spec)
    import_line, bound, callee = _import(spec)
    in_function = spec.context != "module"
    iterable = "urls" if in_function else "URLS"

    head: List[str] = []
    helper: List[str] = []
    if placement == "module":
        head.append(import_line)
    elif placement == "try_module":
        head += ["try:", f"    {import_line}", "except ImportError:", f"    {bound} = None"]
    if placement == "lazy_helper":
        # the call moves into a helper that imports the library when it runs; the loop calls the helper
        helper = ["def fetch(u):", f"    {import_line}", f"    return {_call(spec, callee)}", "", ""]
        call = "fetch(u)"
    else:
        call = _call(spec, callee)

    if spec.loop in COMPREHENSIONS or spec.call_form == "expression":
        body = [f"RESULTS.append({_use_expression(spec, call)})"]
    elif spec.call_form == "bare":
        body = [call, 'RESULTS.append("sent")']
    else:
        body = [f"r = {call}", *_use_statements(spec)]
    if placement == "loop_body":
        body = [import_line, *body]
    loop = _loop(spec, iterable, body, _use_expression(spec, call))

    before: List[str] = []
    after: List[str] = []
    if spec.names_taken:
        # names a fix might pick for its session: they must keep their values
        before.append('session = client = http_session = "mine"')
        after.append("RESULTS.append((session, client, http_session))")
    if placement == "if_before_loop":
        before += [f"if {iterable}:", f"    {import_line}"]
    elif placement == "function":
        before.insert(0, import_line)
    elif placement == "try_function":
        before += ["try:", f"    {import_line}", "except ImportError:", f"    {bound} = None"]
    guard: List[str] = []
    if placement.startswith("try_"):
        guard = [f"if {bound} is None:", '    RESULTS.append("no library")']

    lines = [*head, ""] if head else []
    lines += [f"URLS = {list(spec.urls)!r}", "RESULTS = []", ""]
    if placement == "if_module":
        lines += ["if URLS:", f"    {import_line}", ""]
    lines += ["", *helper] if helper else [""]
    if in_function:
        early_return = [*guard, "    return None"] if guard else []
        function = [*before, *early_return, *loop, *after, "return len(RESULTS)"]
        lines += ["def work(urls):", *_indent(function), "", ""]
        if spec.context == "function_once":
            lines += ["work(URLS)"]
        elif spec.context == "function_twice":
            lines += ["work(URLS)", "work(URLS)"]
        else:
            lines += ["for _round in range(3):", "    work(URLS)"]
    else:
        lines += [*before]
        if guard:
            lines += [*guard, "else:", *_indent(loop)]
        else:
            lines += loop
        lines += after
    lines.append("print(RESULTS)")
    return "\n".join(lines) + "\n"


def describe(spec: ProgramSpec) -> Dict[str, Any]:
    """The knobs as rendered (placement after normalisation), for grouping failures."""
    out = spec._asdict()
    out["placement"] = effective_placement(spec)
    return out
