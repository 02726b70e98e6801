"""Prices of the shop's products, read from the pricing API."""
import requests


def current_prices(base, skus):
    prices = {}
    for sku in skus:
        reply = requests.get(base + "/item/" + sku, timeout=10)
        prices[sku] = reply.json()["id"]
    return prices
