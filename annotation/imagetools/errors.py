"""The exceptions of the tool registry. Every message is meant to be shown to a person as is."""

from __future__ import annotations


class ToolError(Exception):
    """A tool could not run: bad input, a failed operation, an image it cannot handle."""


class ToolArgumentError(ToolError):
    """One argument is wrong. `argument` names it and the message starts with it (it is None
    only when the arguments as a whole are unusable, e.g. not an object)."""

    def __init__(self, argument: str | None, detail: str) -> None:
        self.argument = argument
        self.detail = detail
        if not argument:
            message = detail
        elif detail.startswith("is "):  # 'argument "x" is missing' reads better without a colon
            message = f'argument "{argument}" {detail}'
        else:
            message = f'argument "{argument}": {detail}'
        super().__init__(message)


class ImageTooLarge(ToolError):
    """An image has more pixels than allowed. Raised from the header, before decoding."""


class ImageDecodeError(ToolError):
    """The bytes are not an image this library can read."""


class ChainError(ToolError):
    """A tool chain (or a transform) failed; the message names the step and the argument."""

    def __init__(self, message: str, *, step: int | None = None, tool: str | None = None) -> None:
        self.step = step
        self.tool = tool
        super().__init__(message)
