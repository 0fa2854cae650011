"""A temporary index on a real Meilisearch, loaded through its own API: shared by the live
suite (``test_live.py``) and the conformance suite (``tests/conformance``).

``SEARCHPORT_TEST_MEILISEARCH_URL`` names the server, ``SEARCHPORT_TEST_MEILISEARCH_KEY`` its
master (or an admin) key.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import httpx

URL_VAR = "SEARCHPORT_TEST_MEILISEARCH_URL"
KEY_VAR = "SEARCHPORT_TEST_MEILISEARCH_KEY"
TASK_SECONDS = 60.0


def wait(admin: httpx.Client, answer: httpx.Response) -> None:
    """Until the task ``answer`` enqueued has succeeded (anything else fails)."""
    answer.raise_for_status()
    task = answer.json()["taskUid"]
    deadline = time.monotonic() + TASK_SECONDS
    while time.monotonic() < deadline:
        status = admin.get(f"/tasks/{task}").json()
        if status["status"] in ("succeeded", "failed", "canceled"):
            assert status["status"] == "succeeded", status
            return
        time.sleep(0.05)
    raise AssertionError(f"task {task} did not finish")


@contextmanager
def temporary_index(url: str, key: str, settings: Mapping[str, Any],
                    rows: Sequence[Mapping[str, Any]],
                    prefix: str = "searchport_test") -> Iterator[str]:
    """A uniquely named index (primary key ``id``) with ``settings`` and ``rows``, indexed
    on entry, deleted on exit; yields its uid."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    uid = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with httpx.Client(base_url=url, headers=headers, timeout=30) as admin:
        wait(admin, admin.post("/indexes", json={"uid": uid, "primaryKey": "id"}))
        try:
            wait(admin, admin.patch(f"/indexes/{uid}/settings", json=dict(settings)))
            wait(admin, admin.post(f"/indexes/{uid}/documents", json=list(rows)))
            yield uid
        finally:
            wait(admin, admin.delete(f"/indexes/{uid}"))
