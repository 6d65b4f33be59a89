"""manage.py run_toolchain IMAGE CHAIN.json --out DIR: run a tool chain and keep every image."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.imagetools import Limits, ToolError, encode_png, load_image, run_chain
from annotation.imagetools.context import DEFAULT_MAX_PIXELS


class Command(BaseCommand):
    help = ("Run a tool chain (formats.md `toolchain`) on an image, write every intermediate "
            "image to --out as <reference>.png and print each step's result as JSON.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("image", help="the original image (img0)")
        parser.add_argument("chain", help="JSON file: a toolchain list, or a sample with one")
        parser.add_argument("--out", required=True, help="folder for the images (created)")
        parser.add_argument("--ref", action="append", default=[], metavar="NAME=PATH",
                            help="an extra named image, e.g. a template (repeatable)")
        parser.add_argument("--time-limit", type=float, default=Limits.time_limit_s,
                            help="seconds for the whole chain (default %(default)s)")

    def handle(self, *args: Any, **options: Any) -> None:
        max_pixels = getattr(settings, "IMAGE_MAX_PIXELS", DEFAULT_MAX_PIXELS)
        chain = _read_chain(Path(options["chain"]))
        try:
            image = load_image(options["image"], max_pixels=max_pixels)
            extras = {name: load_image(path, max_pixels=max_pixels)
                      for name, path in map(_named_path, options["ref"])}
        except (ToolError, OSError) as error:
            raise CommandError(f"cannot read the image: {error}") from None
        limits = Limits(max_pixels=max_pixels, time_limit_s=options["time_limit"])
        result = run_chain(image, chain, limits=limits, extra_images=extras)

        out = Path(options["out"])
        out.mkdir(parents=True, exist_ok=True)
        files = {}
        for ref in ["img0", *(s.output for s in result.steps if s.error is None)]:
            # Level 1: a 12-megapixel intermediate takes a few hundred ms instead of seconds.
            (out / f"{ref}.png").write_bytes(encode_png(result.images[ref], compression=1))
            files[ref] = str(out / f"{ref}.png")
        report = result.to_dict()
        for step in report["steps"]:
            step["file"] = files.get(step["output"]) if step["error"] is None else None
        report["images"] = files
        self.stdout.write(json.dumps(report, indent=2))
        if not result.ok:
            raise CommandError(result.error)


def _read_chain(path: Path) -> Any:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CommandError(f"{path} is not valid JSON: {error}") from None
    if isinstance(data, dict) and "toolchain" in data:
        data = data["toolchain"]
    if not isinstance(data, list):
        raise CommandError(f"{path} must hold a toolchain list (or an object with \"toolchain\")")
    return data


def _named_path(value: str) -> tuple[str, str]:
    name, sep, path = value.partition("=")
    if not sep or not name or not path:
        raise CommandError(f"--ref expects NAME=PATH, got {value!r}")
    return name, path
