"""W3C CSV on the Web (CSVW) metadata for a CSV a visitor downloads: each column's title, datatype and unit.

The CSVs' column names are an outside interface (interfaces.md), so their units are not written into
the headers; they are published beside each file the standard way instead. A CSVW processor looks for
a file's metadata first through the CSV response's ``Link: <...>; rel="describedby"`` header, then at
``<csv url>-metadata.json`` (CSVW "Model for Tabular Data and Metadata", section 5: locating metadata);
both point at the same document here. Units go in each column's ``schema:unitText`` (schema.org is in
CSVW's default context), a longer meaning in ``dc:description``.

Plain Python: no Django import, no app import (an app builds its own columns).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

CONTENT_TYPE = "application/csvm+json"
CONTEXT = "http://www.w3.org/ns/csvw"
METADATA_SUFFIX = "-metadata.json"

# The CSVW datatypes the exports use. A boolean cell is Python's str(bool); a null cell is empty.
BOOLEAN = {"base": "boolean", "format": "True|False"}
DATATYPES: dict[str, Any] = {"string": "string", "integer": "integer", "number": "number", "date": "date",
                             "datetime": "datetime", "url": "anyURI", "boolean": BOOLEAN}


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    description: str
    datatype: str = "string"  # a key of DATATYPES
    unit: str | None = None  # "percent", "USD", "seconds", "tokens", ...; None: no unit (a name, a count's label)
    null: tuple[str, ...] = ("",)  # the cell values that mean "no value"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "titles": self.name, "datatype": DATATYPES[self.datatype],
                               "null": list(self.null), "dc:description": self.description}
        if self.unit:
            out["schema:unitText"] = self.unit
        return out


def link_header(metadata_url: str) -> str:
    """The CSV response's ``Link`` header value that points a CSVW processor at its metadata."""
    return f'<{metadata_url}>; rel="describedby"; type="{CONTENT_TYPE}"'


def table_metadata(*, csv_url: str, title: str, columns: Sequence[Column], description: str = "") -> dict[str, Any]:
    """The metadata document of one CSV (``csv_url`` relative to the metadata's own URL, or absolute)."""
    out: dict[str, Any] = {"@context": CONTEXT, "url": csv_url, "dc:title": title}
    if description:
        out["dc:description"] = description
    out["dialect"] = {"header": True, "encoding": "utf-8"}
    out["tableSchema"] = {"columns": [c.as_dict() for c in columns]}
    return out
