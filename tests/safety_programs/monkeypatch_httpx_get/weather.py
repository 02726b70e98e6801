"""Temperatures per city from the weather API."""
import httpx


def temperatures(base, cities):
    readings = []
    for city in cities:
        reply = httpx.get(base + "/item/" + city)
        readings.append(reply.json()["id"])
    return readings
