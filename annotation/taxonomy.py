"""AdaptMMBench's five domains and their categories (the paper's Tables 6 and 7).

A benchmark file imported without a manifest uses this taxonomy; a manifest (`benchmark.json`)
may declare its own. Plain data: no Django import.
"""

from __future__ import annotations

ADAPTMMBENCH_DOMAINS: dict[str, dict] = {
    "real_world": {
        "name": "Real-world",
        "categories": {
            "attribute": "Attribute",
            "counting": "Counting",
            "integration": "Integration",
            "physical": "Physical",
            "spatial": "Spatial",
        },
    },
    "ocr": {
        "name": "OCR",
        "categories": {"chart": "Chart", "diagram": "Diagram", "document": "Document", "table": "Table"},
    },
    "gui": {
        "name": "GUI",
        "categories": {
            "android": "Android",
            "linux": "Linux",
            "mac": "Mac",
            "web": "Web",
            "windows": "Windows",
            "ios": "iOS",
        },
    },
    "knowledge": {
        "name": "Knowledge",
        "categories": {"biology": "Biology", "chemistry": "Chemistry", "geography": "Geography", "physics": "Physics"},
    },
    "math": {
        "name": "Math",
        "categories": {"algebra": "Algebra", "geometry": "Geometry", "logic": "Logic", "statistics": "Statistics"},
    },
}
