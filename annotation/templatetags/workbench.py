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
