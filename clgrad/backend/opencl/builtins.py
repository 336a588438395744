"""The OpenCL C builtins a program calls, declared from the driver's own ``opencl-c.h``.

PoCL puts Clang's ``opencl-c.h`` in front of every program it builds: 18,000 lines that declare
every builtin in every type and vector width, parsed twice per build (once to preprocess the
source for PoCL's cache key, once to compile it). On a 2-core EPYC that is about 190 of the
220 ms a small program takes to build, and 35 of the 40 ms of a build PoCL finds in its cache.

The header skips its body where ``_OPENCL_H_`` is defined. So a build with ``-D_OPENCL_H_``
gets, in front of its source, the header's own declarations of just the names the source
uses, inside the header's conditionals (``#ifdef cl_khr_fp64`` ...) and after its defines and
extension pragmas, which are all kept: the compiler sees the same declarations of every
builtin the program calls, and the same extension state after them. ``Runtime.build`` does
this for PoCL only (where the header is known to be the one its compiler reads), falls back to
a plain build if a lean one fails, and ``CLGRAD_LEAN_HEADER=0`` turns it off.
"""

from __future__ import annotations

import importlib.metadata
import re
from functools import cache, lru_cache
from pathlib import Path

# the header's outer guard: dropped, so its body reaches the compiler though -D_OPENCL_H_ is set
GUARD = "_OPENCL_H_"
_INCLUDE = ".libs/share/pocl/include"  # where the package keeps PoCL's headers
_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_ATTRIBUTES = re.compile(r"__attribute__\s*\(\(.*?\)\)", re.S)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


class Header:
    """``opencl-c.h`` as a sequence of directives (kept) and declarations (by name)."""

    def __init__(self, text: str):
        # per item: ("#" and the directive's word, its line) or (the declared name, its text)
        self.items: list[tuple[str, str]] = []
        text = _COMMENTS.sub("", text).replace("\\\n", " ")
        pending: list[str] = []
        guard_depth = None  # the #if depth of the outer guard, whose #endif is dropped too
        depth = 0
        for line in text.splitlines():
            stripped = line.strip()
            if not stripped:
                continue
            if stripped[0] == "#":
                words = stripped[1:].split()
                word = words[0] if words else ""
                if word.startswith("if"):
                    depth += 1
                    if guard_depth is None and words[-1] == GUARD:
                        guard_depth = depth
                        continue
                elif word == "endif":
                    depth -= 1
                    if depth + 1 == guard_depth:
                        continue
                elif word == "define" and words[1:2] == [GUARD]:
                    continue
                elif word == "include":  # opencl-c-base.h: in front of the source already
                    continue
                self.items.append(("#" + word, stripped))
                continue
            pending.append(stripped)
            if stripped[-1] == ";":
                declaration = " ".join(pending) if len(pending) > 1 else stripped
                pending = []
                plain = declaration
                if "__attribute__" in plain:
                    plain = _ATTRIBUTES.sub("", plain)
                # the declared name: the word in front of the parameter list
                words = plain[: plain.find("(")].split()
                self.items.append((words[-1].lstrip("*") if words else "", declaration))
        self.names = frozenset(name for name, _ in self.items if name and name[0] != "#")
        self._texts: dict[frozenset, str] = {}  # ``declarations`` by names (programs share sets)

    def declarations(self, names: frozenset) -> str:
        """The header's text for a program that calls ``names``: every directive, the
        declarations of those names, and no conditional block left with nothing inside.

        >>> h = Header('''#ifndef _OPENCL_H_
        ... #define _OPENCL_H_
        ... #define __ovld __attribute__((overloadable))
        ... float __ovld exp(float);
        ... #ifdef cl_khr_fp64
        ... #pragma OPENCL EXTENSION cl_khr_fp64 : enable
        ... double __ovld exp(double);
        ... double __ovld sin(double);
        ... #endif
        ... #if defined(cl_khr_fp16)
        ... half __ovld sin(half);
        ... #endif
        ... #endif //_OPENCL_H_''')
        >>> print(h.declarations(frozenset({"exp"})))
        #define __ovld __attribute__((overloadable))
        float __ovld exp(float);
        #ifdef cl_khr_fp64
        #pragma OPENCL EXTENSION cl_khr_fp64 : enable
        double __ovld exp(double);
        #endif
        """
        text = self._texts.get(names)
        if text is None:
            if len(self._texts) >= 256:
                self._texts.clear()
            text = self._texts[names] = self._declarations(names)
        return text

    def _declarations(self, names: frozenset) -> str:
        out: list[str] = []
        blocks: list[list] = []  # per open conditional: [its first line's index, anything kept]
        for name, text in self.items:
            if name.startswith("#if"):
                blocks.append([len(out), False])
                out.append(text)
                continue
            if name in ("#elif", "#else"):
                out.append(text)
                continue
            if name == "#endif":
                start, kept = blocks.pop()
                if not kept:  # only conditionals: drop the whole block
                    del out[start:]
                    continue
            elif name[:1] != "#" and name not in names:
                continue
            # a kept declaration, block, define, undef or pragma: its block is kept too
            out.append(text)
            if blocks:
                blocks[-1][1] = True
        return "\n".join(out)


def called(source: str, header: Header) -> frozenset:
    """The names ``header`` declares that ``source`` mentions.

    >>> called("float y = exp(x) + cg_exp_float(x);", Header("float exp(float);"))
    frozenset({'exp'})
    """
    return header.names.intersection(_IDENTIFIER.findall(source))


@lru_cache(maxsize=4)
def load(path: str) -> Header:
    return Header(Path(path).read_text())


@cache
def pocl_header(platform_version: str) -> str | None:
    """The ``opencl-c.h`` of pyopencl's PoCL (the ``pocl-binary-distribution`` package of the
    ``pocl`` extra) when that is the PoCL whose ``platform_version`` is given, else None: another
    driver, or a system PoCL, which reads its own LLVM's header (clgrad does not go looking).

    >>> pocl_header("OpenCL 3.0 Mesa 25.0.7") is None
    True
    """
    try:
        package = importlib.metadata.distribution("pocl-binary-distribution")
    except importlib.metadata.PackageNotFoundError:
        return None
    if f"PoCL {package.version}" not in platform_version:
        return None
    header = Path(package.locate_file(f"pocl_binary_distribution/{_INCLUDE}/opencl-c.h"))
    return str(header) if header.is_file() else None
