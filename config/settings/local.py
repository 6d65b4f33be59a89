"""Local development: the run command uses these. SQLite and the embedded broker by default."""

from config.settings.base import *  # noqa: F401,F403
from config.settings.base import STATIC_ROOT
from config.settings.env import env_bool

DEBUG = env_bool("DEBUG", True)
# A local run calls a model on this machine (vLLM, Ollama) or the simulated model: allowed here.
RUNS_ALLOW_PRIVATE_ENDPOINTS = env_bool("RUNS_ALLOW_PRIVATE_ENDPOINTS", True)
# Static files compressed as in production (plotly.js goes out as 1.4 MB instead of 4.8 MB): scripts/run collects
# them at every start, each with a gzip copy (base.py's CompressedStaticFilesStorage), and WhiteNoise serves that
# folder. Without a collected folder (a bare `manage.py runserver`) it serves the sources, uncompressed.
WHITENOISE_USE_FINDERS = WHITENOISE_AUTOREFRESH = not (STATIC_ROOT / "vendor" / "plotly.min.js.gz").exists()
