"""Save the monthly report the reporting API renders."""
import requests


def save_report(url, path):
    response = requests.get(url, timeout=10)
    response.raise_for_status()
    with open(path, "wb") as f:
        f.write(response.content)
