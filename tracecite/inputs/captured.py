"""A trace source's ``captured_at`` (docs/web-over-time.md#archived-copies): when the agent read it,
as an RFC 3339 date and time, kept as the Internet Archive's 14-digit UTC timestamp
(``YYYYMMDDhhmmss``), which is what it is used for: asking for the snapshot closest to the capture.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

# RFC 3339 §5.6 date-time: ASCII digits only (\d would take other scripts' digits too).
_DATE_TIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]+)?"
    r"(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))")

CAPTURED_AT_FORMAT = "an RFC 3339 date and time, like 2024-05-01T12:00:00Z"
"""What a ``captured_at`` must be, in the words of its finding."""


def wayback_timestamp(text: str) -> str | None:
    """``text`` as an RFC 3339 date and time in UTC, written ``YYYYMMDDhhmmss`` (fractions of a
    second dropped, a leap second read as :59); None when it is not one."""
    match = _DATE_TIME.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    sign, offset_hours, offset_minutes = match.groups()[6:]
    offset = timedelta()
    if sign is not None:
        if int(offset_hours) > 23 or int(offset_minutes) > 59:
            return None
        offset = timedelta(hours=int(offset_hours), minutes=int(offset_minutes))
        if sign == "-":
            offset = -offset
    try:
        moment = datetime(year, month, day, hour, minute, 59 if second == 60 else second,
                          tzinfo=timezone(offset)).astimezone(timezone.utc)
    except (ValueError, OverflowError):  # no such day or time, or out of datetime's range
        return None
    # Not strftime: its %Y does not pad years before 1000 everywhere.
    return (f"{moment.year:04d}{moment.month:02d}{moment.day:02d}"
            f"{moment.hour:02d}{moment.minute:02d}{moment.second:02d}")


def captured_at_of(retrieved: object) -> str | None:
    """A vendor's time of reading a page (Anthropic's ``retrieved_at``, as the Messages API
    and Inspect keep it) as a trace source's ``captured_at``: kept only when it is the RFC 3339
    date and time a ``captured_at`` must be, else None: anything else is not known."""
    if isinstance(retrieved, str) and wayback_timestamp(retrieved) is not None:
        return retrieved
    return None
