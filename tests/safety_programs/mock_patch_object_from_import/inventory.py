"""Stock levels from the warehouse API."""
from requests import get


def stock_levels(base, skus):
    return [get(base + "/item/" + sku).json()["id"] for sku in skus]
