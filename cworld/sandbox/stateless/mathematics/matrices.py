"""Matrix helpers of the math server: shape checks, Gaussian elimination and result rounding."""

from __future__ import annotations

from cworld.sandbox.stateless.mathematics.models import Matrix, MatrixResult
from cworld.sandbox.stateless.shared import clean, invalid

#: Pivots smaller than this (relative to the largest entry) count as zero: the matrix is singular.
SINGULAR_TOLERANCE = 1e-12


def require_rectangular(m: list[list[float]], what: str) -> Matrix:
    width = len(m[0])
    for i, row in enumerate(m):
        if len(row) != width:
            raise invalid(
                f"{what} row {i} has {len(row)} entries but row 0 has {width}; rows must be equal length"
            )
    return [[float(v) for v in row] for row in m]


def require_square(m: list[list[float]], what: str) -> Matrix:
    rows = require_rectangular(m, what)
    if len(rows) != len(rows[0]):
        raise invalid(f"{what} is {len(rows)}x{len(rows[0])}; this needs a square matrix")
    return rows


def matrix_result(m: Matrix) -> MatrixResult:
    return MatrixResult(
        matrix=[[clean(v, "matrix entry") for v in row] for row in m],
        rows=len(m),
        columns=len(m[0]) if m else 0,
    )


def eliminate(a: Matrix, extra: Matrix) -> tuple[float, Matrix]:
    """Gauss-Jordan on `a` (square), applying the same row operations to `extra`; returns (det, extra)."""
    n = len(a)
    a = [row[:] for row in a]
    extra = [row[:] for row in extra]
    scale = max((abs(v) for row in a for v in row), default=0.0) or 1.0
    det = 1.0
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) <= SINGULAR_TOLERANCE * scale:
            return 0.0, extra
        if pivot != col:
            a[col], a[pivot], extra[col], extra[pivot] = a[pivot], a[col], extra[pivot], extra[col]
            det = -det
        p = a[col][col]
        det *= p
        a[col] = [v / p for v in a[col]]
        extra[col] = [v / p for v in extra[col]]
        for r in range(n):
            if r != col and a[r][col] != 0:
                f = a[r][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col], strict=True)]
                extra[r] = [x - f * y for x, y in zip(extra[r], extra[col], strict=True)]
    return det, extra
