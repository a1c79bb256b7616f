"""The client's files, cached the long way: versioned URLs that never change.

``index.html`` is served with its asset URLs rewritten from ``/static/x`` to
``/static/v-<version>/x``, where the version is a hash of every client file.
A browser keeps a file under a versioned URL for a year without asking
again (``immutable``): its content cannot change under that URL, since any
change makes a new version and so new URLs. The modules import each other by
relative paths, so they inherit the prefix with no build step. The page
itself is revalidated on every visit (an ETag: a ``304`` costs a few bytes).
URLs without a version, or with an old one, still work and are revalidated.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

FOREVER = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
_VERSION = re.compile(r"v-[0-9a-f]{1,40}")


class ClientFiles(StaticFiles):
    """The client folder under ``/static``, with ``/static/v-<version>/`` for the long cache."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory=directory, check_dir=False)
        self.folder = directory
        self._signature: tuple[tuple[str, int, int], ...] | None = None
        self._version = ""
        self._index = b""

    def _refresh(self) -> None:
        """Hash the files again when one changed (a cheap stat of each, per page load)."""
        # The folder's files and those of its folders (the language catalogs in lang/).
        files = sorted(
            (path for path in self.folder.rglob("*") if path.is_file()),
            key=lambda path: path.relative_to(self.folder).as_posix(),
        )
        stats = [(path, path.stat()) for path in files]
        signature = tuple(
            (path.relative_to(self.folder).as_posix(), st.st_size, st.st_mtime_ns)
            for path, st in stats
        )
        if signature == self._signature:
            return
        digest = hashlib.sha256()
        for path in files:
            name = path.relative_to(self.folder).as_posix()
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
        self._version = f"v-{digest.hexdigest()[:12]}"
        index = self.folder / "index.html"
        text = index.read_text() if index.is_file() else ""
        self._index = text.replace('"/static/', f'"/static/{self._version}/').encode()
        self._signature = signature

    @property
    def version(self) -> str:
        self._refresh()
        return self._version

    def page(self, request: Request, status_code: int = 200) -> Response:
        """The client's one page, with versioned asset URLs; 304 when the browser has it."""
        self._refresh()
        if not self._index:
            return JSONResponse({"error": {"code": "no_client", "reason": "client not found"}}, 404)
        etag = f'"{self._version}"'
        headers = {"Cache-Control": REVALIDATE, "ETag": etag}
        if status_code == 200 and etag in request.headers.get("if-none-match", ""):
            return Response(status_code=304, headers=headers)
        return Response(self._index, status_code, headers=headers, media_type="text/html")

    async def get_response(self, path: str, scope: Scope) -> Response:
        first, _, rest = path.replace(os.sep, "/").partition("/")
        versioned = bool(rest) and _VERSION.fullmatch(first) is not None
        response = await super().get_response(rest if versioned else path, scope)
        current = versioned and first == self.version
        # An old version's URL gets today's file: the browser must not keep it.
        response.headers["Cache-Control"] = FOREVER if current else REVALIDATE
        return response
