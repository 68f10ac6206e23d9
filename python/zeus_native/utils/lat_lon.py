"""Where this machine is, from its public IP address (the original's zeus.utils.lat_lon)."""

from __future__ import annotations

import json
import logging
import urllib.request

logger = logging.getLogger(__name__)

IP_INFO_URL = "http://ipinfo.io/json"


def get_ip_lat_long() -> tuple[float, float]:
    """(latitude, longitude) of this machine's public IP address, from ipinfo.io.

    Raises OSError (urllib's URLError) when the service cannot be reached, and
    ValueError when its answer has no "loc". Offline, pass the coordinates
    yourself: ElectrictyMapsClient((lat, lon), ...).
    """
    try:
        with urllib.request.urlopen(IP_INFO_URL, timeout=10) as reply:
            answer = json.loads(reply.read().decode())
    except OSError as e:
        logger.error("Failed to retrieve the latitude and longitude of this IP from %s: %s", IP_INFO_URL, e)
        raise
    try:
        lat, lon = (float(part) for part in str(answer["loc"]).split(","))
    except (KeyError, ValueError) as e:
        raise ValueError(f"{IP_INFO_URL} gave no 'loc' of the form 'lat,lon': {answer!r}") from e
    logger.info("Retrieved latitude and longitude: %s, %s", lat, lon)
    return lat, lon
