"""The executors `blog run --executor NAME` chooses from, by name: how each is made from the request."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from perfblog.generator.errors import GeneratorError
from perfblog.generator.run.executor import Executor, Request, Workload
from perfblog.generator.run.local import Local


def _local(request: Request, scope: Workload) -> Executor:
    if request.address or request.device_classes:
        raise GeneratorError("--address and --device-class go with --executor ray; "
                             "the local executor runs on this machine's device class")
    return Local(scope.device_class, request.workers)


def _ray(request: Request, scope: Workload) -> Executor:
    from perfblog.generator.run import cluster  # imports Ray only when it connects

    if request.workers != 1:
        raise GeneratorError("-j goes with the local executor; on Ray, the cluster's resources decide how "
                             "many snippets run at once")
    return cluster.RayExecutor(scope, address=request.address, requested=request.device_classes)


@dataclass(frozen=True)
class Kind:
    """An executor `blog run --executor` can choose: how it is made, and what it is for."""

    make: Callable[[Request, Workload], Executor]
    help: str


#: Executors by the name `blog run --executor` takes.
EXECUTORS: dict[str, Kind] = {
    "local": Kind(_local, "this machine (the default); -j N runs behaviour-only snippets N at a time"),
    "ray": Kind(_ray, "a Ray cluster (pip install 'perfblog[cluster]'): every device class its nodes offer"),
}
