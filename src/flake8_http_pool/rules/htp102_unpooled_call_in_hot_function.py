"""HTP102 unpooled-call-in-hot-function: an unpooled request function called in a function that runs many times."""

from ..checks import connections
from ..rule import FIX_UNSAFE, Rule

RULE = Rule(
    code="HTP102",
    name="unpooled-call-in-hot-function",
    summary="A request function that opens its own connection, called in a function that runs many times",
    message="{call}() in {function}(), which runs many times ({reason}), opens a new connection on every call; {remedy}",
    fix=FIX_UNSAFE,
    fix_sites=(
        "report only where the project patches or wraps the rewritten name, where the response's cookies are read, where the library is imported optionally or only inside functions, or where the function is looked up by `getattr`"
    ),
    fix_title="Share one module-level {client}",
    check=connections.unpooled_call_in_hot_function,
    what_it_does="""\
Checks for the same connection-per-request functions as HTP101 (`requests.get()`, `httpx.post()`,
`aiohttp.request()`, `urllib.request.urlopen()` / `urlretrieve()`, their `niquests` / `httpx2` twins,
`grequests.*` without `session=`, `getattr(requests, m)(...)`), called outside any loop but inside a
function that runs many times. A function of the module is taken to run many times when:

1. it is called, or handed over as a callable, inside a loop of the module (`fetch(u)`, `self.fetch(u)`,
   `pool.submit(fetch, u)`, `asyncio.create_task(fetch(u))`, `threading.Thread(target=fetch)`);
2. it is handed to a mapping call anywhere (`map`, `executor.map`, `pool.map` / `imap` / `starmap` /
   `apply_async`, `loop.run_in_executor`, `asyncio.gather(*(...))`);
3. it is a request, message or job handler:
   - decorated with an attribute ending in `route`, `get`, `post`, `put`, `patch`, `delete`, `api_route`
     or `websocket` (`@app.get("/")`, `@bp.route(...)`); with `route`, `task`, `shared_task`,
     `periodic_task`, `actor`, `job` or `scheduled_job` (`@shared_task`, `@celery.task(bind=True)`,
     `@scheduler.scheduled_job(...)`); as a chat-bot or event handler, with an attribute (on an object
     other than `self`) ending in `command`, `message_handler`, `callback_query_handler`,
     `inline_handler`, `message`, `event`, `action`, `shortcut`, `view`, `listener` or `loop`
     (`@bot.command()`, `@client.event`, `@tasks.loop(minutes=5)`, `@dp.message_handler(...)`,
     `@router.message(...)`, Slack Bolt's `@app.command("/x")`), or with python-telegram-bot's
     `@run_async`; or with a decorator named in the `hot-decorators` option. What runs once per process
     is not a handler: a `command` of click or typer (`@click.command()`, `@cli.command()` under
     `@click.group()`, `typer.Typer().command()`, Flask's `@app.cli.command()`), invoke's or fabric's
     `@task`, and Sanic's server lifecycle listeners (`@app.listener("before_server_start")`);
   - registered without a decorator: `add_url_rule(..., view_func=f)`, `add_api_route(path, f)`,
     `router.add_get(path, f)`; Django's `path(route, f)`, `re_path(...)`, `url(...)` (and the
     `get`/`post`/`put`/`patch`/`delete`/`head`/`options`/`dispatch` methods of a class passed as
     `View.as_view()`); python-telegram-bot's `CommandHandler(cmd, f)`, `MessageHandler(filters, f)`,
     `CallbackQueryHandler(f)`, `InlineQueryHandler(f)` (also in a `ConversationHandler`);
     `bot.register_message_handler(f, ...)`, aiogram's `router.message.register(f)`, Slack Bolt's
     `app.command("/x")(f)`; schedulers and job queues: `schedule.every(...).do(f)`,
     `scheduler.add_job(f, ...)`, RQ's `queue.enqueue(f, ...)` / `enqueue_call(func=f)`,
     `job_queue.run_repeating(f, ...)` / `run_daily` / `run_monthly` (not `run_once`);
   - a serverless entry point: a module-level `def lambda_handler(event, context)` or
     `def handler(event, context)` (AWS Lambda), `@functions_framework.http` / `.cloud_event`, or a
     module-level def taking an `azure.functions.HttpRequest`; or
4. it is called from a function that runs many times.

A call that is also inside a loop is HTP101, not HTP102. Code at module level, and under
`if __name__ == "__main__":`, runs once.""",
    why_bad="""\
The connection set-up that HTP101 finds in a loop is here spread over calls: every time the handler, task
or worker function runs, it connects (TCP, and TLS over HTTPS), sends one request and hangs up. A web
service that calls a backend API from its request handler pays a handshake per incoming request, and under
load that handshake is often the largest part of the outbound call.

One long-lived client keeps the connections open between calls. A `requests.Session` is 8-25 % faster than
`requests.get` over plain HTTP on loopback, keep-alive behind nginx gave 10-15 % more requests per second,
and over HTTPS the saved handshake is worth far more than that.""",
    example="""\
import requests
from flask import Flask

app = Flask(__name__)


@app.get("/weather/<city>")
def weather(city):
    r = requests.get(f"https://api.example.com/weather/{city}", timeout=5)  # HTP102
    return r.json()
""",
    use_instead="""\
import requests
from flask import Flask

app = Flask(__name__)
_HTTP_SESSION = requests.Session()


@app.get("/weather/<city>")
def weather(city):
    r = _HTTP_SESSION.get(f"https://api.example.com/weather/{city}", timeout=5)
    return r.json()
""",
    fix_safety="""\
The fix is unsafe. It adds one module-level client (`_HTTP_SESSION = requests.Session()`, `_HTTP_CLIENT =
httpx.Client()` for httpx; an existing module-level client made the same way is reused) and sends the request
through it (`_HTTP_SESSION.get(...)`). The client goes after the module's whole import block - after its last
import before the first `def` or `class`, never between two imports or inside a `try:` of imports.

That client lives for the whole process and is shared by every caller and every thread. A cookie set by a
response to one caller is sent with the next caller's request to that host, anything one caller sets on the
session (headers, auth, mounted adapters) applies to all, and requests does not promise that a `Session` is
safe to use from several threads at once. Review that the calls carry no per-user state in cookies, and
keep one session per thread (`threading.local`) where threads share the module.

Across modules (`fix --preview`, or `preview = true`): a request wrapper made hot by a loop, handler or task
in another module of the project gets its shared client in its own module, the wrapper's, exactly as above;
the callers' modules are not touched.

Report only (no fix offered):
- the program reads the response's cookies (`requests.get(u).cookies`, `r.cookies` of a response bound in the
  same scope): code that fetches a fresh cookie per call would get the shared jar's old one sent back, and a
  server that sees it sets none;
- the library is imported lazily (only inside a function) or optionally (`try: import requests except
  ImportError: ...`, under an `if`): a module-level client would raise where the program used to start
  without the library;
- the rewritten name is patched or wrapped anywhere in the project (`mock.patch("pkg.mod.requests.get")`,
  `mock.patch.object(mod, "get")`, `monkeypatch.setattr(requests, "get", ...)`, `requests.get = wrapper`):
  the tests and wrappers would silently stop applying;
- the renamed call would push a line past 79 characters (or past the module's longest line, if that is
  longer): the fixed file must pass pycodestyle where the original did;
- `aiohttp.request` (no module-level session outside an event loop), `urllib.request.urlopen` and
  `urlretrieve` (no session), a function looked up by `getattr` (`getattr(session, m)` fails where `m`
  names an attribute of the module that a session lacks), in-house calls from `unpooled-calls`, and calls
  whose arguments the session method does not take.

An import the rewritten calls made unused is removed, except a name code outside the module may reach:
one listed in `__all__`, re-exported as `from requests import get as get`, or patched by the project.
Comments survive the fix. The shared client does not hide HTP403: a call through it in an `async def` is
still reported.""",
    options="""\
- `hot-decorators` (`--http-pool-hot-decorators` for flake8, `hot-decorators` in `[tool.flake8-http-pool]` of
  `pyproject.toml`): more decorators, as dotted names, that mark a function as a handler or task
  (`hot-decorators = ["myframework.endpoint"]`).
- `unpooled-calls` (`[tool.flake8-http-pool]` of `pyproject.toml`): more functions that open a connection
  per call, such as in-house wrappers, as ast-grep patterns (`mycorp.http.get($$$)`).""",
    references=(
        "https://requests.readthedocs.io/en/latest/user/advanced/#session-objects",
        "https://www.python-httpx.org/advanced/clients/",
        "https://docs.aiohttp.org/en/stable/client_reference.html",
    ),
    valid=(
        """\
# run once, from the main guard
import requests


def main():
    print(requests.get(STATUS_URL).status_code)


if __name__ == "__main__":
    main()
""",
        """\
# a bare @get decorator does not make a handler
import requests
from mylib import get


@get
def status():
    return requests.get(STATUS_URL).json()
""",
        """\
# mock.patch decorates a test, not a handler
from unittest import mock
import requests


@mock.patch("requests.get")
def test_status(fake_get):
    requests.get(STATUS_URL)
""",
        """\
# submit outside a loop runs the function once
from concurrent.futures import ThreadPoolExecutor
import requests


def fetch(url):
    return requests.get(url).text


with ThreadPoolExecutor() as pool:
    future = pool.submit(fetch, INDEX_URL)
""",
        """\
# a handler that calls through a shared session
import requests
from fastapi import APIRouter

router = APIRouter()
SESSION = requests.Session()


@router.get("/users/{uid}")
def user(uid):
    return SESSION.get(f"{API}/users/{uid}").json()
""",
    ),
    invalid=(
        """\
# a function mapped over items
import httpx


def fetch(url):
    return httpx.get(url).json()  # HTP102


results = list(map(fetch, URLS))
""",
        """\
# a celery task decorated with shared_task
import requests
from celery import shared_task


@shared_task
def ping(url):
    requests.head(url, timeout=3)  # HTP102
""",
        """\
# called from a function that is called in a loop
import requests


def _get(path):
    return requests.get(BASE + path)  # HTP102


def load(item_id):
    return _get(f"/items/{item_id}").json()


for item_id in IDS:
    load(item_id)
""",
        """\
# a method called in a loop through self
import requests


class Crawler:
    def fetch(self, url):
        return requests.get(url, timeout=5)  # HTP102

    def run(self, urls):
        for url in urls:
            self.fetch(url)
""",
        """\
# a view registered with add_url_rule
import requests
from flask import Flask

app = Flask(__name__)


def health():
    return requests.get(UPSTREAM).text  # HTP102


app.add_url_rule("/health", "health", view_func=health)
""",
        """\
# aiohttp.request in a coroutine gathered over urls
import asyncio
import aiohttp


async def fetch(url):
    async with aiohttp.request("GET", url) as resp:  # HTP102
        return await resp.text()


async def main(urls):
    return await asyncio.gather(*(fetch(u) for u in urls))
""",
        """\
# a bound celery task
import requests
from proj.celery import app


@app.task(bind=True, max_retries=3)
def sync_account(self, account_id):
    requests.post(f"{API}/accounts/{account_id}/sync")  # HTP102
""",
        """\
# an aiohttp handler registered with add_get is also HTP403
import requests
from aiohttp import web


async def rates(request):
    return web.json_response(requests.get(RATES_URL).json())  # HTP102, HTP403


app = web.Application()
app.router.add_get("/rates", rates)
""",
        """\
# an async handler calling requests is also HTP403
import requests
from fastapi import FastAPI

app = FastAPI()


@app.get("/quote")
async def quote():
    return requests.get(QUOTE_URL).json()  # HTP102, HTP403
""",
    ),
)
