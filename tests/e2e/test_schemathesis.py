"""schemathesis against a real ``searchport serve`` process and its own ``/openapi/json``:
thousands of generated requests on every operation, with auth off and on; no 5xx, and every
status, content type and body as the OpenAPI document declares."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.conftest import Server, sample_config

SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
CHECKS = ",".join([
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
])
EXAMPLES = 250  # per operation and phase: over a thousand requests, however slow the machine
TIMEOUT = 600  # seconds for one run, a safety net only
KEY = "schemathesis-key"


def run_schemathesis(server: Server, workdir: Path, headers: dict[str, str]) -> str:
    # real values for the path parameters, so requests reach the engine, not only 404s
    config = [
        "[parameters]",
        'handle = "cities"',
        'field = "country"',
        'doc_id = "/1796236"',
    ]
    (workdir / "schemathesis.toml").write_text("\n".join(config) + "\n", encoding="utf-8")
    done = subprocess.run(
        [str(SCHEMATHESIS), "run", f"{server.url}/openapi/json", "--checks", CHECKS,
         "--max-examples", str(EXAMPLES), "--workers", "2", "--no-color",
         *[arg for name, value in headers.items() for arg in ("-H", f"{name}: {value}")]],
        cwd=workdir, capture_output=True, text=True, timeout=TIMEOUT,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-6000:]
    return output


@pytest.mark.parametrize("auth", [False, True], ids=["open", "key"])
def test_generated_requests_never_fail_and_match_the_schema(
    auth: bool, server_factory: Callable[..., Server], tmp_path: Path
) -> None:
    server = server_factory(sample_config(extra_top=f"apiKey: {KEY}" if auth else ""))
    headers = {"Authorization": f"Bearer {KEY}"} if auth else {}
    output = run_schemathesis(server, tmp_path, headers)
    generated = re.search(r"(\d+) generated, (\d+) passed", output)
    assert generated, output[-3000:]
    assert int(generated.group(1)) == int(generated.group(2)) >= 1000
    paths = server.client.get("/openapi/json", headers=headers).json()["paths"]
    operations = sum(len(methods) for methods in paths.values())
    assert re.search(rf"Tested: {operations}\b", output), output[-3000:]
