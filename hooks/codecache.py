"""baton's compiled modules in one file, so that a hook process does not search for each one.

A hook imports 45 to 75 of baton's modules. For each, Python's import system looks the module up
on the path, checks its source's timestamp and reads its ``.pyc``: about 90 microseconds a
module, 4-6 ms of a 30-45 ms hook process. The bootstrap in ``hooks.json`` puts :class:`Cache`
first on ``sys.meta_path``. It serves each of baton's modules from one file,
``hooks/__pycache__/baton-modules.<cache_tag>.bin`` (the bootstrap switches ``PYTHONPYCACHEPREFIX``
off, so this file lies in the plugin's folder, which no tool may write), and only after checking
that the module's source file still has the size and modification time, to the nanosecond, that
it had when it was compiled. That is the check Python makes before
it trusts a ``.pyc``, made stricter.

A module the file cannot serve (no entry yet, or a changed source) is imported the usual way.
After the hook has answered, :meth:`Cache.save` compiles what was missing from source and rewrites
the file atomically, keeping the entries that are still valid. Nothing is written when bytecode
writing is off (``PYTHONDONTWRITEBYTECODE``, ``-B``); a damaged file, or one written by another
Python, is ignored and replaced; a file that cannot be written only means a slower start.
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

    # module name -> (path under the root, is a package, source size, source mtime in ns, marshalled code)
    Entry = Tuple[str, bool, int, int, Union[bytes, memoryview]]

PACKAGES = ("hooks", "store")
VERSION = 1
HEAD = 8  # the file: the index's length (8 bytes, little-endian), the index, then the modules' code


def cache_key() -> Tuple[Any, ...]:
    """What the file's entries are valid for: this format, this Python build, this optimization level."""
    return ("baton-modules", VERSION, sys.version, sys.flags.optimize)


def file_for(root: str) -> str:
    """Where the cache of the plugin at ``root`` lives (as Python places a ``.pyc``)."""
    folder = os.path.join(os.path.abspath(root), "hooks")
    prefix = getattr(sys, "pycache_prefix", None)
    where = os.path.join(prefix, folder.lstrip(os.sep)) if prefix else os.path.join(folder, "__pycache__")
    return os.path.join(where, f"baton-modules.{sys.implementation.cache_tag}.bin")


def read(path: str) -> Dict[str, Entry]:
    """The entries saved at ``path``, or none when it is missing, damaged or another Python's. The
    code stays in the file's one buffer until a module is imported."""
    try:
        with open(path, "rb") as handle:
            data = memoryview(handle.read())
        length = int.from_bytes(data[:HEAD], "little")
        key, index = marshal.loads(data[HEAD : HEAD + length])
        start = HEAD + length
        if key != cache_key() or not isinstance(index, dict):
            return {}
        entries: Dict[str, Entry] = {
            name: (relative, package, size, mtime, data[start + offset : start + offset + count])
            for name, (relative, package, size, mtime, offset, count) in index.items()}
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if any(len(entry[4]) != count for entry, (*_, count) in zip(entries.values(), index.values())):
        return {}  # cut short
    return entries


def write(path: str, entries: Dict[str, Entry]) -> None:
    """Save ``entries`` at ``path`` atomically (a reader sees the old file or the new one)."""
    index: Dict[str, Tuple[str, bool, int, int, int, int]] = {}
    blobs: List[bytes] = []
    offset = 0
    for name, (relative, package, size, mtime, code) in entries.items():
        index[name] = (relative, package, size, mtime, offset, len(code))
        blobs.append(bytes(code))
        offset += len(code)
    head = marshal.dumps((cache_key(), index))
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temporary, "wb") as handle:
            handle.write(len(head).to_bytes(HEAD, "little") + head + b"".join(blobs))
        os.replace(temporary, path)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass


class Cache:
    """A meta path finder and loader for baton's own modules, from the saved entries."""

    def __init__(self, root: str, entries: Dict[str, Entry]) -> None:
        self.root = os.path.abspath(root)
        self.entries = entries
        self.missed = False  # a module of baton's was imported the usual way: save() adds it
        self._spec = sys.modules["_frozen_importlib"].ModuleSpec

    def find_spec(self, name: str, path: Optional[Sequence[str]] = None, target: Optional[ModuleType] = None) -> Any:
        if name.partition(".")[0] not in PACKAGES:
            return None
        entry = self.entries.get(name)
        if entry is None:
            self.missed = True
            return None
        if not self._valid(entry):  # changed (the file is rewritten after the answer) or gone
            self.missed = True
            return None
        relative, package, _, _, code = entry
        origin = os.path.join(self.root, relative)
        spec = self._spec(name, self, origin=origin, is_package=package)
        if package:
            spec.submodule_search_locations = [os.path.dirname(origin)]
        spec.has_location = True
        spec.loader_state = code
        return spec

    def create_module(self, spec: Any) -> None:
        return None  # the default module object

    def exec_module(self, module: ModuleType) -> None:
        import _imp

        spec: Any = module.__spec__
        code = marshal.loads(spec.loader_state)
        _imp._fix_co_filename(code, spec.origin)  # type: ignore[attr-defined]  # tracebacks name the file as it is now
        exec(code, module.__dict__)

    def save(self) -> None:
        """Add what this process imported the usual way, keep what is still valid, write atomically."""
        if not self.missed or sys.dont_write_bytecode:
            return
        entries: Dict[str, Entry] = {}
        for name, module in list(sys.modules.items()):
            spec = getattr(module, "__spec__", None)
            if name.partition(".")[0] not in PACKAGES or spec is None or not spec.origin:
                continue
            if spec.loader is self:
                entries[name] = self.entries[name]
                continue
            entry = self._compiled(name, spec.origin, spec.submodule_search_locations is not None)
            if entry is not None:
                entries[name] = entry
        for name, entry in self.entries.items():  # modules other hooks use
            if name not in entries and self._valid(entry):
                entries[name] = entry
        write(file_for(self.root), entries)

    def _valid(self, entry: Entry) -> bool:
        try:
            now = os.stat(os.path.join(self.root, entry[0]))
        except OSError:
            return False
        return now.st_size == entry[2] and now.st_mtime_ns == entry[3]

    def _compiled(self, name: str, origin: str, package: bool) -> Optional[Entry]:
        """The module compiled from its source as it is now, or None (outside the root, or changing)."""
        relative = os.path.relpath(origin, self.root)
        if relative.startswith(os.pardir) or not origin.endswith(".py"):
            return None
        try:
            before = os.stat(origin)
            with open(origin, "rb") as handle:
                source = handle.read()
            after = os.stat(origin)
            code = compile(source, origin, "exec", dont_inherit=True)
        except (OSError, SyntaxError, ValueError):
            return None
        if (before.st_size, before.st_mtime_ns) != (after.st_size, after.st_mtime_ns) or len(source) != after.st_size:
            return None  # written to while read: the next hook compiles it
        return relative, package, after.st_size, after.st_mtime_ns, marshal.dumps(code)


def install(root: str) -> Cache:
    """Put the cache of the plugin at ``root`` first on ``sys.meta_path``."""
    cache = Cache(root, read(file_for(root)))
    sys.meta_path.insert(0, cache)
    return cache
