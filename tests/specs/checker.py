"""Every exchange of the tests held against the published API specifications.

``check(spec, endpoint, instance)`` raises ``SpecViolation`` (an ``AssertionError``, so a
test fails with it) when ``instance`` does not satisfy ``endpoint`` of ``tests/specs/<spec>.json``
(built by ``build_specs.py``; ``meilisearch.json`` is written by hand, see its ``source``).
A validator is built once per endpoint and process.

``DEVIATIONS`` lists the only places where searchport knowingly answers outside a
specification, each with its reason; ``check`` tolerates exactly those.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from itertools import islice
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, validators  # type: ignore[import-untyped]
from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]
from referencing import Registry
from referencing.jsonschema import DRAFT202012

HERE = Path(__file__).resolve().parent
SPECS = ("opensearch", "elasticsearch", "typesense", "algolia", "insights", "analytics",
         "meilisearch", "openai")


class SpecViolation(AssertionError):
    """An exchange the specification of its endpoint refuses."""


@dataclass(frozen=True)
class Deviation:
    """A known, deliberate difference from a specification: ``tolerated(error)`` says
    whether a validation error is this one."""

    spec: str
    reason: str
    tolerated: Callable[[ValidationError], bool]


def _facets_only_hits_per_page(error: ValidationError) -> bool:
    return (error.validator == "minimum" and error.instance == 0
            and list(error.absolute_path)[-1:] == ["hitsPerPage"])


def _no_click_count_zero(error: ValidationError) -> bool:
    return (error.validator == "minimum" and error.instance == 0
            and list(error.absolute_path)[-1:] == ["noClickCount"])


DEVIATIONS = (
    Deviation("algolia", "hitsPerPage 0 is echoed on a facets-only query; Algolia's OpenAPI "
              "bounds it to 1..1000 but its live API answers it the same way",
              _facets_only_hits_per_page),
    Deviation("analytics", "noClickCount is 0 on a day without tracked searches, or when "
              "each of them got a click; the specification's minimum of 1 cannot hold there "
              "(its rate, never null, is 0 on such days too)", _no_click_count_zero),
)


BRANCH_ERRORS = 3  # errors kept from each failed branch of a union, for the message
_MEMO = threading.local()  # (id(instance), id(member)) -> valid, during one validation


def _valid(validator: Any, member: Any, instance: Any, index: int) -> bool:
    """Whether ``instance`` satisfies ``member``, stopping at the first error and asked once
    per instance and member in a validation: the validator's own ``anyOf`` walks every
    branch to its last error, which grows exponentially with nested unions (aggregations
    in the buckets of aggregations)."""
    table: dict[tuple[int, int], bool] | None = getattr(_MEMO, "table", None)
    key = (id(instance), id(member))
    if table is not None and key in table:
        return table[key]
    valid = next(iter(validator.descend(instance, member, schema_path=index)), None) is None
    if table is not None:
        table[key] = valid
    return valid


def _branch_errors(validator: Any, members: list[Any], instance: Any
                   ) -> list[ValidationError]:
    return [error for index, member in enumerate(members)
            for error in islice(validator.descend(instance, member, schema_path=index),
                                BRANCH_ERRORS)]


def _any_of(validator: Any, members: list[Any], instance: Any, schema: Any
            ) -> Iterator[ValidationError]:
    if not any(_valid(validator, m, instance, i) for i, m in enumerate(members)):
        yield ValidationError(f"{instance!r:.200} is not valid under any of the given "
                              "schemas", context=_branch_errors(validator, members, instance))


def _one_of(validator: Any, members: list[Any], instance: Any, schema: Any
            ) -> Iterator[ValidationError]:
    valid = [i for i, m in enumerate(members) if _valid(validator, m, instance, i)]
    if not valid:
        yield ValidationError(f"{instance!r:.200} is not valid under any of the given "
                              "schemas", context=_branch_errors(validator, members, instance))
    elif len(valid) > 1:
        yield ValidationError(f"{instance!r:.200} is valid under more than one of the "
                              f"given schemas (branches {valid})")


Validator = validators.extend(Draft202012Validator, {"anyOf": _any_of, "oneOf": _one_of})


@cache
def document(spec: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((HERE / f"{spec}.json").read_text(encoding="utf-8"))
    return data


def _uri(spec: str) -> str:
    return f"urn:searchport-tests:spec:{spec}"


@cache
def _registry(spec: str) -> Registry[Any]:
    contents = {**document(spec), "$id": _uri(spec)}
    return Registry().with_resource(_uri(spec), DRAFT202012.create_resource(contents))


@cache
def validator(spec: str, endpoint: str) -> Any:
    if endpoint not in document(spec)["endpoints"]:
        raise KeyError(f"{spec}.json has no endpoint {endpoint!r}")
    return Validator({"$ref": f"{_uri(spec)}#/endpoints/{endpoint}"},
                                registry=_registry(spec))


def commit(spec: str) -> str:
    return str(document(spec)["source"]["commit"])


def _leaves(error: ValidationError) -> Iterator[ValidationError]:
    """The errors under a ``oneOf``/``anyOf`` that failed in every branch."""
    if not error.context:
        yield error
        return
    for sub in error.context:
        yield from _leaves(sub)


def _tolerated(spec: str, error: ValidationError) -> bool:
    deviations = [d for d in DEVIATIONS if d.spec == spec]
    if not deviations:
        return False
    if error.context:  # every branch that failed only by a deviation counts as passed
        branches: dict[int, list[ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)  # type: ignore[arg-type]
        return any(all(_tolerated(spec, sub) for sub in subs) for subs in branches.values())
    return any(d.tolerated(error) for d in deviations)


def problems(spec: str, endpoint: str, instance: Any) -> list[str]:
    """What the specification refuses in ``instance``: one line per error, at its path."""
    found: list[str] = []
    _MEMO.table = {}
    try:
        errors = list(validator(spec, endpoint).iter_errors(instance))
    finally:
        _MEMO.table = None
    for error in errors:
        if _tolerated(spec, error):
            continue
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        leaves = sorted(_leaves(error), key=lambda e: -len(e.absolute_path))
        detail = "; ".join(dict.fromkeys(
            f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message[:200]}"
            for e in leaves[:4]))
        found.append(f"{where}: {error.message[:300]}" + (
            f" [deepest: {detail}]" if error.context else ""))
    return found


def check(spec: str, endpoint: str, instance: Any, *, what: str = "") -> None:
    found = problems(spec, endpoint, instance)
    if found:
        head = f"{spec} {endpoint} @ {commit(spec)[:12]}" + (f" ({what})" if what else "")
        body = json.dumps(instance)[:1500]
        raise SpecViolation(f"{head} refuses:\n  " + "\n  ".join(found[:8])
                            + f"\nbody: {body}")
