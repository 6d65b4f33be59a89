"""The harness: runs a model behind an OpenAI-compatible chat-completions endpoint on a
benchmark's own protocol (spec/runs.md; docs/runs.md) and writes one prediction line per
(sample, mode) in formats.md's shape, scored like any uploaded file.

Plain Python over the tool registry (`annotation/imagetools`) and the shared endpoint machinery
(`evaluation/endpoint_limits.py`): no Django import, so a checkout, a Celery worker and a test
run the same code. The Django side (`evaluation/run_inputs.py`, `manage.py run_model`) turns a
benchmark into `RunItem`s and hands the file to `submit`.

- items.py     what one sample gives a run (plain data: paths, question, options, oracle recipe)
- prompts.py   the versioned prompts per family and mode (prompts/*.txt) and the question layout
- tools.py     the tools offered (OpenAI function schemas from the registry), the tagged-text
               protocol, and bounded execution of one call
- client.py    one chat-completions request: cache, rate gate, Retry-After, retries, budget
- safe_http.py which addresses a run may call (checked at creation and at each connection), no
               redirects, the response cap and time limit: the HTTP client under client.py
- cache.py     the persistent request cache (SQLite): a re-run or a resumed run pays nothing twice
- loop.py      one (sample, mode): the conversation, the tool loop, the recorded line
- runner.py    a whole run: estimate, concurrency, progress, the file
- simulated.py the simulated model (a stdlib HTTP server): the demo, the tests and the bench
"""

from evaluation.metrics.types import FAILURE_CLASSES as FAILURE_CLASSES, MODES as MODES  # the one definition of each

HARNESS_VERSION = "1.0"
