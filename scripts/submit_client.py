#!/usr/bin/env python3
"""Upload a prediction file to the leaderboard and (optionally) wait for its scores.

Standalone: Python 3.9+ standard library only, so you can copy this one file next to your
harness. The file is streamed from disk (never read whole) with an upload progress bar.

    python submit_client.py --server http://127.0.0.1:8000 --token YOUR_TOKEN \\
        --benchmark adaptmm-demo --model "My-VLM 7B" predictions.jsonl --wait

Get a token with `python manage.py drf_create_token USERNAME` (or ask the site's admins).
Exit status: 0 when accepted (with --wait: when done), 1 when refused or failed.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

CHUNK = 256 * 1024


def bar(done: int, total: int, label: str, width: int = 30) -> None:
    frac = done / total if total else 1.0
    filled = int(width * frac)
    sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {frac * 100:5.1f}% "
                     f"({done:,}/{total:,})")
    sys.stderr.flush()


def connect(server: str) -> tuple[http.client.HTTPConnection, str]:
    parts = urlsplit(server)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    return cls(parts.netloc, timeout=300), parts.path.rstrip("/")


def upload(server: str, token: str, benchmark: str, path: Path, fields: dict[str, str]) -> tuple[int, dict]:
    boundary = uuid.uuid4().hex
    head = b"".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
        for k, v in fields.items() if v not in (None, "")
    )
    head += (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{path.name}"\r\n'
             "Content-Type: application/x-ndjson\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    size = path.stat().st_size
    conn, prefix = connect(server)
    conn.putrequest("POST", f"{prefix}/api/v1/benchmarks/{benchmark}/submissions/")
    conn.putheader("Authorization", f"Token {token}")
    conn.putheader("Content-Type", f"multipart/form-data; boundary={boundary}")
    conn.putheader("Content-Length", str(len(head) + size + len(tail)))
    conn.endheaders()
    conn.send(head)
    sent = 0
    try:
        with path.open("rb") as fh:
            while chunk := fh.read(CHUNK):
                conn.send(chunk)
                sent += len(chunk)
                bar(sent, size, "upload ")
        conn.send(tail)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server answered early (e.g. 413); read its answer below
    sys.stderr.write("\n")
    resp = conn.getresponse()
    body = resp.read()
    try:
        return resp.status, json.loads(body or b"{}")
    except ValueError:
        return resp.status, {"detail": body.decode(errors="replace")[:500]}


def get(url: str, token: str) -> dict:
    parts = urlsplit(url)
    conn, _ = connect(f"{parts.scheme}://{parts.netloc}")
    conn.request("GET", parts.path, headers={"Authorization": f"Token {token}"})
    resp = conn.getresponse()
    data = json.loads(resp.read() or b"{}")
    if resp.status != 200:
        raise SystemExit(f"GET {url}: HTTP {resp.status}: {data}")
    return data


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", type=Path)
    p.add_argument("--server", default=os.environ.get("LEADERBOARD_URL", "http://127.0.0.1:8000"))
    p.add_argument("--token", default=os.environ.get("LEADERBOARD_TOKEN"), help="or set LEADERBOARD_TOKEN")
    p.add_argument("--benchmark", required=True, help="the benchmark's slug, e.g. adaptmm-demo")
    p.add_argument("--model", required=True, help="the model's name")
    p.add_argument("--organisation", default="")
    p.add_argument("--model-url", default="")
    p.add_argument("--paper-url", default="")
    p.add_argument("--weights", choices=["open", "closed"], default=None)
    p.add_argument("--params", default="", help='parameter count: "7B", "1.5B", "500M", or a number of billions')
    p.add_argument("--license", default="", help='the model\'s licence, e.g. "Apache-2.0"')
    p.add_argument("--release-date", default="", help="YYYY-MM-DD")
    p.add_argument("--prices", nargs=2, type=float, metavar=("IN", "OUT"),
                   help="USD per million input and output tokens")
    p.add_argument("--description", default="")
    p.add_argument("--format", default="jsonl", choices=["jsonl", "vlmevalkit", "vtcbench", "agentx"],
                   help="the file's shape: our JSON Lines (default) or an author's, converted by the server")
    # the server's FULL_PIPELINE_HELP (evaluation/models.py): this script imports nothing of the project
    p.add_argument("--full-pipeline", action="store_true",
                   help="under a scoring profile, the authors' full pipeline: rows their rule leaves to their LLM "
                        "judge are undecided (not wrong) until an LLM judge decides them (docs/metrics.md)")
    p.add_argument("--public", action="store_true", help="publish on the leaderboard once scored")
    p.add_argument("--wait", action="store_true", help="poll until done or failed, then print the results")
    args = p.parse_args(argv)
    if not args.token:
        p.error("a token is needed: --token or LEADERBOARD_TOKEN")
    if not args.file.is_file():
        p.error(f"no file at {args.file}")
    fields = {
        "model_name": args.model, "organisation": args.organisation, "model_url": args.model_url,
        "paper_url": args.paper_url, "weights": args.weights or "", "description": args.description,
        "parameters_billions": args.params, "license": args.license, "release_date": args.release_date,
        "price_input_per_mtok": str(args.prices[0]) if args.prices else "",
        "price_output_per_mtok": str(args.prices[1]) if args.prices else "",
        "is_public": "true" if args.public else "false",
        "format": args.format,
        "full_pipeline": "true" if args.full_pipeline else "false",
    }
    status, body = upload(args.server, args.token, args.benchmark, args.file, fields)
    if status != 202:
        print(f"refused (HTTP {status}): {body.get('detail', body)}", file=sys.stderr)
        return 1
    print(f"submission {body['id']}: {body['status']} - {body['page']}", file=sys.stderr)
    if not args.wait:
        print(json.dumps(body))
        return 0
    while True:
        data = get(body["url"], args.token)
        prog = data["progress"]
        if data["status"] in ("done", "failed"):
            sys.stderr.write("\n")
            break
        bar(prog["done"], prog["total"] or 1, f"{data['status']:<10}")
        time.sleep(1)
    if data["status"] == "failed":
        print(f"failed: {data['failure_reason']}", file=sys.stderr)
        for e in data["errors"]:
            where = e.get("where") or ("file" if e["line"] is None else f"line {e['line']}")
            print(f"  {where}, field '{e['field']}': {e['message']}", file=sys.stderr)
        return 1
    print(json.dumps(data["results"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
