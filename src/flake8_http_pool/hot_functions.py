"""Hot functions: the defs of a module that run many times (RULES.md, "Hot function", sources 1-4)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from .bindings import (ASSIGN, DEF, IMPORT, ClassInfo, FunctionInfo, Scope, class_method, dotted_name, lookup,
                       resolve)
from .walk import is_mapping_call

if TYPE_CHECKING:  # pragma: no cover
    from .analysis import Analysis
    from .walk import Ctx

_HANDLER_ATTRS = frozenset({"route", "get", "post", "put", "patch", "delete", "api_route", "websocket"})
_TASK_NAMES = frozenset({"route", "task", "shared_task", "periodic_task", "actor", "job", "scheduled_job"})
# Decorators that end like a handler but are not one (`@mock.patch(...)` on a test, `@pytest.mark.event`).
_NOT_HANDLERS = ("mock.", "unittest.mock.", "patch.", "pytest.")
# Chat-bot and event frameworks (discord.py, aiogram, pyTelegramBotAPI, Slack Bolt, ...): the last attribute of
# the decorator -> how a message calls such a function. Only with an object that is not `self` (RULES.md).
_CHAT_ATTRS = {
    "command": "a bot command handler",
    "message_handler": "a message handler",
    "callback_query_handler": "a callback query handler",
    "inline_handler": "an inline query handler",
    "message": "a message handler",
    "event": "an event handler",
    "action": "an action handler",
    "shortcut": "a shortcut handler",
    "view": "a view submission handler",
    "listener": "an event listener",
    "loop": "a task run on a timer",
}
# Command-line and build-task frameworks whose `@x.command()` / `@task` runs once per process, not per message
# or job: a deliberate exception to "an attribute decorator ending in command" and to the bare `task` (RULES.md)
# when the object is one of them or what they built (`@click.group() def cli()` then `@cli.command()`).
_CLI_LIBRARIES = frozenset({"click", "typer", "asyncclick", "cloup", "rich_click", "cyclopts", "flask_script",
                            "invoke", "fabric", "fabric2", "paver"})
# Sanic's server lifecycle listeners (`@app.listener("before_server_start")`) run once per worker process.
_LIFECYCLE_EVENTS = frozenset({"before_server_start", "after_server_start", "before_server_stop",
                               "after_server_stop", "main_process_start", "main_process_stop",
                               "main_process_ready", "reload_process_start", "reload_process_stop"})

# Registration without a decorator: method name -> (positional index of the handler, keyword names).
_REGISTRATIONS = {
    "add_url_rule": (2, ("view_func",)),
    "add_api_route": (1, ("endpoint",)),
    "add_api_websocket_route": (1, ("endpoint",)),
    "add_route": (2, ("handler",)),
    "add_get": (1, ("handler",)),
    "add_post": (1, ("handler",)),
    "add_put": (1, ("handler",)),
    "add_patch": (1, ("handler",)),
    "add_delete": (1, ("handler",)),
    "add_head": (1, ("handler",)),
    "add_view": (1, ("handler",)),
}


# Route objects that register a handler when handed to the app (`app.add_routes([web.get("/", f)])`,
# `Starlette(routes=[Route("/", f)])`): library function -> (positional index of the handler, keyword names).
_ROUTE_DEFINITIONS = {
    **{f"aiohttp.web.{verb}": (1, ("handler",)) for verb in ("get", "post", "put", "patch", "delete", "head", "view")},
    "aiohttp.web.route": (2, ("handler",)),
    "starlette.routing.Route": (1, ("endpoint",)),
    "starlette.routing.WebSocketRoute": (1, ("endpoint",)),
    "fastapi.routing.APIRoute": (1, ("endpoint",)),
}


def decorator_reason(decorator: ast.expr, user_names: tuple, scope: Optional[Scope] = None) -> Optional[str]:
    """Why a decorator makes its function hot (a handler or task), or None. `scope`, the scope the decorator is
    evaluated in, lets a command-line framework's `@cli.command()` be told from a bot's `@bot.command()`."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    dotted = dotted_name(target)
    if dotted is None:
        return None
    for name in user_names:
        if dotted == name or dotted.endswith("." + name) or dotted.split(".")[-1] == name:
            return f"decorated with @{dotted}"
    if dotted.startswith(_NOT_HANDLERS):
        return None
    parts = dotted.split(".")
    last = parts[-1]
    if len(parts) > 1 and last in _HANDLER_ATTRS:
        return f"a request handler, @{dotted}"
    if last in _TASK_NAMES:
        if last == "task" and scope is not None and _built_by_cli_library(target, scope):
            return None  # invoke's / fabric's `@task`: a build step
        return f"a task, @{dotted}" if last != "route" else f"a request handler, @{dotted}"
    if len(parts) > 1 and last in _CHAT_ATTRS and parts[0] not in ("self", "cls"):
        if last == "command" and ((len(parts) > 2 and parts[-2] == "cli") or (
                scope is not None and isinstance(target, ast.Attribute)
                and _built_by_cli_library(target.value, scope))):
            return None  # click, typer, Flask's `@app.cli.command()`: run once per process
        if last == "listener" and isinstance(decorator, ast.Call) and decorator.args \
                and isinstance(decorator.args[0], ast.Constant) and decorator.args[0].value in _LIFECYCLE_EVENTS:
            return None
        return f"{_CHAT_ATTRS[last]}, @{dotted}"
    if last == "run_async":  # python-telegram-bot 12: runs the handler in the dispatcher's thread pool
        return f"a bot handler, @{dotted}"
    if dotted in _CLOUD_FUNCTIONS:
        return f"a Google Cloud Functions entry point, @{dotted}"
    if scope is not None and len(parts) == 1 and last in ("http", "cloud_event"):
        meaning = resolve(target, scope)  # `from functions_framework import http` then `@http`
        if meaning is not None and meaning.kind == "lib" and meaning.qual in _CLOUD_FUNCTIONS:
            return f"a Google Cloud Functions entry point, @{meaning.qual}"
    return None


_CLOUD_FUNCTIONS = frozenset({"functions_framework.http", "functions_framework.cloud_event"})


def _built_by_cli_library(expr: ast.expr, scope: Scope, depth: int = 0) -> bool:
    """`expr` is a command-line library (`click`), or what one built: `cli` after `@click.group() def cli()`,
    `app = typer.Typer()`, `sub` after `@cli.group() def sub()`."""
    while isinstance(expr, (ast.Attribute, ast.Call)):
        expr = expr.value if isinstance(expr, ast.Attribute) else expr.func
    if not isinstance(expr, ast.Name) or depth > 8:
        return False
    binding = lookup(expr.id, scope, (expr.lineno, expr.col_offset))
    if binding is None:
        return False
    if binding.kind == IMPORT:
        return str(binding.value).split(".")[0] in _CLI_LIBRARIES
    if binding.kind == ASSIGN and isinstance(binding.value, ast.Call):
        return _built_by_cli_library(binding.value.func, binding.scope, depth + 1)
    if binding.kind == DEF and isinstance(binding.value, FunctionInfo):
        return any(_built_by_cli_library(d.func if isinstance(d, ast.Call) else d, binding.scope, depth + 1)
                   for d in binding.value.node.decorator_list)
    return False


# Handler objects of python-telegram-bot (`CommandHandler("start", f)`, handed to `add_handler` or held in a
# `ConversationHandler`'s entry points, states and fallbacks): class name -> (positional index of the callback,
# keyword names). Matched on the name, as RULES.md does; the callback must be a function of the project.
_HANDLER_OBJECTS = {
    "CommandHandler": (1, ("callback",)),
    "PrefixHandler": (2, ("callback",)),
    "MessageHandler": (1, ("callback",)),
    "RegexHandler": (1, ("callback",)),
    "CallbackQueryHandler": (0, ("callback",)),
    "InlineQueryHandler": (0, ("callback",)),
    "ChosenInlineResultHandler": (0, ("callback",)),
    "PollAnswerHandler": (0, ("callback",)),
    "PollHandler": (0, ("callback",)),
    "ChatMemberHandler": (0, ("callback",)),
    "ChatJoinRequestHandler": (0, ("callback",)),
    "PreCheckoutQueryHandler": (0, ("callback",)),
    "ShippingQueryHandler": (0, ("callback",)),
}
# Registration methods of bots and job queues: method name -> (positional index of the function, keyword names,
# the verb of the reason). `do` (schedule) and `register` (aiogram 3) have conditions of their own, below.
_BOT_REGISTRATIONS = {
    **{f"register_{kind}_handler": (0, ("callback",), "registered with")
       for kind in ("message", "edited_message", "channel_post", "edited_channel_post", "callback_query",
                    "inline", "chosen_inline", "shipping_query", "pre_checkout_query", "poll", "poll_answer",
                    "my_chat_member", "chat_member", "chat_join_request")},
    "add_job": (0, ("func",), "scheduled with"),  # APScheduler
    "enqueue": (0, ("f",), "queued with"),  # RQ
    "enqueue_call": (0, ("func",), "queued with"),
    "enqueue_in": (1, ("f",), "queued with"),
    "enqueue_at": (1, ("f",), "queued with"),
    # python-telegram-bot's JobQueue; `run_once` is left out: it runs its callback once.
    "run_repeating": (0, ("callback",), "scheduled with"),
    "run_daily": (0, ("callback",), "scheduled with"),
    "run_monthly": (0, ("callback",), "scheduled with"),
}
# aiogram 3's observers: `router.message.register(f, ...)`.
_AIOGRAM_OBSERVERS = frozenset({
    "message", "edited_message", "channel_post", "edited_channel_post", "callback_query", "inline_query",
    "chosen_inline_result", "shipping_query", "pre_checkout_query", "poll", "poll_answer", "my_chat_member",
    "chat_member", "chat_join_request", "errors"})
# Django's URL patterns: the view is the second argument (or `view=`).
_DJANGO_ROUTES = frozenset({"django.urls.path", "django.urls.re_path", "django.conf.urls.url",
                            "django.conf.urls.re_path"})
# The methods a class-based view dispatches a request to (`View.as_view()` in a URL pattern).
VIEW_METHODS = ("get", "post", "put", "patch", "delete", "head", "options", "dispatch")


def _argument(call: ast.Call, index: int, keywords: Tuple[str, ...]) -> Optional[ast.expr]:
    handler = call.args[index] if len(call.args) > index and not isinstance(call.args[index], ast.Starred) else None
    for keyword in call.keywords:
        if keyword.arg in keywords:
            handler = keyword.value
    return handler


def _starts_with_every(expr: ast.expr) -> bool:
    """The receiver chain of `.do` starts with a call of `every` (`schedule.every(10).minutes`, `every().day`)."""
    while isinstance(expr, (ast.Attribute, ast.Call)):
        if isinstance(expr, ast.Call):
            name = dotted_name(expr.func)
            if name is not None and name.split(".")[-1] == "every":
                return True
            expr = expr.func
        else:
            expr = expr.value
    return False


def handler_registrations(analysis: "Analysis", call: ast.Call, ctx) -> List[Tuple[ast.expr, str]]:
    """The functions a call registers as handlers or jobs (RULES.md, hot source 3, "registered without a
    decorator"), each with the reason: `(expression naming the function, "registered with CommandHandler()")`.
    The expression may be `View.as_view()`: then the class's HTTP-verb methods are the handlers."""
    found: List[Tuple[ast.expr, str]] = []
    func = call.func
    if isinstance(func, ast.Attribute):
        attr = func.attr
        if attr in _REGISTRATIONS:
            index, keywords = _REGISTRATIONS[attr]
            handler = _argument(call, index, keywords)
            if handler is not None:
                found.append((handler, f"registered with {attr}()"))
        elif attr in _BOT_REGISTRATIONS:
            index, keywords, verb = _BOT_REGISTRATIONS[attr]
            handler = _argument(call, index, keywords)
            if handler is not None:
                found.append((handler, f"{verb} {attr}()"))
        elif attr == "do" and _starts_with_every(func.value):
            handler = _argument(call, 0, ("job_func",))
            if handler is not None:
                found.append((handler, "scheduled with every().do()"))
        elif attr == "register" and isinstance(func.value, ast.Attribute) and func.value.attr in _AIOGRAM_OBSERVERS:
            handler = _argument(call, 0, ("callback",))
            if handler is not None:
                found.append((handler, f"registered with {func.value.attr}.register()"))
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name in _HANDLER_OBJECTS:
        index, keywords = _HANDLER_OBJECTS[name]
        handler = _argument(call, index, keywords)
        if handler is not None:
            found.append((handler, f"registered with {name}()"))
    if isinstance(func, ast.Call) and len(call.args) == 1 and not call.keywords:
        # A decorator applied by hand: Slack Bolt's `app.command("/x")(f)`, `app.route("/")(f)`.
        reason = decorator_reason(func, analysis.options.hot_decorators, ctx.scope)
        if reason is not None:
            found.append((call.args[0], f"registered with {dotted_name(func.func)}()"))
    if isinstance(func, (ast.Name, ast.Attribute)) and (call.args or call.keywords):
        meaning = analysis.meaning(func, ctx.scope)
        if meaning is not None and meaning.kind == "lib":
            if meaning.qual in _DJANGO_ROUTES:
                handler = _argument(call, 1, ("view",))
                if handler is not None:
                    found.append((handler, f"registered with {meaning.qual.rsplit('.', 1)[-1]}()"))
            elif meaning.qual in _ROUTE_DEFINITIONS:
                index, keywords = _ROUTE_DEFINITIONS[meaning.qual]
                handler = _argument(call, index, keywords)
                if handler is not None:
                    found.append((handler, f"registered with {meaning.qual.rsplit('.', 1)[-1]}()"))
    return found


def view_class(handler: ast.expr) -> Optional[ast.expr]:
    """`View` in `View.as_view(...)` (a class-based view handed to a URL pattern), else None."""
    if isinstance(handler, ast.Call) and isinstance(handler.func, ast.Attribute) and handler.func.attr == "as_view":
        return handler.func.value
    return None


def _entry_point_reason(analysis: "Analysis", func: FunctionInfo) -> Optional[str]:
    """A serverless entry point, which runs once per invocation: AWS Lambda's module-level
    `def lambda_handler(event, context)` / `def handler(event, context)`, Azure's `def main(req: func.HttpRequest)`."""
    if func.parent is not None or func.cls is not None:
        return None
    args = func.node.args
    positional = [*getattr(args, "posonlyargs", ()), *args.args]
    if len(positional) == 2 and (
        func.name == "lambda_handler"
        or (func.name == "handler" and [a.arg.lstrip("_") for a in positional] == ["event", "context"])
    ):
        return "an AWS Lambda entry point"
    scope = func.scope.parent or analysis.facts.module_scope
    for arg in [*positional, *args.kwonlyargs]:
        annotation = arg.annotation
        # The name first: resolving every annotation of every module-level def is work for nothing in almost
        # every module.
        if (isinstance(annotation, ast.Attribute) and annotation.attr == "HttpRequest") or (
                isinstance(annotation, ast.Name) and annotation.id == "HttpRequest"):
            meaning = analysis.meaning(annotation, scope)
            if meaning is not None and meaning.kind == "lib" and meaning.qual == "azure.functions.HttpRequest":
                return "an Azure Functions entry point"
    return None


def function_key(func: FunctionInfo) -> str:
    """The name of a def inside its module, enclosing defs and classes included (`Api.fetch`, `main.worker`):
    how the project model (project.py) names a function across modules and hands it back as a seed."""
    parts = [func.name]
    current: Optional[FunctionInfo] = func
    while current is not None:
        if current.cls is not None:
            parts.append(current.cls.name)
        current = current.parent
        if current is not None:
            parts.append(current.name)
    return ".".join(reversed(parts))


# A site of sources 1-3 whose function is not a def of this module: (the expression naming it, its Ctx, the
# reason, the line). The project model resolves such expressions through imports (project.py).
Unresolved = Tuple[ast.AST, "Ctx", str, int]


def find_hot_functions(
    analysis: "Analysis", places: Optional[Dict[FunctionInfo, int]] = None,
    unresolved: Optional[List[Unresolved]] = None,
) -> Dict[FunctionInfo, str]:
    """Every hot function of the module with why it is hot (the first reason found), sources 1-4.

    `places`, when given, receives for each hot function the line of the loop call, mapping call, registration
    or decorator that makes it (or the hot function calling it, transitively) hot: the project model keeps it.
    Functions the project model found hot from other modules (`analysis.extra_hot`, function key -> reason)
    join as seeds after the module's own sources 1-3, so the module's own reason wins where both hold.
    `unresolved`, when given, receives every site of sources 1-3 whose callee or callable is no def of this
    module: what may make another module's function hot (one list of such sites, kept here, for both).
    """
    hot: Dict[FunctionInfo, str] = {}
    queue: List[FunctionInfo] = []

    def mark(func: Optional[FunctionInfo], reason: str, line: int = 0) -> None:
        if func is not None and func not in hot:
            hot[func] = reason
            queue.append(func)
            if places is not None:
                places[func] = line

    # Source 3: decorators, and serverless entry points.
    for func in analysis.facts.functions:
        for decorator in func.node.decorator_list:
            reason = decorator_reason(decorator, analysis.options.hot_decorators, func.scope.parent)
            if reason is not None:
                mark(func, reason, decorator.lineno)
                break
        else:
            reason = _entry_point_reason(analysis, func)
            if reason is not None:
                mark(func, reason, func.node.lineno)

    def seek(func: Optional[FunctionInfo], expr: ast.AST, ctx: "Ctx", reason: str, line: int) -> None:
        if func is not None:
            mark(func, reason, line)
        elif unresolved is not None:
            unresolved.append((expr, ctx, reason, line))

    # Sources 1 and 2: called or passed in a loop scope; passed to a mapping call; registered as a handler.
    for site in analysis.facts.calls:
        call, ctx = site
        looping: Optional[bool] = None
        callee = analysis.function_target(call.func, ctx)
        if callee is not None or unresolved is not None:
            looping = analysis.in_loop(ctx, call)
            if looping:
                seek(callee, call.func, ctx, "called in a loop", call.lineno)
        if not call.args and not call.keywords:
            continue
        mapping = is_mapping_call(call, ctx.scope)
        for arg in [*call.args, *(kw.value for kw in call.keywords if kw.arg is not None)]:
            if isinstance(arg, ast.Starred):
                continue
            target = analysis.function_target(arg, ctx)
            if target is None and unresolved is None:
                continue
            if mapping:
                seek(target, arg, ctx, "mapped over items", call.lineno)
                continue
            if looping is None:
                looping = analysis.in_loop(ctx, call)
            if looping:
                seek(target, arg, ctx, "passed as a callable in a loop", call.lineno)
        for handler, reason in handler_registrations(analysis, call, ctx):
            view = view_class(handler)
            if view is None:
                seek(analysis.function_target(handler, ctx), handler, ctx, reason, call.lineno)
                continue
            meaning = analysis.meaning(view, ctx.scope)
            if meaning is not None and meaning.kind == "class" and isinstance(meaning.node, ClassInfo):
                for verb in VIEW_METHODS:
                    mark(class_method(meaning.node, verb), reason, call.lineno)
            elif unresolved is not None:
                unresolved.append((handler, ctx, reason, call.lineno))  # the project model finds the class

    extra = getattr(analysis, "extra_hot", None)
    if extra:
        for func in analysis.facts.functions:
            reason = extra.get(function_key(func))
            if reason is not None:
                mark(func, reason)

    # Source 4: called from a hot function.
    while queue:
        func = queue.pop()
        line = places.get(func, 0) if places is not None else 0
        for site in func.calls:
            mark(analysis.function_target(site.node.func, site.ctx), f"called from {func.qualname}()", line)
    return hot
