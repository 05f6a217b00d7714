"""Argument normalisation shared by convolutions and windowed reductions: ConvDimensionNumbers
and `conv_dimension_numbers` (layout strings or permutations), `padtype_to_pads` ('SAME',
'SAME_LOWER', 'VALID' -> explicit pairs), explicit padding, int tuples, dilated sizes and
precision names."""
import operator
from typing import NamedTuple


class ConvDimensionNumbers(NamedTuple):
    """(lhs_spec, rhs_spec, out_spec), each a tuple of dimension indices:
    lhs/out: (batch dim, feature dim, spatial dims...); rhs: (out feature dim, in feature dim,
    spatial dims...), as in jax.lax.ConvDimensionNumbers."""
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def _spec_from_string(spec, pair, rhs_string):
    spatial = [i for i, c in enumerate(spec) if c not in pair]
    if rhs_string is not None:
        spatial.sort(key=lambda i: rhs_string.index(spec[i]))
    return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """lax.conv_dimension_numbers: None (NCHW/OIHW/NCHW), a tuple of 3 layout strings such as
    ('NHWC', 'HWIO', 'NHWC'), or three permutations -> ConvDimensionNumbers."""
    where = "conv_general_dilated"
    lhs_shape, rhs_shape = tuple(lhs_shape), tuple(rhs_shape)
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"{where}: lhs and rhs must have the same rank, got lhs shape "
                        f"{lhs_shape} and rhs shape {rhs_shape}")
    nd = len(lhs_shape)
    if nd < 2:
        raise TypeError(f"{where}: lhs and rhs need rank >= 2 (batch and feature dims), got "
                        f"lhs shape {lhs_shape} and rhs shape {rhs_shape}")
    if dimension_numbers is None:
        iota = tuple(range(nd))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (tuple, list)) or len(dimension_numbers) != 3:
        raise TypeError(f"{where}: dimension_numbers must be None, three layout strings or "
                        f"three permutations, got {dimension_numbers!r}")
    if all(isinstance(s, str) for s in dimension_numbers):
        lhs_s, rhs_s, out_s = dimension_numbers
        for i, (s, pair) in enumerate(zip(dimension_numbers, (("N", "C"), ("O", "I"),
                                                                ("N", "C")))):
            if len(s) != nd:
                raise TypeError(f"{where}: dimension_numbers[{i}]={s!r} must have one letter "
                                f"per dimension of lhs shape {lhs_shape} / rhs shape "
                                f"{rhs_shape} (rank {nd})")
            if s.count(pair[0]) != 1 or s.count(pair[1]) != 1 or len(set(s)) != len(s):
                raise TypeError(f"{where}: dimension_numbers[{i}]={s!r} must contain "
                                f"'{pair[0]}' and '{pair[1]}' exactly once and no repeated "
                                f"letters (dimension_numbers={tuple(dimension_numbers)})")
        sp = [set(s) - set(p) for s, p in zip(dimension_numbers, ("NC", "OI", "NC"))]
        if not sp[0] == sp[1] == sp[2]:
            raise TypeError(f"{where}: dimension_numbers {tuple(dimension_numbers)} must name "
                            "the same spatial letters in all three layouts")
        return ConvDimensionNumbers(_spec_from_string(lhs_s, "NC", rhs_s),
                                    _spec_from_string(rhs_s, "OI", None),
                                    _spec_from_string(out_s, "NC", rhs_s))
    try:
        specs = tuple(tuple(operator.index(d) for d in s) for s in dimension_numbers)
    except TypeError:
        raise TypeError(f"{where}: dimension_numbers must be three layout strings or three "
                        f"permutations, got {dimension_numbers!r}") from None
    for i, s in enumerate(specs):
        if sorted(s) != list(range(nd)):
            raise TypeError(f"{where}: dimension_numbers[{i}]={s} is not a permutation of the "
                            f"{nd} dimensions of lhs shape {lhs_shape} / rhs shape {rhs_shape}")
    return ConvDimensionNumbers(*specs)


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """'SAME', 'SAME_LOWER' or 'VALID' -> explicit [(lo, hi), ...] (lax.padtype_to_pads)."""
    if not isinstance(padding, str):
        raise TypeError(f"padtype_to_pads: padding must be a string, got {padding!r}")
    p = padding.upper()
    if any(operator.index(s) < 1 for s in window_strides):
        raise ValueError(f"padtype_to_pads: window_strides={tuple(window_strides)} must be "
                         "positive")
    if p == "VALID":
        return [(0, 0)] * len(in_shape)
    if p in ("SAME", "SAME_LOWER"):
        out = []
        for n, k, s in zip(in_shape, window_shape, window_strides):
            o = -(-n // s)
            total = max((o - 1) * s + k - n, 0)
            lo = total // 2 if p == "SAME" else total - total // 2
            out.append((lo, total - lo))
        return out
    raise ValueError(f"padtype_to_pads: unknown padding {padding!r}; expected 'SAME', "
                     "'SAME_LOWER', 'VALID' or a sequence of (low, high) pairs")


def _dilate(n, d):
    return 0 if n == 0 else 1 + d * (n - 1)


def _int_tuple(x, n, name, where, default=1):
    if x is None:
        return (default,) * n
    if isinstance(x, int) or hasattr(x, "__index__") and not hasattr(x, "__len__"):
        x = (x,) * n
    try:
        t = tuple(operator.index(v) for v in x)
    except TypeError:
        raise TypeError(f"{where}: {name} must be a sequence of {n} ints, got {x!r}") from None
    if len(t) != n:
        raise ValueError(f"{where}: {name}={t} must have {n} entries (one per spatial/window "
                         "dimension)")
    if any(v < 1 for v in t):  # strides, dilations and windows: a 0 would divide by zero
        raise ValueError(f"{where}: {name} {t} must be positive")
    return t


def _explicit_padding(padding, n, where, ctx=""):
    try:
        pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: padding must be 'SAME', 'SAME_LOWER', 'VALID' or a sequence "
                        f"of {n} (low, high) int pairs, got {padding!r}{ctx}") from None
    if len(pads) != n:
        raise ValueError(f"{where}: padding {pads} must have {n} (low, high) pairs{ctx}")
    return pads


def _canonical_precision(precision, where="conv_general_dilated"):
    """A ``precision=`` as bound: matmul_precision.canonicalize (None takes the config's
    default, as jax.lax does; a bad value raises naming `where`)."""
    from ..matmul_precision import canonicalize
    return canonicalize(precision, where)
