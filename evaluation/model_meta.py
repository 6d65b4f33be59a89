"""A submission's model metadata as people type it: parameter counts ("7B", "1.5b", "500M"), links, dates.

One parser and one set of validators for every way in (the web form, the API, ``manage.py submit``,
the owner's edit page), so a value refused in one place is refused with the same words in the others.
The model's fields carry the validators too, so ``full_clean`` in ``evaluation.services`` holds for
every writer.
"""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.utils import timezone

# Suffix -> billions. A bare number is read as billions (the unit of the field and of every model card).
_SCALE = {"": 1.0, "k": 1e-6, "m": 1e-3, "b": 1.0, "t": 1e3}
_COUNT = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)\s*([kmbt]?)$", re.IGNORECASE)
# Above this a bare number is surely a raw count typed without a unit (7000000000 for 7B).
MAX_BILLIONS = 100_000.0
PARAMETERS_HELP = 'e.g. "7B", "70b", "1.5B", "500M", or a number of billions'
# The same words from the web form (Django's %-placeholders) and the API (DRF's {}-placeholders).
WEIGHTS_INVALID = 'weights must be "open", "closed" or left empty (not stated), got "{}"'
LICENSE_TOO_LONG = "a licence of at most 100 characters, as the model card names it (e.g. Apache-2.0)"


def parse_parameters(raw: object) -> float | None:
    """Billions of parameters from "7B", "70b", "1.5B", "500M", "1T" or a number (billions); None for blank.

    Raises ``ValueError`` with a message that quotes the value and shows the accepted forms.
    """
    if raw is None:
        return None
    if isinstance(raw, bool):
        raise ValueError(f'expected a parameter count ({PARAMETERS_HELP}), got {raw!r}')
    if isinstance(raw, (int, float)):
        text = repr(float(raw))
        value = float(raw)
    else:
        text = str(raw).strip().replace(",", "").replace("_", "")
        if not text:
            return None
        match = _COUNT.match(text)
        if not match:
            raise ValueError(f'expected a parameter count ({PARAMETERS_HELP}), got "{str(raw)[:40]}"')
        value = float(match.group(1)) * _SCALE[match.group(2).lower()]
        text = str(raw).strip()[:40]
    if value != value or value <= 0:  # NaN or not positive
        raise ValueError(f'a parameter count must be more than zero, got "{text}"')
    if value > MAX_BILLIONS:
        raise ValueError(f'"{text}" would be {value:,.0f} billion parameters; write the count with its unit, '
                         f"e.g. {value / 1e9:g}B for {value:,.0f} parameters")
    return value


def validate_parameters(value: float | None) -> None:
    """Model-field validator: the stored value (billions) is in range."""
    if value is None:
        return
    try:
        parse_parameters(value)
    except ValueError as exc:
        raise ValidationError(str(exc), code="parameters") from exc


_url = URLValidator(schemes=["http", "https"])


def validate_http_url(value: str) -> None:
    """A link people can open: http(s) only (a ``javascript:`` or ``ftp:`` link is refused)."""
    if not value:
        return
    if not re.match(r"^https?://", value, re.IGNORECASE):
        raise ValidationError(f'a link must start with http:// or https://, got "{value[:60]}"', code="scheme")
    try:
        _url(value)
    except ValidationError as exc:
        raise ValidationError(f'not a valid web address: "{value[:60]}"', code="invalid") from exc


def validate_release_date(value: object) -> None:
    """A release date cannot be in the future (UTC): a typo like 2062 would sort the model wrongly."""
    if value is None:
        return
    today = timezone.now().date()
    if value > today:  # type: ignore[operator]
        raise ValidationError(f"the release date {value} is in the future (today is {today} UTC)", code="future")


def format_parameters(value: float | None) -> str:
    """7.0 -> "7B", 1.5 -> "1.5B", 0.5 -> "500M", None -> "" (for pages and files)."""
    if value is None:
        return ""
    if value < 1:
        return f"{value * 1000:g}M"
    return f"{value:g}B"
