"""A small legacy HTTP client, written the way such code often is: every request opens a new connection.

Run `flake8 --select HTP examples/` to see what flake8-http-pool reports here.
"""

import asyncio
from concurrent.futures import ThreadPoolExecutor

import aiohttp
import requests

API = "https://api.example.com"
session = requests.Session()


def fetch_users(user_ids):
    users = []
    for user_id in user_ids:
        users.append(requests.get(f"{API}/users/{user_id}", timeout=10).json())
    return users


def all_pages(url):
    pages = []
    while url:
        page = requests.get(url, timeout=10).json()
        pages.append(page["items"])
        url = page.get("next")
    return pages


def download_report(report_id, path):
    r = requests.get(f"{API}/reports/{report_id}", timeout=60)
    with open(path, "wb") as f:
        f.write(r.content)


def fetch_one(item_id):
    return session.get(f"{API}/items/{item_id}", timeout=10).json()


def fetch_items(item_ids):
    with ThreadPoolExecutor(max_workers=32) as pool:
        return list(pool.map(fetch_one, item_ids))


async def fetch_status(url):
    async with aiohttp.ClientSession() as http:
        async with http.get(url) as resp:
            return resp.status


async def check_all(urls):
    return await asyncio.gather(*(fetch_status(u) for u in urls))


async def refresh_token():
    return requests.post(f"{API}/token", timeout=10).json()["token"]
