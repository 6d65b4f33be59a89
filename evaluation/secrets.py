"""Endpoints' API keys at rest: encrypted with Fernet (the `cryptography` package: AES-128-CBC with an
HMAC-SHA256, a timestamped token), under RUNS_ENCRYPTION_KEY, else a key derived from SECRET_KEY.
A key is decrypted only in the worker that calls the endpoint, never shown, never logged."""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


def _fernet() -> Fernet:
    key = settings.RUNS_ENCRYPTION_KEY
    if not key:
        digest = hashlib.sha256(("hosted-run-api-keys:" + settings.SECRET_KEY).encode()).digest()
        key = base64.urlsafe_b64encode(digest).decode()
    return Fernet(key.encode() if isinstance(key, str) else key)


def encrypt_api_key(plain: str) -> str:
    return _fernet().encrypt(plain.encode()).decode() if plain else ""


def decrypt_api_key(token: str) -> str:
    """The key in clear; "" when there is none. Raises ValueError if it cannot be read (a rotated key)."""
    if not token:
        return ""
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken as exc:
        raise ValueError("the stored API key cannot be decrypted (was RUNS_ENCRYPTION_KEY changed?)") from exc
