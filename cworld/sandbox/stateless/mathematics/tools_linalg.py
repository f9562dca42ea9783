"""Matrix tools of the math server (a mixin). Gaussian elimination with partial pivoting, matrices up to
20x20, so every call finishes in milliseconds."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from cworld.sandbox.framework import tool
from cworld.sandbox.stateless.mathematics.matrices import (
    eliminate,
    matrix_result,
    require_rectangular,
    require_square,
)
from cworld.sandbox.stateless.mathematics.models import (
    MAX_SIZE,
    MatrixResult,
    Row,
    VectorResult,
    matrix_param,
)
from cworld.sandbox.stateless.shared import NumberResult, Real, clean, invalid


class LinearAlgebraTools:
    @tool(read_only=True)
    def matrix_multiply(
        self,
        a: Annotated[list[Row], matrix_param("Left matrix A (m x n)")],
        b: Annotated[list[Row], matrix_param("Right matrix B (n x p)")],
    ) -> MatrixResult:
        """The matrix product A·B. A's column count must equal B's row count."""
        left, right = require_rectangular(a, "A"), require_rectangular(b, "B")
        if len(left[0]) != len(right):
            raise invalid(f"A has {len(left[0])} columns but B has {len(right)} rows; they must be equal")
        cols = list(zip(*right, strict=True))
        return matrix_result(
            [[sum(x * y for x, y in zip(row, col, strict=True)) for col in cols] for row in left]
        )

    @tool(read_only=True)
    def matrix_transpose(self, matrix: Annotated[list[Row], matrix_param("The matrix")]) -> MatrixResult:
        """The transpose: rows become columns."""
        m = require_rectangular(matrix, "the matrix")
        return matrix_result([list(col) for col in zip(*m, strict=True)])

    @tool(read_only=True)
    def matrix_determinant(
        self, matrix: Annotated[list[Row], matrix_param("A square matrix")]
    ) -> NumberResult:
        """The determinant of a square matrix (0 when it is singular)."""
        m = require_square(matrix, "the matrix")
        det, _ = eliminate(m, [[] for _ in m])
        return NumberResult(value=clean(det, "determinant"))

    @tool(read_only=True)
    def matrix_inverse(
        self, matrix: Annotated[list[Row], matrix_param("A square, non-singular matrix")]
    ) -> MatrixResult:
        """The inverse of a square matrix. Fails for a singular matrix (determinant 0), which has none."""
        m = require_square(matrix, "the matrix")
        identity = [[1.0 if i == j else 0.0 for j in range(len(m))] for i in range(len(m))]
        det, inverse = eliminate(m, identity)
        if det == 0:
            raise invalid("the matrix is singular (determinant 0) and has no inverse")
        return matrix_result(inverse)

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
        m = require_square(coefficients, "the coefficient matrix")
        if len(constants) != len(m):
            raise invalid(
                f"{len(m)} equations but {len(constants)} constants; pass one constant per equation"
            )
        det, solved = eliminate(m, [[float(c)] for c in constants])
        if det == 0:
            raise invalid("the system has no unique solution (the coefficient matrix is singular)")
        return VectorResult(solution=[clean(row[0], "solution") for row in solved])
