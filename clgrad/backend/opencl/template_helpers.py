"""The helpers every ``kernels/*.cl.mako`` template shares: C type facts and the C text of
loads, stores and substituted expressions.

Each template imports this module once (``<%! from clgrad.backend.opencl import
template_helpers as h %>``), and the launchers import the same tables, so a size or a limit is
written in one place. Every function returns C text; none depends on template state, so the
types a template renders with are passed in explicitly.
"""

from __future__ import annotations

import re

# bytes per C type (half and bf16, bfloat16's storage type, are stored in 16 bits and
# computed in float)
SIZES = {
    "uchar": 1,
    "char": 1,
    "short": 2,
    "half": 2,
    "bf16": 2,
    "int": 4,
    "float": 4,
    "long": 8,
    "double": 8,
}

# (smallest, largest) value of each compute type: what LOWEST and HIGHEST stand for
LIMITS = {
    "uchar": ("0", "UCHAR_MAX"),
    "char": ("CHAR_MIN", "CHAR_MAX"),
    "short": ("SHRT_MIN", "SHRT_MAX"),
    "int": ("INT_MIN", "INT_MAX"),
    "long": ("LONG_MIN", "LONG_MAX"),
    "float": ("-INFINITY", "INFINITY"),
    "double": ("-INFINITY", "INFINITY"),
}

# the signed integer type of each size: what comparing two vectors of a type of that size gives
_MASK = {1: "char", 2: "short", 4: "int", 8: "long"}

_WORD = re.compile(r"\b[A-Za-z_]\w*\b")


# the storage types kept in 16 bits and computed in float; what a raw copy moves each as
FLOAT16_STORAGE = ("half", "bf16")


def raw_type(st: str) -> str:
    """The C type a copy that moves elements of storage type ``st`` as their bits uses: ushort
    for the 16-bit floats (half has no arithmetic of its own, bf16 is its bits), else ``st``.

    >>> raw_type("bf16"), raw_type("float")
    ('ushort', 'float')
    """
    return "ushort" if st in FLOAT16_STORAGE else st


def has_nan(ct: str) -> bool:
    """Whether values of compute type ``ct`` can be NaN."""
    return ct in ("half", "float", "double")


def vtype(ct: str, n: int) -> str:
    """The vector of n ``ct`` lanes; n of 0 or 1 is the scalar."""
    return f"{ct}{n}" if n > 1 else ct


def mask_type(ct: str, n: int) -> str:
    """What comparing two ``vtype(ct, n)`` values gives: ``select`` wants a mask of that type."""
    return vtype(_MASK[SIZES[ct]], n)


def subst(expr: str, **names) -> str:
    """``expr`` with each identifier named in ``names`` replaced by its value, in parentheses.

    One pass: a value's own text is never substituted again, so ``subst("a + b", a="b",
    b="a")`` is ``(b) + (a)``. Identifiers are whole C words: ``a`` in ``a.lo`` is replaced,
    the ``x`` of ``0x1F`` or ``max`` is not.
    """

    def repl(m):
        word = m.group(0)
        return f"({names[word]})" if word in names else word

    return _WORD.sub(repl, expr)


def ctext(text: str, T: str, ct: str | None = None) -> str:
    """Declared C text made concrete: ``{T}`` becomes ``T`` (a scalar or vector type) and the
    words LOWEST and HIGHEST the smallest and largest value of the scalar type ``ct`` (by
    default ``T``)."""
    text = text.replace("{T}", T)
    if "LOWEST" in text or "HIGHEST" in text:
        lo, hi = LIMITS[ct or T]
        text = subst(text, LOWEST=lo, HIGHEST=hi)
    return text


def neutral(text: str, ct: str, n: int = 0) -> str:
    """A reduction's neutral value (declared C text) as a ``ct`` scalar, or n-lane vector."""
    return f"(({vtype(ct, n)})({ctext(text, ct)}))"


def in_range(n: str, index_t: str) -> str:
    """The C condition that work-item ``get_global_id(0)`` has an element of the ``n`` a 1-D
    launch covers (its range padded to whole work-groups). Whole work-groups pass on a test
    the same for every item of the group, so PoCL vectorizes the group's loop without masks: a
    per-item ``get_global_id(0) < n`` alone left it scalar (a pooling kernel ran 5x slower, an
    optimizer step 3x). The item test compares as size_t: the padded range may pass 2^31.

    >>> in_range("n", "int")
    '((int)(get_group_id(0) + 1) * (int)get_local_size(0) <= n || get_global_id(0) < (size_t)(n))'
    """
    whole = f"({index_t})(get_group_id(0) + 1) * ({index_t})get_local_size(0) <= {n}"
    return f"({whole} || get_global_id(0) < (size_t)({n}))"


def split(index_t: str, d) -> str:
    """C statements that set ``c`` = ``rem % size<d>`` and ``rem /= size<d>``, the launch's
    arguments ``size<d>``, ``magic<d>``, ``shift<d>`` (``launch.divisor``): a 32-bit index
    divides by a multiply and a shift (a division would run scalar, twenty cycles or more).

    >>> print(split("long", 0))
    const long c = rem % size0; rem /= size0;
    """
    if index_t == "int":
        return (
            f"const int q{d} = (int)(((ulong)(uint)rem * (ulong)magic{d}) >> shift{d}); "
            f"const int c = rem - q{d} * size{d}; rem = q{d};"
        )
    return f"const {index_t} c = rem % size{d}; rem /= size{d};"


def load(st: str, ct: str, ptr: str, idx: str) -> str:
    """Element ``idx`` of ``ptr`` (storage type ``st``) converted to ``ct``."""
    if st == "half":
        return f"(({ct})vload_half({idx}, {ptr}))"
    if st == "bf16":
        return f"(({ct})cg_widen_bf16({ptr}[{idx}]))"
    return f"(({ct}){ptr}[{idx}])"


def loadv(st: str, ct: str, n: int, ptr: str, idx: str, aligned: bool = False) -> str:
    """n elements at ``ptr + idx`` as a ``ct`` vector. An aligned address gets a plain vector
    load: vloadN is much slower than that on PoCL."""
    v = vtype(ct, n)
    if st == "half":
        return f"convert_{v}(vload{'a' if aligned else ''}_half{n}(0, {ptr} + ({idx})))"
    if st == "bf16":
        bits = (
            f"*(const __global ushort{n} *)({ptr} + ({idx}))"
            if aligned
            else f"vload{n}(0, {ptr} + ({idx}))"
        )
        return f"convert_{v}(cg_widen{n}_bf16({bits}))"
    if aligned:
        return f"convert_{v}(*(const __global {st}{n} *)({ptr} + ({idx})))"
    return f"convert_{v}(vload{n}(0, {ptr} + ({idx})))"


def narrow(st: str, val: str) -> str:
    """``val`` converted to the integer or float C type ``st``. uint8 goes through long, as
    PyTorch's ``static_cast_with_inter_type`` does: a negative float then wraps (-1 -> 255) on
    every device, where a direct conversion is undefined in C (NVIDIA's driver saturates to 0).

    >>> narrow("uchar", "x"), narrow("int", "x")
    ('(uchar)(long)(x)', '(int)(x)')
    """
    return f"(uchar)(long)({val})" if st == "uchar" else f"({st})({val})"


def store(st: str, is_bool: bool, ptr: str, idx: str, val: str) -> str:
    """The statement (without ``;``) storing ``val`` as element ``idx`` of ``ptr``: rounded
    to half or bfloat16 (to nearest even), 0/1 for bool, else converted to ``st``."""
    if st == "half":
        return f"vstore_half_rte((float)({val}), {idx}, {ptr})"
    if st == "bf16":
        return f"{ptr}[{idx}] = cg_narrow_bf16((float)({val}))"
    if is_bool:
        return f"{ptr}[{idx}] = (uchar)(({val}) != 0)"
    return f"{ptr}[{idx}] = {narrow(st, val)}"


def storev(
    st: str, is_bool: bool, ct: str, n: int, ptr: str, idx: str, val: str, aligned: bool = False
) -> str:
    """The statement storing the ``ct`` vector ``val`` at ``ptr + idx`` (as ``store``)."""
    if st == "half":
        return (
            f"vstore{'a' if aligned else ''}_half{n}_rte(convert_float{n}({val}), 0, "
            f"{ptr} + ({idx}))"
        )
    if st == "bf16":
        bits = f"cg_narrow{n}_bf16(convert_float{n}({val}))"
        if aligned:
            return f"*(__global ushort{n} *)({ptr} + ({idx})) = {bits}"
        return f"vstore{n}({bits}, 0, {ptr} + ({idx}))"
    if is_bool:
        v = f"convert_uchar{n}(-(({val}) != ({vtype(ct, n)})0))"
    elif st == "uchar" and ct in ("float", "double"):  # as ``narrow``
        v = f"convert_uchar{n}(convert_long{n}({val}))"
    else:
        v = f"convert_{st}{n}({val})"
    if aligned:
        return f"*(__global {st}{n} *)({ptr} + ({idx})) = {v}"
    return f"vstore{n}({v}, 0, {ptr} + ({idx}))"
