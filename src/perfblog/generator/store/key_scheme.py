"""Key scheme 2 -> 3: the one named exception to "results are never re-keyed silently".

Scheme 3 is the key of a harness that lives in ``perfblog.harness`` (it was ``perfblog.generator``'s
``bench``, ``record``, ``verdict``, ``target``). A result's key covers the project's own modules its snippet
imports, so in a repository that holds perfblog itself (this one: ``../src/perfblog/...``) the move made
every result measured with the harness stale although nothing it measured changed. `blog migrate`
re-keys such a result, recording a ``Rekey`` that names the modules that moved, only when all hold:

- it is intact, its images are, and it was keyed by scheme 2;
- its snippet's code cells and key options are unchanged: the scheme-2 key, computed from the snippet as
  it is now with the module hashes the result recorded, is the result's key (it was fresh before);
- the snippet's other modules (helpers beside it, ``snippets/_common.py``) are unchanged;
- every perfblog module it recorded has the hash of the harness before the move (``BEFORE``), and every
  perfblog module the snippet imports now has the hash the move gave it (``AFTER``): the harness changed
  only by moving.

Anything else is left as it is: stale, for `blog run` (or, on a GPU, `blog migrate --rekey`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import PurePosixPath

from perfblog.generator.source.snippet import Snippet
from perfblog.generator.store.result import Rekey, Result

#: The scheme this migration re-keys from.
FROM_SCHEME = 2

#: The harness as scheme-2 keys recorded it: the files of perfblog (relative to ``src/``) a snippet could
#: import, by sha256, as of commit 2798f9b (the last before the harness moved). Frozen: never edit.
BEFORE = {
    "perfblog/__init__.py": "b4dc6bcc51c9450880626698af0a7d7b80ea408b50d3a1d627b6d65f28d557a0",
    "perfblog/core/__init__.py": "059c16df949c55b0cadb47e006f69e038b2c466d38bb3579c2c180b3e93d08d9",
    "perfblog/core/errors.py": "bdc1e2ce3d390ccae3a6286252cf2a46feda76d28253875a2cc46c4dfdafe545",
    "perfblog/generator/__init__.py": "0f1cdd1c85e05d8976a8335868dce9aa3d7f86124db1e897c9ca79a398ab3c1e",
    "perfblog/generator/bench.py": "6bb45ce87c05b9162c8510452e66b7fcdf99183ffdece3e5d6b437d3146a90b2",
    "perfblog/generator/errors.py": "3838356dc7eca80bc225e124450d7c9af418f694fdb61dcbc9ada2c7e762a277",
    "perfblog/generator/record.py": "bbdfc795aba125a46c168c2b3e443d897ccb505537e21d9bf9311d31d3d863a3",
    "perfblog/generator/target.py": "89593cdeefd77cd5d7ee6fef4fd3ff63de2be4e8bea4c945d8a4563af57c3ffd",
    "perfblog/generator/verdict.py": "6d23f0785e4338c722773a325d99282464ddcb57bc5cfc2ef42e8b5d5511047c",
}

#: The harness as the move left it (scheme 3), the same way: a harness edited since is not "only moved".
#: Frozen: never edit (once the harness changes again, results it measured before the move are re-run).
AFTER = {
    "perfblog/__init__.py": "348505adf68c48ab227685710a8564be39faa8868a0c9b87456330081fa88610",
    "perfblog/generator/__init__.py": "683745e96c16e2afc9834b451ea978475190426ebcb8798c046d6ce5539bd7ae",
    "perfblog/generator/bench.py": "ad5a39961d452ada81e9007b652cbd568890069f71b8f239ac0a2b1581c78459",
    "perfblog/harness/__init__.py": "323303731e3dd82dc58b54cf8404e3523eda50b7b2739ea78cd9b84f27ec4be7",
    "perfblog/harness/clocks.py": "c49cbfb4667546a4804b7722ca953699ab38474ed1322c075018f056c5018785",
    "perfblog/harness/compare.py": "f6cacb2aa05fec59dd628e6cf5b78083deae43ee1de5bdc629d816e596012018",
    "perfblog/harness/compilation.py": "3a950adc49a1f75fc769a2858a657f4ed7e4320f8fe609dee3540bebc937be93",
    "perfblog/harness/probe.py": "97a7a41715ca6bfbf48f77a8afa1c61dc1960b2753f864366539ee841f83072a",
    "perfblog/harness/record.py": "dd4ee924fc0c1c0564f55d8879228a8d7d1a4092a7d72570fca798af73d4d6a7",
    "perfblog/harness/stats.py": "5c2d4205dc62e0e2e6ae91fefef5592f9ee05f80d571163c307370f91779596a",
    "perfblog/harness/target.py": "89593cdeefd77cd5d7ee6fef4fd3ff63de2be4e8bea4c945d8a4563af57c3ffd",
    "perfblog/harness/verdict.py": "0630fd3c4205a2b1489a097d41400efd24985d091e6172adbd764a1ed2a6d598",
    "perfblog/harness/words.py": "9bceff07fe923077abfbc8c80c890696b5420f32512c9f7a4d82c9d16c7ef47b",
}


def package_path(module: str) -> str | None:
    """A key's module path (relative to the snippets dir) as a path in perfblog (``perfblog/...``), or None
    for a module that is not perfblog's own (a helper beside the snippets)."""
    parts = PurePosixPath(module).parts
    while parts[:1] == ("..",):
        parts = parts[1:]
    if parts[:1] == ("src",):
        parts = parts[1:]
    return "/".join(parts) if parts[:1] == ("perfblog",) else None


def migrated(snip: Snippet, result: Result, at: str, before: dict[str, str] = BEFORE,
             after: dict[str, str] = AFTER) -> Result | str:
    """``result`` keyed by the current scheme, or why it stays as it is. ``at``: the time to record."""
    hashes = result.hashes
    if hashes.scheme != FROM_SCHEME:
        return f"keyed by scheme {hashes.scheme}, not {FROM_SCHEME}"
    if not result.intact or result.damaged:
        return "edited by hand or its images changed"
    current = replace(snip.hashes, file=hashes.file)
    if result.key == snip.key:
        return replace(result, hashes=current)  # no harness in its key: only the scheme's number changes
    if replace(snip, modules=dict(hashes.modules)).key != result.key:
        return "its code, cells or options changed since it ran"
    old = {m: h for m, h in hashes.modules.items() if package_path(m) is None}
    new = {m: h for m, h in snip.modules.items() if package_path(m) is None}
    if old != new:
        return "a module of its own (beside the snippets) changed"
    if any(before.get(package_path(m) or "") != h for m, h in hashes.modules.items() if m not in old):
        return "its harness was not the one that moved"
    if any(after.get(package_path(m) or "") != h for m, h in snip.modules.items() if m not in new):
        return "the harness changed beyond the move"
    moved = sorted(m for m in {*hashes.modules, *snip.modules}
                   if hashes.modules.get(m) != snip.modules.get(m))
    return replace(result, key=snip.key, hashes=current,
                   rekeyed=(*result.rekeyed, Rekey(at=at, from_key=result.key, modules=tuple(moved))))

