"""The visual tool registry: VTC-Bench's 32 OpenCV operations, AdaptMMBench's and Agent-X's
image tools, a bounded toolchain runner, recovery transforms and oracle images.

A plain library (NumPy, OpenCV, Pillow, jsonschema): it imports nothing of Django or of the
apps, so the annotator, the scorer and scripts can all use it. See docs/tools.md.
"""

# Importing the tool modules registers their tools, in the order of VTC-Bench's modules.
from annotation.imagetools import geometry  # noqa: F401  isort: skip
from annotation.imagetools import enhancement  # noqa: F401  isort: skip
from annotation.imagetools import features  # noqa: F401  isort: skip
from annotation.imagetools import drawing  # noqa: F401  isort: skip
from annotation.imagetools import adapt  # noqa: F401  isort: skip
from annotation.imagetools import agent_names  # noqa: F401  isort: skip - after the tools it names
from annotation.imagetools.context import MAX_LISTED, Limits, ToolContext, ToolOutput
from annotation.imagetools.errors import (ChainError, ImageDecodeError, ImageTooLarge,
                                          ToolArgumentError, ToolError)
from annotation.imagetools.geometry import rotated_size
from annotation.imagetools.images import (Preview, as_bgr, as_gray, encode_jpeg, encode_png,
                                          ensure_image, load_image, make_preview)
from annotation.imagetools.registry import (MODULES, REGISTRY, Tool, resolve_tool_name,
                                            suggest_tool_name, validate_args)
from annotation.imagetools.runner import (ChainResult, StepResult, apply_transform, may_produce, oracle_image,
                                          run_chain)

__all__ = [
    "MAX_LISTED", "MODULES", "REGISTRY", "ChainError", "ChainResult", "ImageDecodeError",
    "ImageTooLarge", "Limits", "Preview", "StepResult", "Tool", "ToolArgumentError",
    "ToolContext", "ToolError", "ToolOutput", "apply_transform", "as_bgr", "as_gray",
    "encode_jpeg", "encode_png", "ensure_image", "load_image", "make_preview", "oracle_image",
    "may_produce", "resolve_tool_name", "rotated_size", "run_chain", "suggest_tool_name", "validate_args",
]
