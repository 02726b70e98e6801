"""Chat-bot, registration, scheduler and serverless handlers as hot functions (RULES.md, hot source 3), through the
real front ends: every form in one module through `flake8-http-pool check` and flake8, positives and lookalikes
that must stay quiet; and across modules through `check --preview` on small trees (handlers registered in
main.py while defined in modules/*.py, Django urls.py -> views.py with a class-based view, jobs.py -> tasks.py).

Each single-module case is one file; a line that must be reported ends in `# expect HTP102` (or another code),
and a file without such a comment must produce nothing. All cases run in one `check` and one flake8 process."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

from cli_support import run_cli

_EXPECT = re.compile(r"#\s*expect ((?:HTP\d{3} ?)+)")
_LINE = re.compile(r"^(?P<path>.*?):(?P<line>\d+):(?P<col>\d+): (?P<code>HTP\d{3}) (?P<message>.*)$")

# -- one module ------------------------------------------------------------------------------------------
# name -> (source, words the HTP1xx message must hold: the reason, as it reads)
_CASES: Dict[str, Tuple[str, str]] = {
    "discord_bot_command": ("""\
        import aiohttp
        import discord
        from discord.ext import commands

        bot = commands.Bot(command_prefix="!", intents=discord.Intents.default())


        @bot.command()
        async def cover(ctx, title):
            async with aiohttp.ClientSession() as session:  # expect HTP104
                async with session.get("https://covers.example.com", params={"q": title}) as resp:
                    await ctx.send(str(resp.url))
        """, "a bot command handler, @bot.command"),
    "discord_client_event": ("""\
        import aiohttp
        import discord

        client = discord.Client(intents=discord.Intents.default())


        @client.event
        async def on_message(message):
            async with aiohttp.request("GET", "https://x.example.com") as resp:  # expect HTP102
                await message.channel.send(await resp.text())
        """, "an event handler, @client.event"),
    "discord_cog": ("""\
        import requests
        from discord.ext import commands, tasks


        class Music(commands.Cog):
            @commands.command()
            async def lyrics(self, ctx, title):
                ctx.reply(requests.get("https://lyrics.example.com", params={"q": title}).text)  # expect HTP102 HTP403

            @commands.Cog.listener()
            async def on_member_join(self, member):
                requests.post("https://hooks.example.com", json={"id": member.id})  # expect HTP102 HTP403

            @tasks.loop(minutes=5)
            async def refresh(self):
                requests.get("https://feeds.example.com")  # expect HTP102 HTP403
        """, "a bot command handler, @commands.command"),
    "discord_tree_command": ("""\
        import requests
        from discord import app_commands

        tree = app_commands.CommandTree(None)


        @tree.command(name="ping")
        async def ping(interaction):
            await interaction.response.send_message(requests.get("https://x.example.com").text)  # expect HTP102 HTP403
        """, "a bot command handler, @tree.command"),
    "aiogram2_decorator": ("""\
        import aiohttp
        from aiogram import Bot, Dispatcher

        dp = Dispatcher(Bot(token="t"))


        @dp.message_handler(commands=["item"])
        async def item(message):
            async with aiohttp.ClientSession() as session:  # expect HTP104
                await message.answer(await (await session.get("https://shop.example.com")).text())
        """, "a message handler, @dp.message_handler"),
    "aiogram3_router": ("""\
        import requests
        from aiogram import F, Router

        router = Router()


        @router.message(F.text)
        async def echo(message):
            await message.answer(requests.get("https://echo.example.com").text)  # expect HTP102 HTP403


        @router.callback_query(F.data == "x")
        async def not_listed(query):
            # `callback_query` is no decorator name RULES.md lists: not a handler by itself.
            await query.answer(requests.get("https://x.example.com").text)  # expect HTP403
        """, "a message handler, @router.message"),
    "telebot_decorators": ("""\
        import requests
        import telebot

        bot = telebot.TeleBot("t")


        @bot.message_handler(commands=["help"])
        def send_help(message):
            bot.reply_to(message, requests.get("https://help.example.com").text)  # expect HTP102


        @bot.callback_query_handler(func=lambda call: True)
        def on_button(call):
            requests.get("https://buttons.example.com")  # expect HTP102


        @bot.inline_handler(lambda query: True)
        def on_inline(query):
            requests.get("https://inline.example.com")  # expect HTP102
        """, "a message handler, @bot.message_handler"),
    "slack_bolt_decorators": ("""\
        import requests
        from slack_bolt import App

        app = App(token="t", signing_secret="s")


        @app.command("/weather")
        def weather(ack, respond, command):
            ack()
            respond(requests.get("https://weather.example.com").text)  # expect HTP102


        @app.event("app_mention")
        def mention(event, say):
            say(requests.get("https://x.example.com").text)  # expect HTP102


        @app.action("approve")
        def approve(ack):
            requests.post("https://approvals.example.com")  # expect HTP102


        @app.shortcut("open")
        def shortcut(ack):
            requests.post("https://x.example.com/open")  # expect HTP102


        @app.view("modal")
        def submitted(ack):
            requests.post("https://x.example.com/modal")  # expect HTP102
        """, "a bot command handler, @app.command"),
    "ptb_run_async": ("""\
        import requests
        from telegram.ext.dispatcher import run_async


        @run_async
        def alerts(update, context):
            update.message.reply_text(requests.get("https://alerts.example.com").text)  # expect HTP102
        """, "a bot handler, @run_async"),
    "celery_periodic_and_apscheduler_job": ("""\
        import requests
        from apscheduler.schedulers.blocking import BlockingScheduler
        from celery.task import periodic_task

        scheduler = BlockingScheduler()


        @periodic_task(run_every=60)
        def poll():
            requests.get("https://poll.example.com")  # expect HTP102


        @scheduler.scheduled_job("interval", minutes=5)
        def sync():
            requests.post("https://sync.example.com")  # expect HTP102
        """, "a task, @periodic_task"),
    "ptb_handler_objects": ("""\
        import requests
        from telegram.ext import (Application, CallbackQueryHandler, CommandHandler, ConversationHandler,
                                  InlineQueryHandler, MessageHandler, filters)


        def start(update, context):
            requests.get("https://start.example.com")  # expect HTP102


        def text(update, context):
            requests.get("https://text.example.com")  # expect HTP102


        def button(update, context):
            requests.get("https://button.example.com")  # expect HTP102


        def inline(update, context):
            requests.get("https://inline.example.com")  # expect HTP102


        def ask(update, context):
            requests.get("https://ask.example.com")  # expect HTP102


        def answer(update, context):
            requests.get("https://answer.example.com")  # expect HTP102


        def cancel(update, context):
            requests.get("https://cancel.example.com")  # expect HTP102


        def main():
            application = Application.builder().token("t").build()
            application.add_handler(CommandHandler("start", start))
            application.add_handler(MessageHandler(filters.TEXT, callback=text))
            application.add_handler(CallbackQueryHandler(button))
            application.add_handler(InlineQueryHandler(inline))
            application.add_handler(ConversationHandler(
                entry_points=[CommandHandler("ask", ask)],
                states={1: [MessageHandler(filters.TEXT, answer)]},
                fallbacks=[CommandHandler("cancel", cancel)],
            ))
            application.run_polling()
        """, "registered with CommandHandler()"),
    "bot_register_calls": ("""\
        import requests
        import telebot
        from aiogram import Router

        bot = telebot.TeleBot("t")
        router = Router()


        def rates(message):
            requests.get("https://rates.example.com")  # expect HTP102


        async def echo(message):
            requests.get("https://echo.example.com")  # expect HTP102 HTP403


        bot.register_message_handler(rates, commands=["rates"])
        router.message.register(echo)
        """, "registered with register_message_handler()"),
    "django_urls": ("""\
        import requests
        from django.conf.urls import url
        from django.http import JsonResponse
        from django.urls import include, path, re_path
        from django.views import View


        def product(request, sku):
            return JsonResponse(requests.get(f"https://p.example.com/{sku}").json())  # expect HTP102


        def stock(request, sku):
            return JsonResponse(requests.get(f"https://s.example.com/{sku}").json())  # expect HTP102


        def legacy(request):
            return JsonResponse(requests.get("https://l.example.com").json())  # expect HTP102


        class ItemView(View):
            def get(self, request):
                return JsonResponse(requests.get("https://i.example.com").json())  # expect HTP102

            def post(self, request):
                return JsonResponse(requests.post("https://i.example.com").json())  # expect HTP102

            def helper(self):
                # Not an HTTP verb: Django never dispatches a request to it.
                return requests.get("https://helper.example.com").json()


        urlpatterns = [
            path("product/<sku>/", product),
            re_path(r"^stock/(?P<sku>\\w+)/$", view=stock),
            url(r"^legacy/$", legacy),
            path("items/", ItemView.as_view()),
            path("api/", include("api.urls")),
        ]
        """, "registered with path()"),
    "schedulers_and_queues": ("""\
        import requests
        import schedule
        from apscheduler.schedulers.background import BackgroundScheduler
        from redis import Redis
        from rq import Queue


        def poll():
            requests.get("https://poll.example.com")  # expect HTP102


        def sync():
            requests.post("https://sync.example.com")  # expect HTP102


        def fetch(url):
            requests.get(url)  # expect HTP102


        def export():
            requests.get("https://export.example.com")  # expect HTP102


        def hourly(context):
            requests.get("https://hourly.example.com")  # expect HTP102


        def daily(context):
            requests.get("https://daily.example.com")  # expect HTP102


        def monthly(context):
            requests.get("https://monthly.example.com")  # expect HTP102


        def reminder(context):
            # run_once runs its callback once.
            requests.get("https://reminder.example.com")


        schedule.every(10).minutes.do(poll)
        scheduler = BackgroundScheduler()
        scheduler.add_job(sync, "interval", minutes=5)
        queue = Queue(connection=Redis())
        queue.enqueue(fetch, "https://x.example.com")
        queue.enqueue_call(func=export)


        def setup(job_queue):
            job_queue.run_repeating(hourly, interval=3600)
            job_queue.run_daily(daily, time=None)
            job_queue.run_monthly(monthly, when=None, day=1)
            job_queue.run_once(reminder, 60)
        """, "scheduled with every().do()"),
    "slack_call_form": ("""\
        import requests


        def weather_command(ack, respond, command):
            respond(requests.get("https://weather.example.com").text)  # expect HTP102


        def register(app):
            app.command("/weather")(weather_command)
        """, "registered with app.command()"),
    "aws_lambda": ("""\
        import requests


        def lambda_handler(event, context):
            return requests.get("https://x.example.com").json()  # expect HTP102
        """, "an AWS Lambda entry point"),
    "aws_lambda_handler_name": ("""\
        import requests


        def handler(event, context):
            return requests.get("https://x.example.com").json()  # expect HTP102
        """, "an AWS Lambda entry point"),
    "gcp_functions": ("""\
        import functions_framework
        import requests


        @functions_framework.http
        def hello(request):
            return requests.get("https://x.example.com").text  # expect HTP102


        @functions_framework.cloud_event
        def on_event(cloud_event):
            requests.post("https://y.example.com")  # expect HTP102
        """, "a Google Cloud Functions entry point, @functions_framework.http"),
    "gcp_functions_imported_name": ("""\
        import requests
        from functions_framework import http


        @http
        def hello(request):
            return requests.get("https://x.example.com").text  # expect HTP102
        """, "a Google Cloud Functions entry point, @functions_framework.http"),
    "azure_functions": ("""\
        import azure.functions as func
        import requests


        def main(req: func.HttpRequest) -> func.HttpResponse:
            return func.HttpResponse(requests.get("https://x.example.com").text)  # expect HTP102
        """, "an Azure Functions entry point"),
    # -- lookalikes: nothing here is a handler ------------------------------------------------------------
    "not_click_commands": ("""\
        import click
        import requests
        import typer

        app = typer.Typer()


        @click.command()
        def download():
            requests.get("https://x.example.com")


        @click.group()
        def cli():
            pass


        @cli.command()
        def upload():
            requests.post("https://x.example.com")


        @cli.group()
        def remote():
            pass


        @remote.command()
        def sync():
            requests.post("https://x.example.com/sync")


        @app.command()
        def status():
            requests.get("https://x.example.com/status")
        """, ""),
    "not_once_per_process": ("""\
        import aiohttp
        import requests
        from flask import Flask
        from invoke import task
        from sanic import Sanic

        app = Flask(__name__)
        server = Sanic("svc")


        @app.cli.command("init-db")
        def init_db():
            requests.get("https://x.example.com/schema")


        @task
        def deploy(c):
            requests.post("https://x.example.com/deploy")


        @server.listener("before_server_start")
        async def warm_up(app, loop):
            async with aiohttp.ClientSession() as session:
                await session.get("https://x.example.com")


        @server.listener("request")  # not a lifecycle event: per request
        def on_request(request):
            requests.get("https://x.example.com/audit")  # expect HTP102
        """, "an event listener, @server.listener"),
    "not_self_or_test_decorators": ("""\
        import dataclasses
        import functools
        from unittest import mock

        import pytest
        import requests


        class Bot:
            def setup(self):
                @self.client.command()
                def ping():
                    return requests.get("https://x.example.com")

                @self.events.event
                def on_ready():
                    return requests.get("https://x.example.com/ready")

            @property
            def status(self):
                return requests.get("https://x.example.com/status")


        @pytest.mark.event
        @mock.patch("x.y")
        def test_message(patched):
            requests.get("https://x.example.com/t")


        @functools.cache
        def cached():
            return requests.get("https://x.example.com/c")


        @dataclasses.dataclass
        class Row:
            name: str


        def get(f):
            return f


        @get
        def bare():
            return requests.get("https://x.example.com/bare")
        """, ""),
    "not_registrations": ("""\
        import atexit
        import os

        import requests


        def fetch(url):
            return requests.get(url)


        def cleanup():
            requests.post("https://x.example.com/bye")


        class Jobs(list):
            def add_job(self, name, priority):
                self.append((name, priority))


        def build(worker, items):
            jobs = Jobs()
            jobs.add_job("nightly", 3)
            path = os.path.join
            path("x", 3)
            worker.do(fetch)
            items.enqueue("https://x.example.com")
            atexit.register(cleanup)
            return jobs
        """, ""),
    "not_local_path_function": ("""\
        import requests


        def page(request):
            return requests.get("https://x.example.com")


        def path(route, view):
            return (route, view)


        routes = [path("x/", page)]
        """, ""),
    "not_serverless": ("""\
        import requests


        def handler(request):
            return requests.get("https://x.example.com")


        def main(req):
            return requests.get("https://x.example.com/main")


        class Service:
            def lambda_handler(self, event, context):
                return requests.get("https://x.example.com/method")
        """, ""),
}


def _write_cases(folder: Path) -> Dict[str, Set[Tuple[int, str]]]:
    expected: Dict[str, Set[Tuple[int, str]]] = {}
    for name, (source, _) in _CASES.items():
        text = textwrap.dedent(source)
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
        expected[name] = {(number, code) for number, line in enumerate(text.splitlines(), 1)
                          for match in [_EXPECT.search(line)] if match for code in match[1].split()}
    return expected


def _parse(stdout: str) -> Dict[str, List[Tuple[int, str, str]]]:
    found: Dict[str, List[Tuple[int, str, str]]] = {}
    for line in stdout.splitlines():
        match = _LINE.match(line)
        if match:
            name = Path(match["path"]).stem
            found.setdefault(name, []).append((int(match["line"]), match["code"], match["message"]))
    return found


@pytest.fixture(scope="module")
def single_module_runs(tmp_path_factory: pytest.TempPathFactory) -> Tuple[dict, dict, dict]:
    folder = tmp_path_factory.mktemp("handlers")
    expected = _write_cases(folder)
    check = run_cli(["check", "--isolated", "--output-format", "concise", "."], cwd=folder, timeout=300)
    assert check.returncode in (0, 1), check.stderr
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "HTP", "."], cwd=folder,
                            capture_output=True, text=True, timeout=300)
    assert flake8.returncode in (0, 1), flake8.stderr
    return expected, _parse(check.stdout), _parse(flake8.stdout)


@pytest.mark.parametrize("name", sorted(_CASES))
@pytest.mark.parametrize("front_end", ["check", "flake8"])
def test_single_module_form(single_module_runs: Tuple[dict, dict, dict], name: str, front_end: str) -> None:
    expected, by_check, by_flake8 = single_module_runs
    found = (by_check if front_end == "check" else by_flake8).get(name, [])
    assert {(line, code) for line, code, _ in found} == expected[name], found
    reason = _CASES[name][1]
    if reason:
        assert any(f"({reason})" in message for _, _, message in found), found


# -- across modules (check --preview) ---------------------------------------------------------------------
def _tree(root: Path, files: Dict[str, str]) -> None:
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")


def _preview(root: Path, *extra: str) -> Dict[Tuple[str, int, str], str]:
    result = run_cli(["check", "--isolated", "--output-format", "concise", *extra, "."], cwd=root, timeout=300)
    assert result.returncode in (0, 1), result.stderr
    found = {}
    for line in result.stdout.splitlines():
        match = _LINE.match(line)
        if match:
            found[(Path(match["path"]).as_posix().lstrip("./"), int(match["line"]), match["code"])] = match["message"]
    return found


_BOT_TREE = {
    "modules/__init__.py": "",
    "modules/handlers.py": """\
        import requests


        def start(update, context):
            requests.get("https://start.example.com")


        def text(update, context):
            requests.get("https://text.example.com")


        def rates(message):
            requests.get("https://rates.example.com")


        def echo(message):  # aiogram 3 also runs a plain def, in a thread
            requests.get("https://echo.example.com")


        def weather(ack, respond, command):
            requests.get("https://weather.example.com")


        def unregistered(update, context):
            requests.get("https://never.example.com")
        """,
    "modules/jobs.py": """\
        import requests


        def poll():
            requests.get("https://poll.example.com")


        def sync():
            requests.post("https://sync.example.com")


        def fetch(url):
            requests.get(url)


        def hourly(context):
            requests.get("https://hourly.example.com")


        def reminder(context):
            requests.get("https://reminder.example.com")
        """,
    "main.py": """\
        import schedule
        import telebot
        from aiogram import Router
        from apscheduler.schedulers.background import BackgroundScheduler
        from rq import Queue
        from slack_bolt import App
        from telegram.ext import Application, CommandHandler, MessageHandler, filters

        from modules import handlers, jobs
        from modules.handlers import start

        bot = telebot.TeleBot("t")
        router = Router()
        app = App(token="t", signing_secret="s")
        scheduler = BackgroundScheduler()
        queue = Queue()


        def main():
            application = Application.builder().token("t").build()
            application.add_handler(CommandHandler("start", start))
            application.add_handler(MessageHandler(filters.TEXT, handlers.text))
            application.job_queue.run_repeating(jobs.hourly, interval=3600)
            application.job_queue.run_once(jobs.reminder, 60)
            application.run_polling()


        bot.register_message_handler(handlers.rates, commands=["rates"])
        router.message.register(handlers.echo)
        app.command("/weather")(handlers.weather)
        schedule.every(10).minutes.do(jobs.poll)
        scheduler.add_job(jobs.sync, "interval", minutes=5)
        queue.enqueue(jobs.fetch, "https://x.example.com")
        """,
}


def test_bot_and_job_handlers_registered_in_another_module(tmp_path: Path) -> None:
    _tree(tmp_path, _BOT_TREE)
    found = _preview(tmp_path, "--preview")
    expected = {
        ("modules/handlers.py", 5): "registered with CommandHandler() at main.py:21",
        ("modules/handlers.py", 9): "registered with MessageHandler() at main.py:22",
        ("modules/handlers.py", 13): "registered with register_message_handler() at main.py:28",
        ("modules/handlers.py", 17): "registered with message.register() at main.py:29",
        ("modules/handlers.py", 21): "registered with app.command() at main.py:30",
        ("modules/jobs.py", 5): "scheduled with every().do() at main.py:31",
        ("modules/jobs.py", 9): "scheduled with add_job() at main.py:32",
        ("modules/jobs.py", 13): "queued with enqueue() at main.py:33",
        ("modules/jobs.py", 17): "scheduled with run_repeating() at main.py:23",
    }
    assert {(path, line) for path, line, _ in found} == set(expected), found
    for (path, line), reason in expected.items():
        message = found[(path, line, "HTP102")]
        assert f"runs many times ({reason})" in message, message
    # The project model is the default: `--preview` is accepted and changes nothing.
    assert _preview(tmp_path) == found


def test_django_urls_make_views_and_class_based_view_methods_hot(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "shop/__init__.py": "",
        "shop/views.py": """\
            import requests
            from django.http import JsonResponse
            from django.views import View


            def product(request, sku):
                return JsonResponse(requests.get(f"https://p.example.com/{sku}").json())


            class ItemView(View):
                def get(self, request):
                    return JsonResponse(requests.get("https://i.example.com").json())

                def delete(self, request):
                    return JsonResponse(requests.delete("https://i.example.com").json())

                def helper(self):
                    return requests.get("https://helper.example.com").json()


            def unused(request):
                return JsonResponse(requests.get("https://never.example.com").json())
            """,
        "shop/urls.py": """\
            from django.urls import include, path

            from . import views

            urlpatterns = [
                path("product/<sku>/", views.product),
                path("items/", views.ItemView.as_view()),
                path("api/", include("shop.api_urls")),
            ]
            """,
    })
    found = _preview(tmp_path, "--preview")
    assert set(found) == {("shop/views.py", 7, "HTP102"), ("shop/views.py", 12, "HTP102"),
                          ("shop/views.py", 15, "HTP102")}, found
    assert "registered with path() at shop/urls.py:7" in found[("shop/views.py", 12, "HTP102")]
    assert "ItemView.delete()" in found[("shop/views.py", 15, "HTP102")]


def test_django_urls_naming_only_a_class_based_view(tmp_path: Path) -> None:
    """urls.py names the class (`views.ItemView.as_view()`), never its `post`: the gate's second phase must search
    for the class's name to read urls.py at all."""
    _tree(tmp_path, {
        "shop/__init__.py": "",
        "shop/views.py": """\
            import requests
            from django.views import View


            class ItemView(View):
                def post(self, request):
                    return requests.post("https://i.example.com").json()
            """,
        "shop/urls.py": """\
            from django.urls import path

            from shop import views

            urlpatterns = [path("items/", views.ItemView.as_view())]
            """,
    })
    assert set(_preview(tmp_path, "--preview")) == {("shop/views.py", 7, "HTP102")}


def test_schedule_in_jobs_module_makes_tasks_module_functions_hot(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "tasks.py": """\
            import requests


            def refresh_prices():
                return requests.get("https://prices.example.com").json()


            def report():
                return requests.get("https://report.example.com").json()
            """,
        "jobs.py": """\
            import schedule

            import tasks


            class Board:
                def do(self, work):
                    return work


            schedule.every().day.at("10:30").do(tasks.refresh_prices)
            Board().do(tasks.report)
            """,
    })
    found = _preview(tmp_path, "--preview")
    assert set(found) == {("tasks.py", 5, "HTP102")}, found
    assert "scheduled with every().do() at jobs.py:11" in found[("tasks.py", 5, "HTP102")]
