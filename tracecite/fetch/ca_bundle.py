"""The CA bundle of ``--ca-cert`` (docs/reference/fetching.md), read once per run.

The settings check loads it before any input is read (:func:`check_ca_bundle`: a bundle without
a usable certificate is TC100) into the TLS context the fetcher will use, and keeps that context;
the run's fetcher takes it (:func:`take_ca_bundle`) instead of reading the file again, and adds the
system trust store to it when its first https pool is made
(:func:`tracecite.fetch.connection.tls_context`). A fetcher given options by hand, with no check
before it, loads the bundle itself.

The standard library's ``ssl`` only: the check needs neither urllib3 nor the system store.
"""

from __future__ import annotations

import errno
import os
import ssl
import threading

_FileKey = tuple[str, int, int, int, int]
"""A bundle file as it was loaded: its absolute path, device, inode, size and modification time."""

_checked: dict[_FileKey, ssl.SSLContext] = {}
"""The bundle the last check loaded, until a fetcher takes it (one run's at a time)."""
_checked_lock = threading.Lock()


class CaBundleError(ValueError):
    """A CA bundle that cannot be loaded; ``reason``: why, in a word (OpenSSL's reason, such as
    ``NO_CERTIFICATE_OR_CRL_FOUND``, else the error's type, such as ``FileNotFoundError``)."""

    def __init__(self, path: str, cause: OSError | ValueError) -> None:
        # The fetcher's message names the file; a ValueError (a path with a NUL) says it all.
        super().__init__(f"cannot load CA certificates from {path}: {cause}"
                         if isinstance(cause, OSError) else str(cause))
        self.reason: str = getattr(cause, "reason", None) or type(cause).__name__


def check_ca_bundle(path: str) -> None:
    """Load the PEM CA bundle at ``path`` (:class:`CaBundleError` if it holds no usable
    certificate) and keep it for the run's fetcher (:func:`take_ca_bundle`)."""
    context = _load(path)
    key = _file_key(path)
    with _checked_lock:
        _checked.clear()
        if key is not None:
            _checked[key] = context


def take_ca_bundle(path: str) -> ssl.SSLContext:
    """A client TLS context that trusts the bundle at ``path`` and nothing else yet: the one
    :func:`check_ca_bundle` loaded when the file is unchanged since, else loaded now
    (:class:`CaBundleError`). Each context is taken once: it becomes one fetcher's own."""
    key = _file_key(path)
    with _checked_lock:
        context = _checked.pop(key, None) if key is not None else None
    return context if context is not None else _load(path)


def _load(path: str) -> ssl.SSLContext:
    if not path:  # create_default_context would read the system store instead of no file
        raise CaBundleError(path, FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT)))
    try:
        # The default context's settings (those of the Python version) with the bundle alone:
        # the system store, which takes far longer to load, waits for a first https pool.
        return ssl.create_default_context(cafile=path)
    except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
        raise CaBundleError(path, exc) from exc


def _file_key(path: str) -> _FileKey | None:
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return (os.path.abspath(path), status.st_dev, status.st_ino, status.st_size,
            status.st_mtime_ns)
