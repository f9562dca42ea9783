"""JSON and CSV tools of the text server (a mixin): format, validate, query and convert structured text."""

from __future__ import annotations

import csv
import io
import json
from typing import Annotated

from pydantic import Field

from cworld.sandbox.framework import tool
from cworld.sandbox.stateless.shared import TextResult, invalid, strict_loads
from cworld.sandbox.stateless.text.jsondata import csv_cell, json_type, parse_json, path_step, path_steps
from cworld.sandbox.stateless.text.models import (
    MAX_DATA,
    MAX_ROWS,
    JsonCheck,
    JsonIndent,
    JsonText,
    JsonValue,
    Table,
)


class DataTools:
    @tool(read_only=True)
    def json_format(
        self,
        text: JsonText,
        indent: JsonIndent = 2,
        sort_keys: Annotated[bool, Field(description="Sort object keys alphabetically.")] = False,
    ) -> TextResult:
        """Pretty-print (or minify, with indent 0) JSON text. Fails with the line and column of a syntax
        error."""
        value = parse_json(text)
        try:
            if indent == 0:
                return TextResult(
                    text=json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False)
                )
            return TextResult(text=json.dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=False))
        except (RecursionError, ValueError) as err:
            raise invalid(f"cannot re-serialize this JSON ({err}); flatten it") from None

    @tool(read_only=True)
    def json_validate(
        self,
        text: Annotated[
            str, Field(description="Text to check, at most 100,000 characters.", max_length=MAX_DATA)
        ],
    ) -> JsonCheck:
        """Check whether a text is valid JSON, and if not, say what and where (never fails itself)."""
        try:
            value = strict_loads(text)
        except json.JSONDecodeError as err:
            return JsonCheck(valid=False, error=err.msg, line=err.lineno, column=err.colno, type=None)
        except (ValueError, RecursionError) as err:
            return JsonCheck(
                valid=False, error=str(err) or "nested too deeply", line=None, column=None, type=None
            )
        return JsonCheck(valid=True, error=None, line=None, column=None, type=json_type(value))

    @tool(read_only=True)
    def json_get_path(
        self,
        text: JsonText,
        path: Annotated[
            str,
            Field(
                description="Keys and indexes, e.g. 'order.items[0].sku' ([-1] is the last "
                "item). Empty returns the whole document.",
                max_length=500,
            ),
        ],
    ) -> JsonValue:
        """Read one value out of a JSON document by a dotted path with [index] steps."""
        value = parse_json(text)
        for step in path_steps(path):
            ok, value = path_step(value, step)
            if not ok:
                return JsonValue(found=False, value_json=None, type=None)
        return JsonValue(found=True, value_json=json.dumps(value, ensure_ascii=False), type=json_type(value))

    @tool(read_only=True)
    def csv_to_json(
        self,
        csv_text: Annotated[
            str,
            Field(
                description="CSV text with a header row, at most 100,000 characters.",
                min_length=1,
                max_length=MAX_DATA,
            ),
        ],
        delimiter: Annotated[
            str,
            Field(
                description="Field separator: one character such as ',', ';' or a tab.",
                min_length=1,
                max_length=1,
            ),
        ] = ",",
    ) -> Table:
        """Parse CSV (first row = column names, quoted fields allowed) into one object per row. Missing
        cells become empty strings; extra cells are an error."""
        if delimiter in '"\r\n':
            raise invalid("the delimiter cannot be a quote or a line break; use ',', ';', '|' or a tab")
        try:
            rows = list(csv.reader(io.StringIO(csv_text), delimiter=delimiter))
        except csv.Error as err:
            raise invalid(f"cannot parse the CSV ({err})") from None
        rows = [r for r in rows if r]
        if not rows:
            raise invalid("the CSV has no header row; the first line must name the columns")
        header, data = rows[0], rows[1 : MAX_ROWS + 1]
        if len(set(header)) != len(header):
            raise invalid(f"the header repeats a column name ({header}); column names must be distinct")
        for i, row in enumerate(data, start=2):
            if len(row) > len(header):
                raise invalid(f"row {i} has {len(row)} cells but the header has {len(header)} columns")
        records = [dict(zip(header, row + [""] * (len(header) - len(row)), strict=True)) for row in data]
        return Table(rows=records, columns=header, row_count=len(records))

    @tool(read_only=True)
    def json_to_csv(
        self,
        text: Annotated[
            str,
            Field(
                description='A JSON array of flat objects, e.g. \'[{"a": 1}, {"a": 2}]\'.',
                min_length=2,
                max_length=MAX_DATA,
            ),
        ],
    ) -> TextResult:
        """Turn a JSON array of flat objects into CSV with a header row; columns are the keys in order of
        first appearance, nested values are written as JSON."""
        value = parse_json(text)
        if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
            raise invalid('pass a JSON array of objects, e.g. [{"name": "Ada", "age": 36}]')
        columns = list(dict.fromkeys(k for row in value for k in row))
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for row in value:
            writer.writerow([csv_cell(row.get(c)) for c in columns])
        return TextResult(text=out.getvalue())
