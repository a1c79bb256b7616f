"""The client's files: versioned URLs cached for a year, a page revalidated
with its ETag, and a new version as soon as a file changes."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import httpx

from support.apps import AppServer

CLIENT = Path(__file__).resolve().parents[2] / "client"


async def test_versioned_files_are_kept_and_the_page_is_revalidated(tmp_path: Path) -> None:
    folder = tmp_path / "client"
    shutil.copytree(CLIENT, folder)
    async with AppServer("memory://", env={"BOULANGER_CLIENT_DIR": str(folder)}) as server:
        await _versioned(server, folder)


async def _versioned(server: AppServer, folder: Path) -> None:
    async with httpx.AsyncClient(base_url=server.base) as http:
        page = await http.get("/")
        assert page.status_code == 200 and page.headers["cache-control"] == "no-cache"
        version = re.search(r'"/static/(v-[0-9a-f]+)/app\.js"', page.text).group(1)  # type: ignore[union-attr]
        assert '"/static/app.js"' not in page.text  # every asset URL is versioned
        assert page.headers["etag"] == f'"{version}"'
        again = await http.get("/", headers={"If-None-Match": page.headers["etag"]})
        assert again.status_code == 304 and not again.content

        script = await http.get(f"/static/{version}/app.js")
        assert script.status_code == 200 and "navigate" in script.text
        assert script.headers["cache-control"] == "public, max-age=31536000, immutable"
        for path in ("/static/app.js", "/static/v-0123456789ab/app.js"):  # no or an old version
            answer = await http.get(path)
            assert answer.status_code == 200 and answer.headers["cache-control"] == "no-cache"
            assert (
                await http.get(path, headers={"If-None-Match": answer.headers["etag"]})
            ).status_code == 304
        assert (await http.get(f"/static/{version}/nope.js")).status_code == 404
        assert (await http.get(f"/static/{version}/../settings.py")).status_code == 404

        # A changed file makes a new version, so new URLs.
        (folder / "app.js").write_text((folder / "app.js").read_text() + "\n// changed\n")
        os.utime(folder / "app.js", ns=(1, 1))
        newer = await http.get("/")
        assert (
            f"/static/{version}/" not in newer.text
            and newer.headers["etag"] != page.headers["etag"]
        )
        assert (
            await http.get("/", headers={"If-None-Match": page.headers["etag"]})
        ).status_code == 200


async def test_unknown_addresses_get_the_page_with_a_404(memory_server: AppServer) -> None:
    async with httpx.AsyncClient(base_url=memory_server.base) as http:
        answer = await http.get("/no/such/page")
        assert answer.status_code == 404 and "<html" in answer.text.lower()
        assert "/static/v-" in answer.text
        api = await http.get("/api/no/such/thing")
        assert api.status_code == 404 and api.json()["error"]["code"] == "http"
        assert (await http.get("/rules")).status_code == 200
