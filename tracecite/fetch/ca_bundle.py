"""The CA bundle of ``--ca-cert`` (docs/reference/fetching.md), read once per run.

The settings check loads it before any input is read (a bundle without a usable certificate is
TC100) and the resolved settings carry what it loaded to the fetcher's options
(:attr:`tracecite.fetch.options.FetchOptions.ca_bundle`); the fetcher adds the system trust store
to it when its first https pool is made (:func:`tracecite.fetch.connection.tls_context`). A fetcher
given options by hand, with no bundle loaded, loads it itself with :func:`load_ca_bundle`.

The standard library's ``ssl`` only: the check needs neither urllib3 nor the system store.
"""

from __future__ import annotations

import errno
import os
import ssl


class CaBundleError(ValueError):
    """A CA bundle that cannot be loaded; ``reason``: why, in a word (OpenSSL's reason, such as
    ``NO_CERTIFICATE_OR_CRL_FOUND``, else the error's type, such as ``FileNotFoundError``)."""

    def __init__(self, path: str, cause: OSError | ValueError) -> None:
        # The fetcher's message names the file; a ValueError (a path with a NUL) says it all.
        super().__init__(f"cannot load CA certificates from {path}: {cause}"
                         if isinstance(cause, OSError) else str(cause))
        self.reason: str = getattr(cause, "reason", None) or type(cause).__name__


def load_ca_bundle(path: str) -> ssl.SSLContext:
    """A client TLS context that trusts the PEM bundle at ``path`` and nothing else yet
    (:class:`CaBundleError` if it holds no usable certificate)."""
    if not path:  # create_default_context would read the system store instead of no file
        raise CaBundleError(path, FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT)))
    try:
        # The default context's settings (those of the Python version) with the bundle alone:
        # the system store, which takes far longer to load, waits for a first https pool.
        return ssl.create_default_context(cafile=path)
    except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
        raise CaBundleError(path, exc) from exc
