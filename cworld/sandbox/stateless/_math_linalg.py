"""Matrix tools of the math server (a mixin). Gaussian elimination with partial pivoting, matrices up to
20x20, so every call finishes in milliseconds."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field

from cworld.sandbox.framework import tool
from cworld.sandbox.stateless._common import NumberResult, Real, clean, invalid

MAX_SIZE = 20
#: Pivots smaller than this (relative to the largest entry) count as zero: the matrix is singular.
SINGULAR_TOLERANCE = 1e-12

Row = Annotated[list[Real], Field(min_length=1, max_length=MAX_SIZE)]
Matrix = list[list[float]]


def matrix_param(what: str) -> Any:
    return Field(
        description=f"{what}: a list of rows, each a list of numbers; at most {MAX_SIZE}x{MAX_SIZE}.",
        min_length=1,
        max_length=MAX_SIZE,
    )


class MatrixResult(BaseModel):
    matrix: list[list[float]] = Field(description="The resulting matrix, as a list of rows.")
    rows: int
    columns: int


class VectorResult(BaseModel):
    solution: list[float] = Field(description="x such that A·x = b, one value per unknown.")


def _rectangular(m: list[list[float]], what: str) -> Matrix:
    width = len(m[0])
    for i, row in enumerate(m):
        if len(row) != width:
            raise invalid(
                f"{what} row {i} has {len(row)} entries but row 0 has {width}; rows must be equal length"
            )
    return [[float(v) for v in row] for row in m]


def _square(m: list[list[float]], what: str) -> Matrix:
    rows = _rectangular(m, what)
    if len(rows) != len(rows[0]):
        raise invalid(f"{what} is {len(rows)}x{len(rows[0])}; this needs a square matrix")
    return rows


def _result(m: Matrix) -> MatrixResult:
    return MatrixResult(
        matrix=[[clean(v, "matrix entry") for v in row] for row in m],
        rows=len(m),
        columns=len(m[0]) if m else 0,
    )


def _eliminate(a: Matrix, extra: Matrix) -> tuple[float, Matrix]:
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


class LinearAlgebraTools:
    @tool(read_only=True)
    def matrix_multiply(
        self,
        a: Annotated[list[Row], matrix_param("Left matrix A (m x n)")],
        b: Annotated[list[Row], matrix_param("Right matrix B (n x p)")],
    ) -> MatrixResult:
        """The matrix product A·B. A's column count must equal B's row count."""
        left, right = _rectangular(a, "A"), _rectangular(b, "B")
        if len(left[0]) != len(right):
            raise invalid(f"A has {len(left[0])} columns but B has {len(right)} rows; they must be equal")
        cols = list(zip(*right, strict=True))
        return _result([[sum(x * y for x, y in zip(row, col, strict=True)) for col in cols] for row in left])

    @tool(read_only=True)
    def matrix_transpose(self, matrix: Annotated[list[Row], matrix_param("The matrix")]) -> MatrixResult:
        """The transpose: rows become columns."""
        m = _rectangular(matrix, "the matrix")
        return _result([list(col) for col in zip(*m, strict=True)])

    @tool(read_only=True)
    def matrix_determinant(
        self, matrix: Annotated[list[Row], matrix_param("A square matrix")]
    ) -> NumberResult:
        """The determinant of a square matrix (0 when it is singular)."""
        m = _square(matrix, "the matrix")
        det, _ = _eliminate(m, [[] for _ in m])
        return NumberResult(value=clean(det, "determinant"))

    @tool(read_only=True)
    def matrix_inverse(
        self, matrix: Annotated[list[Row], matrix_param("A square, non-singular matrix")]
    ) -> MatrixResult:
        """The inverse of a square matrix. Fails for a singular matrix (determinant 0), which has none."""
        m = _square(matrix, "the matrix")
        identity = [[1.0 if i == j else 0.0 for j in range(len(m))] for i in range(len(m))]
        det, inverse = _eliminate(m, identity)
        if det == 0:
            raise invalid("the matrix is singular (determinant 0) and has no inverse")
        return _result(inverse)

    @tool(read_only=True)
    def solve_linear_system(
        self,
        coefficients: Annotated[list[Row], matrix_param("Square coefficient matrix A, one row per equation")],
        constants: Annotated[
            list[Real],
            Field(
                description="Right-hand side b, one value per equation.", min_length=1, max_length=MAX_SIZE
            ),
        ],
    ) -> VectorResult:
        """Solve A·x = b for x (n equations, n unknowns). Fails when the system has no unique solution."""
        m = _square(coefficients, "the coefficient matrix")
        if len(constants) != len(m):
            raise invalid(
                f"{len(m)} equations but {len(constants)} constants; pass one constant per equation"
            )
        det, solved = _eliminate(m, [[float(c)] for c in constants])
        if det == 0:
            raise invalid("the system has no unique solution (the coefficient matrix is singular)")
        return VectorResult(solution=[clean(row[0], "solution") for row in solved])
