"""The cache directory's manifest: what environment wrote it, and the hash and size of every
member and of the artifact. Both the writer and the loader use these functions, so the two
sides compute the environment and hashes the same way."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys

from ._runtime import (
    ArtifactMismatchError,
    CacheIntegrityError,
    CacheMismatchError,
)

FORMAT = 1
MANIFEST = "manifest.json"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _cpu_flags() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def environment() -> dict:
    """What a cache depends on: kernels are built with ``-march=native`` for this CPU's ISA,
    graphs reference torch's functions, and the artifact is Python source for this version."""
    import torch

    from .. import _C

    flags = _cpu_flags()
    return {
        "torchferro": _C.precompile_version(),
        "torch": torch.__version__,
        "python": "%d.%d.%d" % sys.version_info[:3],
        "python_implementation": sys.implementation.name,
        "machine": platform.machine(),
        "cpu_isa": sha256(flags.encode()),
    }


ARTIFACT_CODE = "code/artifact.marshal"


def write_manifest(
    cache_dir: str,
    members: dict[str, bytes],
    artifact: bytes,
    artifact_code: bytes | None = None,
) -> dict:
    """Writes every member and then the manifest (last: a cache without one is incomplete).
    ``artifact_code`` is the artifact compiled to a code object and marshalled: compiling the
    generated source is most of a load (a few hundred KB of Python for a transformer), so the
    loader executes this instead. It is hashed in the manifest next to the artifact, outside the
    member table (the artifact's ``CACHE_ID`` hashes that table, and this is derived from the
    artifact)."""
    os.makedirs(cache_dir, exist_ok=True)
    old = os.path.join(cache_dir, MANIFEST)
    if os.path.exists(old):
        os.remove(old)
    entries = {}
    for name, data in sorted(members.items()):
        path = os.path.join(cache_dir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        entries[name] = {"sha256": sha256(data), "size": len(data)}
    manifest = {
        "format": FORMAT,
        "environment": environment(),
        "artifact_sha256": sha256(artifact),
        "members": entries,
    }
    if artifact_code is not None:
        path = os.path.join(cache_dir, ARTIFACT_CODE)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(artifact_code)
        manifest["artifact_code"] = {
            "sha256": sha256(artifact_code),
            "size": len(artifact_code),
        }
    text = json.dumps(manifest, indent=1, sort_keys=True).encode()
    tmp = old + ".tmp"
    with open(tmp, "wb") as f:
        f.write(text)
    os.replace(tmp, old)
    return manifest


def cache_id(manifest: dict) -> str:
    """The identity an artifact records of its cache: a hash over the member table."""
    return sha256(json.dumps(manifest["members"], sort_keys=True).encode())


def verify(cache_dir: str, artifact: bytes) -> tuple[dict, dict[str, bytes]]:
    """Checks the manifest against this process and every member (and the artifact) against
    the manifest, before anything is loaded. Returns the manifest and the members' verified
    bytes (the loader uses these bytes, not a second read of the files), with the artifact's
    marshalled code under ``ARTIFACT_CODE`` when the cache has it."""
    path = os.path.join(cache_dir, MANIFEST)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise CacheIntegrityError(
            f"precompile cache {cache_dir!r} has no readable manifest: {e}"
        ) from None
    try:
        manifest = json.loads(raw)
        fmt = manifest["format"]
        env = manifest["environment"]
        members = manifest["members"]
        artifact_hash = manifest["artifact_sha256"]
    except (ValueError, KeyError, TypeError) as e:
        raise CacheIntegrityError(
            f"precompile cache {cache_dir!r}: the manifest is malformed ({e})"
        ) from None
    if fmt != FORMAT:
        raise CacheMismatchError(
            f"precompile cache {cache_dir!r} has format {fmt}; this torchferro reads format {FORMAT}"
        )
    here = environment()
    for key in sorted(set(here) | set(env)):
        if env.get(key) != here.get(key):
            what = "CPU instruction set" if key == "cpu_isa" else key
            raise CacheMismatchError(
                f"precompile cache {cache_dir!r} was written for {what} {env.get(key)!r}; "
                f"this process has {here.get(key)!r}"
            )
    if sha256(artifact) != artifact_hash:
        raise ArtifactMismatchError(
            f"the artifact does not match precompile cache {cache_dir!r} (it was written with "
            "another artifact, or the artifact was edited)"
        )
    data = {}
    checked = dict(members)
    if "artifact_code" in manifest:
        checked[ARTIFACT_CODE] = manifest["artifact_code"]
    for name, want in checked.items():
        p = os.path.join(cache_dir, name)
        if os.path.normpath(name).startswith("..") or os.path.isabs(name):
            raise CacheIntegrityError(
                f"precompile cache member {name!r} lies outside the cache"
            )
        try:
            with open(p, "rb") as f:
                b = f.read()
        except OSError:
            raise CacheIntegrityError(
                f"precompile cache {cache_dir!r} is missing {name}"
            ) from None
        if len(b) != want["size"]:
            raise CacheIntegrityError(
                f"precompile cache member {name} is {len(b)} bytes, the manifest says "
                f"{want['size']} (truncated or replaced)"
            )
        if sha256(b) != want["sha256"]:
            raise CacheIntegrityError(
                f"precompile cache member {name} does not match its hash in the manifest "
                "(corrupted or tampered with)"
            )
        data[name] = b
    return manifest, data
