"""A benchmark's inputs as public downloads, per split: our zip, a VLMEvalKit TSV, a parquet (docs/downloads.md).

``selectors`` reads (the build key, the rows a page shows), ``services`` writes (asking for the
builds, building one), ``writers`` writes the files, streamed. The task is ``annotation.tasks.download_build``,
sent by name on commit. Pages and the API live in the leaderboard (``leaderboard/downloads.py``).
"""
