"""A router pool from VL-RouterBench's own files (docs/routers.md, "Import a release's pool").

Two forms, as ``../shared/spec/releases.md`` describes the release:

- the matrices: ``Y.npz`` (key ``Y``: samples x models, 1 when the model was right), ``C.npy`` ($ per
  sample, same shape), the registry naming each row's sample id and each column's model, and
  optionally ``cost_bounds.json`` (``cmin``, ``cmax``);
- the archive's per-model VLMEvalKit evaluation files (correctness in ``is_correct``, ``hit`` or
  ``score``), the token counts per (model, sample), and the price table ($ per million input and
  output tokens).

Both read into one ``Matrix``; ``routers.services.router_pool_import`` checks it against the
benchmark and stores it, all or nothing. Every problem names its file and its row or field.
"""

from __future__ import annotations

import csv
import io
import json
import math
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MAX_ERRORS = 50
CORRECT_COLUMNS = ("is_correct", "hit", "score")  # the first present is the correctness
TABLE_SUFFIXES = (".csv", ".tsv", ".xlsx", ".json")
# What reading a table may raise: a missing file, bad UTF-8 or JSON, a broken workbook (a zip inside).
READ_ERRORS = (OSError, ValueError, UnicodeDecodeError, zipfile.BadZipFile, KeyError, csv.Error)


class MatrixRejected(Exception):
    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors[:MAX_ERRORS]


@dataclass(frozen=True)
class Matrix:
    models: list[str]
    samples: list[str]  # the release's sample ids, in row order ("<Dataset>/<id>")
    where: list[str]  # per row: where its id was read (file and row or index), for messages
    correct: np.ndarray  # bool, samples x models
    cost: np.ndarray  # $ per sample, samples x models
    origin: str  # "imported from ..."
    bounds: list[float] | None = None


class _Errors(list):
    def add(self, message: str) -> None:
        if len(self) < MAX_ERRORS:
            self.append(message)


# --- the matrices: Y.npz, C.npy, the registry -----------------------------------------------------------

def _load_array(path: Path, key: str | None, errors: _Errors) -> tuple[np.ndarray | None, dict[str, np.ndarray]]:
    """(the array, the archive's other arrays); None with a message naming the file when it cannot be read."""
    if not path.is_file():
        errors.add(f"{path.name}: not found (looked for {path})")
        return None, {}
    try:
        loaded = np.load(path, allow_pickle=False)
    except (ValueError, OSError, zipfile.BadZipFile) as exc:
        errors.add(f"{path.name}: not a NumPy {'.npz archive' if key else '.npy array'} ({exc})")
        return None, {}
    if not isinstance(loaded, np.lib.npyio.NpzFile):
        return loaded, {}
    with loaded:
        try:
            arrays = {k: loaded[k] for k in loaded.files}
        except ValueError as exc:  # an object array needs pickle, which a download must never run
            errors.add(f"{path.name}: an array holds Python objects ({exc}); save ids as strings")
            return None, {}
    if key not in arrays:
        errors.add(f"{path.name}: no array {key!r} (it holds: {', '.join(arrays) or 'nothing'})")
        return None, arrays
    return arrays.pop(key), arrays


def _names(entries: Any, keys: tuple[str, ...]) -> list[Any]:
    """Registry entries as names: a string, or an object carrying one of ``keys``."""
    out = []
    for e in entries:
        if isinstance(e, dict):
            e = next((e[k] for k in keys if k in e), None)
        out.append(e)
    return out


def _registry(path: Path | None, arrays: dict[str, np.ndarray], errors: _Errors
              ) -> tuple[list[Any] | None, str, list[Any] | None, str]:
    """(models, where they were read, sample ids, where they were read)."""
    models = samples = None
    m_from = s_from = ""
    if path is not None:
        if not path.is_file():
            errors.add(f"{path.name}: not found (looked for {path})")
            return None, "", None, ""
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            errors.add(f"{path.name}: not JSON ({exc})")
            return None, "", None, ""
        if isinstance(doc, list):
            doc = {"models": doc}
        if not isinstance(doc, dict):
            errors.add(f"{path.name}: neither a list of models nor an object with 'models' and 'sample_ids'")
            return None, "", None, ""
        for key in ("models", "model_ids"):
            if isinstance(doc.get(key), list):
                models, m_from = _names(doc[key], ("model_id", "name", "model")), f"{path.name} {key}"
                break
        for key in ("sample_ids", "samples"):
            if isinstance(doc.get(key), list):
                samples, s_from = _names(doc[key], ("sample_id", "id")), f"{path.name} {key}"
                break
    for key in ("model_ids", "models"):
        if models is None and key in arrays:
            models, m_from = arrays[key].tolist(), f"Y.npz {key}"
    for key in ("sample_ids", "samples"):
        if samples is None and key in arrays:
            samples, s_from = arrays[key].tolist(), f"Y.npz {key}"
    where = path.name if path is not None else "the registry"
    if models is None:
        errors.add(f"{where}: no model list (a 'models' list naming Y's columns in order, or an array "
                   "'model_ids' in Y.npz)")
    if samples is None:
        errors.add(f"{where}: no sample list (a 'sample_ids' list naming Y's rows in order, or an array "
                   "'sample_ids' in Y.npz)")
    return models, m_from, samples, s_from


def _check_names(names: list[Any], where: str, what: str, errors: _Errors) -> None:
    first: dict[str, int] = {}
    for i, n in enumerate(names):
        if not isinstance(n, str) or not n.strip():
            errors.add(f"{where}[{i}]: {what} {n!r} is not a non-empty string")
        elif n in first:
            errors.add(f"{where}[{i}]: {what} {n!r} is listed twice (first at [{first[n]}])")
        else:
            first[n] = i


def _check_count(names: list[Any], where: str, axis: str, size: int, errors: _Errors) -> None:
    if len(names) < size:
        errors.add(f"{where}: {len(names)} entries for Y's {size} {axis}s: {axis} {len(names) + 1} "
                   "has no registry entry")
    elif len(names) > size:
        errors.add(f"{where}: {len(names)} entries for Y's {size} {axis}s: [{size}] ({names[size]!r}) "
                   f"has no {axis} in Y")


def _bounds(path: Path | None, errors: _Errors) -> list[float] | None:
    if path is None:
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        cmin, cmax = float(doc["cmin"]), float(doc["cmax"])
    except (OSError, json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError) as exc:
        errors.add(f"{path.name}: not an object with numbers 'cmin' and 'cmax' ({type(exc).__name__}: {exc})")
        return None
    if not (0 < cmin < cmax) or not math.isfinite(cmax):
        errors.add(f"{path.name}: cmin {cmin} and cmax {cmax} must satisfy 0 < cmin < cmax")
        return None
    return [cmin, cmax]


def _check_values(y: np.ndarray, c: np.ndarray, models: list[str], samples: list[str], errors: _Errors) -> None:
    def cell(i: int, j: int) -> str:
        return f"row {i + 1} (sample {samples[i]!r}), column {j + 1} (model {models[j]!r})"

    if not np.issubdtype(y.dtype, np.number) and y.dtype != bool:
        errors.add(f"Y.npz: Y holds {y.dtype} values; it must hold 0 and 1")
        return
    if not np.issubdtype(c.dtype, np.number):
        errors.add(f"C.npy: C holds {c.dtype} values; it must hold $ per sample")
        return
    yf = y.astype(float)
    for i, j in zip(*np.nonzero(~np.isin(yf, (0.0, 1.0)))):
        errors.add(f"Y.npz {cell(i, j)}: {float(yf[i, j])!r} is not 0 or 1")
    cf = c.astype(float)
    for i, j in zip(*np.nonzero(~(np.isfinite(cf) & (cf >= 0)))):
        errors.add(f"C.npy {cell(i, j)}: {float(cf[i, j])!r} is not a cost ($ >= 0)")


def read_matrices(folder: Path, *, y_path: Path | None = None, c_path: Path | None = None,
                  registry: Path | None = None, bounds: Path | None = None) -> Matrix:
    """``Y.npz``, ``C.npy``, the registry (``registry.json`` in the folder unless given; else arrays
    ``sample_ids`` and ``model_ids`` inside ``Y.npz``) and ``cost_bounds.json`` when present."""
    errors = _Errors()
    y_path, c_path = y_path or folder / "Y.npz", c_path or folder / "C.npy"
    if registry is None and (folder / "registry.json").is_file():
        registry = folder / "registry.json"
    if bounds is None and (folder / "cost_bounds.json").is_file():
        bounds = folder / "cost_bounds.json"
    y, arrays = _load_array(y_path, "Y", errors)
    c, _ = _load_array(c_path, None, errors)
    models, m_from, samples, s_from = _registry(registry, arrays, errors)
    cost_bounds = _bounds(bounds, errors)
    if y is not None and y.ndim != 2:
        errors.add(f"{y_path.name}: Y has {y.ndim} dimension(s) {y.shape}; it must be samples x models")
        y = None
    if y is not None and c is not None and c.shape != y.shape:
        errors.add(f"{c_path.name}: shape {c.shape} differs from Y's {y.shape} (samples x models)")
        c = None
    if models is not None:
        _check_names(models, m_from, "model", errors)
        if y is not None:
            _check_count(models, m_from, "column", y.shape[1], errors)
    if samples is not None:
        _check_names(samples, s_from, "sample id", errors)
        if y is not None:
            _check_count(samples, s_from, "row", y.shape[0], errors)
    if errors or y is None or c is None or models is None or samples is None:
        raise MatrixRejected(errors or ["nothing to import"])
    _check_values(y, c, models, samples, errors)
    if errors:
        raise MatrixRejected(errors)
    files = [p.name for p in (y_path, c_path, registry, bounds) if p is not None]
    return Matrix(models=list(models), samples=list(samples), where=[f"{s_from}[{i}]" for i in range(len(samples))],
                  correct=y.astype(float) == 1.0, cost=c.astype(float), bounds=cost_bounds,
                  origin=f"imported from {', '.join(files)}")


# --- the archive: per-model VLMEvalKit evaluation files, token counts, prices ----------------------------

def _table(path: Path) -> tuple[list[str], Iterator[tuple[int, dict[str, Any]]]]:
    """(columns, (row number from 1 after the header, {column: value})) of a CSV, TSV, .xlsx or JSON list."""
    if path.suffix.lower() == ".xlsx":
        from openpyxl import load_workbook

        book = load_workbook(path, read_only=True, data_only=True)
        values = list(book.worksheets[0].iter_rows(values_only=True))
        book.close()
        header = [str(v).strip() if v is not None else "" for v in (values[0] if values else ())]
        return header, ((n, dict(zip(header, row))) for n, row in enumerate(values[1:], start=1))
    if path.suffix.lower() == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise ValueError("the JSON is not a list of row objects")
        return list(dict.fromkeys(k for r in data for k in r)), ((n, r) for n, r in enumerate(data, start=1))
    text = path.read_text(encoding="utf-8-sig")
    reader = csv.DictReader(io.StringIO(text), delimiter="\t" if path.suffix.lower() == ".tsv" else ",")
    return [c.strip() for c in reader.fieldnames or []], ((n, r) for n, r in enumerate(reader, start=1))


def _read_table(path: Path, errors: _Errors) -> tuple[list[str], Iterator[tuple[int, dict[str, Any]]]] | None:
    try:
        return _table(path)
    except READ_ERRORS as exc:
        errors.add(f"{path.name}: not a readable table ({type(exc).__name__}: {exc})")
        return None


def _column(columns: list[str], names: tuple[str, ...]) -> str | None:
    lower = {c.lower(): c for c in columns}
    return next((lower[n] for n in names if n in lower), None)


def _flag(value: Any) -> bool | None:
    """0/1 correctness as VLMEvalKit writes it (1, 0, 1.0, True, "true"); None for anything else."""
    text = str(value).strip().lower() if value is not None else ""
    if text in ("1", "1.0", "true", "yes"):
        return True
    if text in ("0", "0.0", "false", "no"):
        return False
    return None


def _number(value: Any) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) and x >= 0 else None


def _dataset_of(stem: str, model: str, datasets: set[str]) -> str | None:
    """VLMEvalKit names a file ``<model>_<dataset>[_<judge stage>]``: the longest known dataset after the model."""
    rest = stem[len(model) + 1:] if stem.startswith(f"{model}_") else stem
    fits = [d for d in datasets if rest == d or rest.startswith(f"{d}_")]
    return max(fits, key=len) if fits else None


def _prices(path: Path, errors: _Errors) -> dict[str, tuple[float, float]]:
    read = _read_table(path, errors)
    if read is None:
        return {}
    columns, rows = read
    model = _column(columns, ("model", "model_id", "model_name"))
    p_in = _column(columns, ("input_per_million", "input_usd_per_million", "input_price", "input"))
    p_out = _column(columns, ("output_per_million", "output_usd_per_million", "output_price", "output"))
    if not (model and p_in and p_out):
        errors.add(f"{path.name}: needs the columns model, input_per_million and output_per_million ($ per "
                   f"million tokens); it has {', '.join(columns)}")
        return {}
    out: dict[str, tuple[float, float]] = {}
    for n, row in rows:
        a, b = _number(row.get(p_in)), _number(row.get(p_out))
        if a is None or b is None:
            bad = p_in if a is None else p_out
            errors.add(f"{path.name} row {n}, field {bad!r}: {row.get(bad)!r} is not a price ($ >= 0)")
        else:
            out[str(row.get(model)).strip()] = (a, b)
    return out


def read_evaluations(folder: Path, *, tokens: Path, prices: Path, datasets: set[str]) -> Matrix:
    """``folder/<model>/<model>_<dataset>...{csv,tsv,xlsx,json}`` (correctness in is_correct, hit or score, the
    sample in ``index``), ``tokens`` (model, sample_id, input_tokens, output_tokens) and ``prices`` ($ per
    million input and output tokens). The sample id is ``<dataset>/<index>`` as VL-RouterBench writes it
    (``<index>`` alone when the benchmark is one dataset: ``datasets`` empty). Cost = tokens x price."""
    errors = _Errors()
    if not folder.is_dir():
        raise MatrixRejected([f"{folder}: not a folder (one folder per model of evaluation files)"])
    right: dict[str, dict[str, bool]] = {}
    where: dict[str, str] = {}  # sample -> where it was first read
    read_at: dict[tuple[str, str], str] = {}  # (model, sample) -> where
    for model_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
        model = model_dir.name
        right[model] = {}
        files = sorted(p for p in model_dir.iterdir() if p.suffix.lower() in TABLE_SUFFIXES)
        if not files:
            errors.add(f"{folder.name}/{model}/: no evaluation file (.csv, .tsv, .xlsx, .json)")
        for path in files:
            name = f"{folder.name}/{model}/{path.name}"
            dataset = _dataset_of(path.stem, model, datasets) if datasets else ""
            if dataset is None:
                errors.add(f"{name}: the file name names none of the benchmark's datasets ({', '.join(sorted(datasets))}); "
                           f"VLMEvalKit names it <model>_<dataset>")
                continue
            try:
                columns, rows = _table(path)
                col = _column(columns, CORRECT_COLUMNS)
                if col is None or _column(columns, ("index",)) is None:
                    errors.add(f"{name}: needs the columns index and one of {', '.join(CORRECT_COLUMNS)}; "
                               f"it has {', '.join(columns)}")
                    continue
                index = _column(columns, ("index",))
                for n, row in rows:
                    ok = _flag(row.get(col))
                    sid = f"{dataset}/{row.get(index)}".strip("/") if dataset else str(row.get(index)).strip()
                    if ok is None:
                        errors.add(f"{name} row {n}, field {col!r}: {row.get(col)!r} is not 0 or 1")
                    elif sid in right[model]:
                        errors.add(f"{name} row {n}, field 'index': sample {sid!r} again (first at {read_at[(model, sid)]})")
                    else:
                        right[model][sid] = ok
                        read_at[(model, sid)] = f"{name} row {n}"
                        where.setdefault(sid, f"{name} row {n}")
            except READ_ERRORS as exc:
                errors.add(f"{name}: not a readable table ({type(exc).__name__}: {exc})")
    if not right:
        errors.add(f"{folder}: no model folders (one folder per model of evaluation files)")
    models = sorted(right)
    samples = list(dict.fromkeys(s for m in models for s in right[m]))
    for m in models:
        missing = [s for s in samples if s not in right[m]]
        if missing:
            errors.add(f"{folder.name}/{m}/: no evaluation row for {len(missing)} sample(s) the other models have, "
                       f"first {missing[0]!r} ({where[missing[0]]})")
    price = _prices(prices, errors)
    for m in models:
        if m not in price:
            errors.add(f"{prices.name}: no price for model {m!r} (its evaluation files are in {folder.name}/{m}/)")
    spent = _tokens(tokens, right, price, errors)
    for m in models:
        for s in samples:
            if m in price and s in right[m] and (m, s) not in spent:
                errors.add(f"{tokens.name}: no token counts for model {m!r}, sample {s!r} ({read_at[(m, s)]})")
                break
    if errors:
        raise MatrixRejected(errors)
    correct = np.array([[right[m][s] for m in models] for s in samples], dtype=bool).reshape(len(samples), len(models))
    cost = np.array([[spent[(m, s)] for m in models] for s in samples], dtype=float).reshape(len(samples), len(models))
    return Matrix(models=models, samples=samples, where=[where[s] for s in samples], correct=correct, cost=cost,
                  origin=f"imported from {folder.name}/ (evaluation files), {tokens.name}, {prices.name}")


def _tokens(path: Path, right: dict[str, dict[str, bool]], price: dict[str, tuple[float, float]],
            errors: _Errors) -> dict[tuple[str, str], float]:
    """{(model, sample): $}: input tokens x input price + output tokens x output price, per million."""
    read = _read_table(path, errors)
    if read is None:
        return {}
    columns, rows = read
    model = _column(columns, ("model", "model_id", "model_name"))
    sample = _column(columns, ("sample_id",))
    t_in = _column(columns, ("input_tokens", "prompt_tokens"))
    t_out = _column(columns, ("output_tokens", "completion_tokens"))
    if not (model and sample and t_in and t_out):
        errors.add(f"{path.name}: needs the columns model, sample_id, input_tokens and output_tokens; "
                   f"it has {', '.join(columns)}")
        return {}
    out: dict[tuple[str, str], float] = {}
    for n, row in rows:
        m, s = str(row.get(model)).strip(), str(row.get(sample)).strip()
        a, b = _number(row.get(t_in)), _number(row.get(t_out))
        if m not in right:
            errors.add(f"{path.name} row {n}, field {model!r}: unknown model {m!r} (the evaluation files have "
                       f"{', '.join(sorted(right))})")
        elif s not in right[m]:
            errors.add(f"{path.name} row {n}, field {sample!r}: {m!r} has no evaluation row for sample {s!r}")
        elif a is None or b is None:
            bad = t_in if a is None else t_out
            errors.add(f"{path.name} row {n}, field {bad!r}: {row.get(bad)!r} is not a token count")
        elif m in price:
            out[(m, s)] = (a * price[m][0] + b * price[m][1]) / 1e6
    return out
