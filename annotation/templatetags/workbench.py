import json

from django import template

register = template.Library()


@register.filter
def get_item(mapping: dict, key: str) -> object:
    return mapping.get(key) if isinstance(mapping, dict) else None


@register.filter
def pretty_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


@register.filter
def urlencode_json(value: object) -> str:
    from urllib.parse import quote

    return quote(json.dumps(value), safe="")


@register.filter
def sub(a: float, b: float) -> float:
    return a - b


@register.filter
def skipped_count(steps: list) -> int:
    """How many steps of a chain run were not run (declared tools and what depends on them)."""
    return sum(1 for step in steps if getattr(step, "skipped", None))


@register.filter
def get_index(items: list, index: int) -> object:
    return items[index] if isinstance(items, list) and 0 <= index < len(items) else None
