"""Local development: the run command uses these. SQLite and the embedded broker by default."""

from config.settings.base import *  # noqa: F401,F403
from config.settings.env import env_bool

DEBUG = env_bool("DEBUG", True)
# A local run calls a model on this machine (vLLM, Ollama) or the simulated model: allowed here.
RUNS_ALLOW_PRIVATE_ENDPOINTS = env_bool("RUNS_ALLOW_PRIVATE_ENDPOINTS", True)
