"""``torch.hub``: the hub's cache directory, downloads, state dicts from URLs, and entry points
of a repository's ``hubconf.py``, as PyTorch's.

The cache is ``$TORCH_HOME/hub`` (``$TORCH_HOME`` defaults to ``$XDG_CACHE_HOME/torch``, that to
``~/.cache/torch``) unless ``set_dir`` names another, as torch's, so clgrad and torch share one
cache. Downloads go through ``urllib`` (any URL it opens: ``https://``, ``file://``), with a
``tqdm`` progress bar when tqdm is installed. Loaded files are read with ``clgrad.load``, so a
checkpoint must be one ``clgrad.save`` wrote. ``source="github"`` fetches a repository's zip
archive from GitHub as torch does; without a network it uses the cached copy or raises a
RuntimeError that says so.

>>> import clgrad.hub, os, tempfile
>>> d = tempfile.mkdtemp()
>>> clgrad.save({"bias": clgrad.zeros(2)}, os.path.join(d, "tiny-0123.pt"))
>>> sd = clgrad.hub.load_state_dict_from_url(
...     Path(d, "tiny-0123.pt").as_uri(), model_dir=os.path.join(d, "cache"), progress=False
... )
Downloading: ...
>>> sd
{'bias': tensor([0., 0.])}
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import uuid
import warnings
import zipfile
from pathlib import Path
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

from . import serialization as _serialization

__all__ = [
    "download_url_to_file",
    "get_dir",
    "help",
    "list",
    "load",
    "load_state_dict_from_url",
    "set_dir",
]


class _Faketqdm:
    """torch's stand-in for ``tqdm`` where it is not installed: a percentage on stderr."""

    def __init__(self, total=None, disable=False, unit=None, *args, **kwargs):
        self.total, self.disable, self.n = total, disable, 0

    def update(self, n):
        if self.disable:
            return
        self.n += n
        if self.total is None:
            sys.stderr.write(f"\r{self.n:.1f} bytes")
        else:
            sys.stderr.write(f"\r{100 * self.n / float(self.total):.1f}%")
        sys.stderr.flush()

    def set_description(self, *args, **kwargs):
        pass

    def write(self, s):
        sys.stderr.write(f"{s}\n")

    def close(self):
        self.disable = True

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.disable:
            sys.stderr.write("\n")


try:
    from tqdm import tqdm
except ImportError:  # pragma: no cover - tqdm is optional
    tqdm = _Faketqdm

# matches bfd8deac from resnet18-bfd8deac.pth
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_PATH_SEP_PATTERN = re.compile(r"[/\\]")
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
READ_DATA_CHUNK = 128 * 1024
_hub_dir: str | None = None


@contextlib.contextmanager
def _add_to_sys_path(path):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_module(name, path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise AssertionError(f"failed to load spec from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _remove_if_exists(path):
    if os.path.exists(path):
        if os.path.isfile(path):
            os.remove(path)
        else:
            shutil.rmtree(path)


def _safe_extract_zip(zip_file, extract_to):
    """Extracts ``zip_file`` into ``extract_to``, refusing (ValueError) any entry whose path
    would leave it, as torch's."""
    extract_to = Path(extract_to).resolve(strict=False)
    for member in zip_file.infolist():
        filename = os.path.normpath(member.filename)
        if filename.startswith(("/", "\\")):
            raise ValueError(f"Archive entry has absolute path: {member.filename}")
        if len(filename) >= 2 and filename[1] == ":" and filename[0].isalpha():
            raise ValueError(f"Archive entry has absolute path: {member.filename}")
        if ".." in re.split(_PATH_SEP_PATTERN, filename):
            raise ValueError(f"Archive entry contains directory traversal: {member.filename}")
        out = (extract_to / filename).resolve(strict=False)
        if out != extract_to and extract_to not in out.parents:
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
        zip_file.extract(member, extract_to)


def _git_archive_link(repo_owner, repo_name, ref):
    return f"https://github.com/{repo_owner}/{repo_name}/zipball/{ref}"


def _load_attr_from_module(module, func_name):
    if func_name not in dir(module):
        return None
    return getattr(module, func_name)


def _get_torch_home():
    return os.path.expanduser(
        os.getenv(
            ENV_TORCH_HOME, os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")
        )
    )


def _parse_repo_info(github):
    if ":" in github:
        repo_info, ref = github.split(":")
    else:
        repo_info, ref = github, None
    repo_owner, repo_name = repo_info.split("/")
    if ref is None:
        # the default branch: main if it exists, else master (the cache's when offline)
        try:
            with urlopen(f"https://github.com/{repo_owner}/{repo_name}/tree/main/"):
                ref = "main"
        except HTTPError as e:
            if e.code == 404:
                ref = "master"
            else:
                raise
        except URLError as e:
            for possible_ref in ("main", "master"):
                if os.path.exists(f"{get_dir()}/{repo_owner}_{repo_name}_{possible_ref}"):
                    ref = possible_ref
                    break
            if ref is None:
                raise RuntimeError(
                    "It looks like there is no internet connection and the "
                    f"repo could not be found in the cache ({get_dir()})"
                ) from e
    return repo_owner, repo_name, ref


def _read_url(url):
    with urlopen(url) as r:
        return r.read().decode(r.headers.get_content_charset("utf-8"))


def _validate_not_a_forked_repo(repo_owner, repo_name, ref):
    headers = {"Accept": "application/vnd.github.v3+json"}
    token = os.environ.get(ENV_GITHUB_TOKEN)
    if token is not None:
        headers["Authorization"] = f"token {token}"
    for url_prefix in (
        f"https://api.github.com/repos/{repo_owner}/{repo_name}/branches",
        f"https://api.github.com/repos/{repo_owner}/{repo_name}/tags",
    ):
        page = 0
        while True:
            page += 1
            url = f"{url_prefix}?per_page=100&page={page}"
            try:
                response = json.loads(_read_url(Request(url, headers=headers)))
            except HTTPError:
                headers.pop("Authorization", None)
                response = json.loads(_read_url(Request(url, headers=headers)))
            if not response:
                break
            for br in response:
                if br["name"] == ref or br["commit"]["sha"].startswith(ref):
                    return
    raise ValueError(
        f"Cannot find {ref} in https://github.com/{repo_owner}/{repo_name}. "
        "If it's a commit from a forked repo, please call hub.load() with forked repo directly."
    )


def _get_cache_or_reload(github, force_reload, trust_repo, verbose=True, skip_validation=False):
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    repo_owner, repo_name, ref = _parse_repo_info(github)
    normalized_br = ref.replace("/", "_")
    owner_name_branch = "_".join([repo_owner, repo_name, normalized_br])
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo=trust_repo)
    use_cache = (not force_reload) and os.path.exists(repo_dir)
    if use_cache:
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    cached_file = os.path.join(hub_dir, normalized_br + ".zip")
    try:
        if not skip_validation:
            _validate_not_a_forked_repo(repo_owner, repo_name, ref)
        _remove_if_exists(cached_file)
        url = _git_archive_link(repo_owner, repo_name, ref)
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        try:
            download_url_to_file(url, cached_file, progress=False)
        except HTTPError as err:
            if err.code != 300:
                raise
            # a ref that is both a tag and a branch: torch assumes the branch
            warnings.warn(
                f"The ref {ref} is ambiguous. Perhaps it is both a tag and a branch in the repo? "
                "Torchhub will now assume that it's a branch. "
                "You can disambiguate tags and branches by explicitly passing "
                "refs/heads/branch_name or refs/tags/tag_name as the ref. That might require "
                "using skip_validation=True.",
                stacklevel=2,
            )
            url = _git_archive_link(repo_owner, repo_name, ref=f"refs/heads/{ref}")
            download_url_to_file(url, cached_file, progress=False)
    except URLError as e:
        if isinstance(e, HTTPError):
            raise
        raise RuntimeError(
            f"Could not reach GitHub to download {repo_owner}/{repo_name}:{ref} ({e.reason}), "
            f"and it is not in the hub cache ({repo_dir}). Connect to the network, or load a "
            "local copy with source='local'."
        ) from e
    with zipfile.ZipFile(cached_file) as cached_zipfile:
        extracted_repo_name = cached_zipfile.infolist()[0].filename
        extracted_repo = os.path.join(hub_dir, extracted_repo_name)
        _remove_if_exists(extracted_repo)
        _safe_extract_zip(cached_zipfile, hub_dir)
    _remove_if_exists(cached_file)
    _remove_if_exists(repo_dir)
    shutil.move(extracted_repo, repo_dir)
    return repo_dir


def _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo):
    hub_dir = get_dir()
    filepath = os.path.join(hub_dir, "trusted_list")
    if not os.path.exists(filepath):
        Path(filepath).touch()
    with open(filepath) as file:
        trusted_repos = tuple(line.strip() for line in file)
    # a repo the hub downloaded before is trusted, as torch's legacy rule
    trusted_repos_legacy = next(os.walk(hub_dir))[1]
    owner_name = "_".join([repo_owner, repo_name])
    is_trusted = (
        owner_name in trusted_repos
        or owner_name_branch in trusted_repos_legacy
        or repo_owner in _TRUSTED_REPO_OWNERS
    )
    if (trust_repo is False) or (trust_repo == "check" and not is_trusted):
        response = input(
            f"The repository {owner_name} does not belong to the list of trusted repositories "
            "and as such cannot be downloaded. Do you trust this repository and wish to add it "
            "to the trusted list of repositories (y/N)?"
        )
        if response.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")
        else:
            raise ValueError(f"Unrecognized response {response}.")
    if not is_trusted:
        with open(filepath, "a") as file:
            file.write(owner_name + "\n")


def _check_module_exists(name):
    import importlib.util

    return importlib.util.find_spec(name) is not None


def _check_dependencies(m):
    dependencies = _load_attr_from_module(m, VAR_DEPENDENCY)
    if dependencies is not None:
        missing_deps = [pkg for pkg in dependencies if not _check_module_exists(pkg)]
        if missing_deps:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing_deps)}")


def _load_entry_from_hubconf(m, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    _check_dependencies(m)
    func = _load_attr_from_module(m, model)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def _hub_module(repo_dir):
    with _add_to_sys_path(repo_dir):
        return _import_module(MODULE_HUBCONF, os.path.join(repo_dir, MODULE_HUBCONF))


def _repo_dir(repo_or_dir, source, force_reload, trust_repo, verbose, skip_validation):
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        return _get_cache_or_reload(
            repo_or_dir, force_reload, trust_repo, verbose=verbose, skip_validation=skip_validation
        )
    return repo_or_dir


def get_dir() -> str:
    """The hub's cache directory: the one ``set_dir`` named, else ``$TORCH_HOME/hub``
    (``$TORCH_HOME`` defaulting to ``$XDG_CACHE_HOME/torch``, that to ``~/.cache/torch``).

    >>> import os
    >>> saved = os.environ.get("TORCH_HOME"), clgrad.hub._hub_dir
    >>> os.environ["TORCH_HOME"] = "/tmp/th"; clgrad.hub._hub_dir = None
    >>> clgrad.hub.get_dir()
    '/tmp/th/hub'
    >>> _ = os.environ.pop("TORCH_HOME") if saved[0] is None else None
    >>> clgrad.hub._hub_dir = saved[1]
    """
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d: str | os.PathLike) -> None:
    """Makes ``d`` the hub's cache directory (``~`` expanded), as ``torch.hub.set_dir``.

    >>> old = clgrad.hub._hub_dir
    >>> clgrad.hub.set_dir("/tmp/my_hub"); clgrad.hub.get_dir()
    '/tmp/my_hub'
    >>> clgrad.hub._hub_dir = old
    """
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def list(
    github,
    force_reload=False,
    skip_validation=False,
    trust_repo="check",
    verbose=True,
    source="github",
):
    """The entry points (public callables) of the ``hubconf.py`` of a GitHub repository
    (``"owner/name[:ref]"``), as ``torch.hub.list``; ``clgrad.hub.list(dir, source="local")``
    (an extension: torch's ``list`` has no ``source``) reads a local directory's.

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "hubconf.py"), "w") as f:
    ...     _ = f.write("def tiny(n=2):\\n    return n\\n")
    >>> clgrad.hub.list(d, source="local")
    ['tiny']
    """
    repo_dir = _repo_dir(github, source, force_reload, trust_repo, verbose, skip_validation)
    hub_module = _hub_module(repo_dir)
    return [
        f for f in dir(hub_module) if callable(getattr(hub_module, f)) and not f.startswith("_")
    ]


def help(
    github, model, force_reload=False, skip_validation=False, trust_repo="check", source="github"
):
    """The docstring of entry point ``model`` of a repository's ``hubconf.py``, as
    ``torch.hub.help`` (``source="local"``, an extension as ``list``'s, for a local directory).

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "hubconf.py"), "w") as f:
    ...     _ = f.write("def tiny():\\n    '''A tiny model.'''\\n")
    >>> clgrad.hub.help(d, "tiny", source="local")
    'A tiny model.'
    """
    repo_dir = _repo_dir(github, source, force_reload, trust_repo, True, skip_validation)
    return _load_entry_from_hubconf(_hub_module(repo_dir), model).__doc__


def load(
    repo_or_dir,
    model,
    *args,
    source="github",
    trust_repo="check",
    force_reload=False,
    verbose=True,
    skip_validation=False,
    **kwargs,
):
    """Calls entry point ``model`` of a GitHub repository's (``source="github"``,
    ``"owner/name[:ref]"``) or a local directory's (``source="local"``) ``hubconf.py`` with
    ``*args`` and ``**kwargs``, and returns what it returns, as ``torch.hub.load``.

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "hubconf.py"), "w") as f:
    ...     _ = f.write("import clgrad\\ndef ones(n):\\n    return clgrad.ones(n)\\n")
    >>> clgrad.hub.load(d, "ones", 3, source="local")
    tensor([1., 1., 1.])
    """
    repo_dir = _repo_dir(repo_or_dir, source, force_reload, trust_repo, verbose, skip_validation)
    return _load_local(repo_dir, model, *args, **kwargs)


def _load_local(hubconf_dir, model, *args, **kwargs):
    with _add_to_sys_path(hubconf_dir):
        hub_module = _import_module(MODULE_HUBCONF, os.path.join(hubconf_dir, MODULE_HUBCONF))
        entry = _load_entry_from_hubconf(hub_module, model)
        return entry(*args, **kwargs)


def download_url_to_file(
    url: str, dst: str, hash_prefix: str | None = None, progress: bool = True
) -> None:
    """Downloads ``url`` to the path ``dst`` (through a temporary file beside it, moved there
    once complete), checking that the SHA256 of the contents starts with ``hash_prefix`` when
    given (RuntimeError otherwise), as ``torch.hub.download_url_to_file``.

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "a.txt"), "w") as f:
    ...     _ = f.write("hello")
    >>> src = Path(d, "a.txt").as_uri()
    >>> clgrad.hub.download_url_to_file(src, os.path.join(d, "b.txt"), "2cf24d", progress=False)
    >>> open(os.path.join(d, "b.txt")).read()
    'hello'
    """
    dst = os.path.expanduser(dst)
    for _ in range(tempfile.TMP_MAX):
        tmp_dst = dst + "." + uuid.uuid4().hex + ".partial"
        try:
            f = open(tmp_dst, "w+b")  # noqa: SIM115
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(errno.EEXIST, "No usable temporary file name found")
    req = Request(url, headers={"User-Agent": "torch.hub"})
    try:
        with urlopen(req) as u:
            content_length = u.info().get_all("Content-Length")
            file_size = int(content_length[0]) if content_length else None
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            with tqdm(
                total=file_size,
                disable=not progress,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
            ) as pbar:
                while True:
                    buffer = u.read(READ_DATA_CHUNK)
                    if len(buffer) == 0:
                        break
                    f.write(buffer)
                    if sha256 is not None:
                        sha256.update(buffer)
                    pbar.update(len(buffer))
            f.close()
            if sha256 is not None and hash_prefix is not None:
                digest = sha256.hexdigest()
                if digest[: len(hash_prefix)] != hash_prefix:
                    raise RuntimeError(
                        f'invalid hash value (expected "{hash_prefix}", got "{digest}")'
                    )
        shutil.move(f.name, dst)
    finally:
        f.close()
        if os.path.exists(f.name):
            os.remove(f.name)


def _is_legacy_zip_format(filename: str) -> bool:
    """A zip of one file (not a directory) that is not itself a ``clgrad.save`` archive (whose
    smallest, a scalar's, is one ``__structure__.npy``): torch's pre-1.6 hub format, a saved
    file zipped by hand."""
    if zipfile.is_zipfile(filename):
        with zipfile.ZipFile(filename) as zf:
            infolist = zf.infolist()
        return (
            len(infolist) == 1
            and not infolist[0].is_dir()
            and infolist[0].filename != "__structure__.npy"
        )
    return False


def _legacy_zip_load(filename, model_dir, map_location, weights_only):
    warnings.warn(
        "Falling back to the old format < 1.6. This support will be "
        "deprecated in favor of default zipfile format introduced in 1.6. "
        "Please redo torch.save() to save it in the new zipfile format.",
        FutureWarning,
        stacklevel=3,
    )
    with zipfile.ZipFile(filename) as f:
        members = f.infolist()
        if len(members) != 1:
            raise RuntimeError("Only one file(not dir) is allowed in the zipfile")
        _safe_extract_zip(f, model_dir)
        extracted_file = os.path.join(model_dir, members[0].filename)
    return _serialization.load(extracted_file, map_location=map_location, weights_only=weights_only)


def load_state_dict_from_url(
    url: str,
    model_dir: str | None = None,
    map_location=None,
    progress: bool = True,
    check_hash: bool = False,
    file_name: str | None = None,
    weights_only: bool = False,
) -> dict[str, Any]:
    """Loads (``clgrad.load``) the object saved at ``url``, downloading it first into
    ``model_dir`` (default ``<get_dir()>/checkpoints``) unless already there, as
    ``torch.hub.load_state_dict_from_url``: ``check_hash`` checks the file's SHA256 against
    the hex digits after the last ``-`` of its name (``resnet18-5c106cde.pth``).

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> clgrad.save({"w": clgrad.ones(2)}, os.path.join(d, "w.pt"))
    >>> url = Path(d, "w.pt").as_uri()
    >>> clgrad.hub.load_state_dict_from_url(url, os.path.join(d, "ckpt"), progress=False)
    Downloading: "file:///.../w.pt" to /.../ckpt/w.pt
    {'w': tensor([1., 1.])}
    """
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn(
            "TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead", stacklevel=2
        )
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = os.path.basename(urlparse(url).path)
    if file_name is not None:
        filename = file_name
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = None
        if check_hash:
            r = HASH_REGEX.search(filename)
            hash_prefix = r.group(1) if r else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    if _is_legacy_zip_format(cached_file):
        return _legacy_zip_load(cached_file, model_dir, map_location, weights_only)
    return _serialization.load(cached_file, map_location=map_location, weights_only=weights_only)
