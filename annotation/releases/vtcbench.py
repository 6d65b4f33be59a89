"""VTC-Bench: `data/VTC-Bench.tsv` and/or `data/VTC-Bench_GTToolChain.tsv`, images by relative path.

Columns `index`, `id` (the uid), `category`, `image` (`images/<task>/<id>.jpg`), `question`,
`answer`, `A`-`D`; the GT file adds `model_tools_gt`, a JSON-looking list of tool display names
(some with curly quotes: repaired, with a warning). Given both files, the GT file is imported
(the authors' evaluation reads it) and their differences are reported. The nine categories are
one level: the domain is "All" unless `--domain-of category=tier` supplies the paper's tiers.
"""

from __future__ import annotations

from pathlib import Path

from annotation.releases.base import Release, ReleaseError, ReleaseLine
from annotation.releases.common import choice_answer, empty_word_errors, letter_columns, preview, text
from annotation.releases.encoded import Unreadable, is_blank, load_structure
from annotation.releases.media import find_media
from annotation.releases.sniff import release_files
from annotation.releases.tables import tsv_rows
from annotation.taxonomy import ONE_LEVEL_DOMAIN

PLAIN, GT = "VTC-Bench.tsv", "VTC-Bench_GTToolChain.tsv"
CHAIN_COLUMN = "model_tools_gt"
MEDIA_HINT = ("VTC-Bench's images are not in its GitHub repository: they are in the Hugging Face dataset "
              "zzzhu/VTC-Bench; download it and pass the folder holding images/<task>/ with --images DIR")
REQUIRED = {"id", "category", "image", "question", "answer"}


def read(paths: list[Path], *, workdir: Path, images_dir: Path | None = None) -> Release:
    files = [f for f in release_files(paths) if f.suffix.lower() == ".tsv"]
    by_name = {f.name: f for f in files}
    gt, plain = by_name.get(GT), by_name.get(PLAIN)
    if gt is None and plain is None:
        if len(files) != 1:
            raise ReleaseError(f"{', '.join(p.name for p in paths)}: expected {PLAIN} and/or {GT}")
        gt = files[0]  # one TSV under another name: read it as VTC-Bench's
    main = gt or plain
    assert main is not None
    columns, rows = tsv_rows(main)
    missing = REQUIRED - set(columns)
    if missing:
        raise ReleaseError(f"{main.name}: a TSV without VTC-Bench's columns (missing {', '.join(sorted(missing))})")
    rows_list = list(rows)
    root = _media_root(main, rows_list, images_dir)
    warnings: list[str] = []
    repaired: list[int] = []
    lines = [_line(main.name, number, row, columns, repaired) for number, row in rows_list]
    if repaired:
        shown = ", ".join(map(str, repaired[:15])) + (f" and {len(repaired) - 15} more" if len(repaired) > 15 else "")
        warnings.append(f"{len(repaired)} {CHAIN_COLUMN} list(s) in {main.name} used curly quotes and were repaired "
                        f"(rows {shown})")
    if gt is not None and plain is not None:
        warnings += _differences(plain, gt)
    if CHAIN_COLUMN not in columns:
        warnings.append(f"{main.name} has no {CHAIN_COLUMN} column: the samples have no reference toolchain")
    return Release(format="vtcbench", name=main.name, lines=lines, root=root,
                   manifest={"name": "VTC-Bench", "scoring": "vtcbench"}, warnings=warnings,
                   media_hint=MEDIA_HINT)  # fmt: skip


def _media_root(tsv: Path, rows: list[tuple[int, dict]], images_dir: Path | None) -> Path:
    """The folder the `image` paths are relative to: --images, the TSV's folder, or the repository root above `data/`."""
    bases = [b for b in (images_dir, tsv.parent, tsv.parent.parent) if b is not None]
    first = next((row["image"] for _, row in rows if not is_blank(row.get("image"))), None)
    if first is not None:
        found = find_media(first.strip(), bases)
        if found is not None:
            return Path(str(found)[: -len(first.strip())])
    return bases[0]


def _line(file_name: str, number: int, row: dict, columns: list[str], repaired: list[int]) -> ReleaseLine:
    errors = empty_word_errors(row, {"id": "the uid", "question": "the question", "answer": "the answer",
                                     "category": "the category"})
    options = letter_columns(row, columns)
    meta = {"index": text(row.get("index"))} if not is_blank(row.get("index")) else {}
    data = {
        "uid": text(row.get("id")),
        "image": text(row.get("image")),
        "question": text(row.get("question")),
        "options": options,
        "answer": choice_answer(text(row.get("answer")), options),
        "domain": ONE_LEVEL_DOMAIN,
        "category": text(row.get("category")),
        "split": "test",
        "source": "VTC-Bench",
        "meta": meta,
    }
    if CHAIN_COLUMN in row:
        chain = _tool_names(row.get(CHAIN_COLUMN), errors, lambda: repaired.append(number))
        if chain is not None:
            data["toolchain"] = [{"tool": name} for name in chain]  # names only: counted, never run
            meta[CHAIN_COLUMN] = row.get(CHAIN_COLUMN)
    return ReleaseLine(number=number, where=f"row {number} of {file_name}", data=data, errors=errors)


def _tool_names(value: object, errors: list, on_repair: object) -> list[str] | None:
    if is_blank(value):
        return []
    try:
        names, was_repaired = load_structure(str(value), repair_quotes=True)
    except Unreadable as exc:
        errors.append((CHAIN_COLUMN, f"cannot read {preview(value)}: {exc}"))
        return None
    if not isinstance(names, list) or not all(isinstance(n, str) and n.strip() for n in names):
        errors.append((CHAIN_COLUMN, f"expected a list of tool names, got {preview(value)}"))
        return None
    if was_repaired:
        on_repair()  # type: ignore[operator]
    return [n.strip() for n in names]


def _differences(plain: Path, gt: Path) -> list[str]:
    """What the two files disagree on, by id (releases.md: the GT file is the one evaluated)."""
    a = {text(r.get("id")): r for _, r in tsv_rows(plain)[1]}
    b = {text(r.get("id")): r for _, r in tsv_rows(gt)[1]}
    out = [f"both {PLAIN} and {GT} were given: importing {GT} (the file the authors' evaluation reads)"]
    only_plain, only_gt = sorted(set(a) - set(b), key=str), sorted(set(b) - set(a), key=str)
    if only_plain:
        out.append(f"{len(only_plain)} id(s) only in {PLAIN} (not imported): {_some(only_plain)}")
    if only_gt:
        out.append(f"{len(only_gt)} id(s) only in {GT}: {_some(only_gt)}")
    shared = [i for i in a if i in b]
    for column in ("answer", "question"):
        differ = [i for i in shared if text(a[i].get(column)) != text(b[i].get(column))]
        if differ:
            out.append(f"{len(differ)} shared id(s) have a different {column} in the two files: {_some(differ)}")
    return out


def _some(ids: list) -> str:
    return ", ".join(map(str, ids[:10])) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
