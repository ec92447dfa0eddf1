"""RFC 8785 canonical JSON (JCS), the bytes Warden hashes and signs (docs/contracts.md).

Object members sorted by their UTF-16 code units, no whitespace, strings escaped as
ECMAScript's JSON.stringify does, numbers in ECMAScript's shortest round-trip form.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any


def _number(x: float) -> str:
    if not math.isfinite(x):
        raise ValueError("canonical JSON has no NaN or Infinity")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    _, digit_tuple, exponent = Decimal(repr(abs(x))).normalize().as_tuple()
    digits = "".join(str(d) for d in digit_tuple)
    k = len(digits)
    n = int(exponent) + k
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mantissa = digits[0] + (f".{digits[1:]}" if k > 1 else "")
        text = f"{mantissa}e{'+' if e > 0 else '-'}{abs(e)}"
    return sign + text


def canonical_json(value: Any) -> str:
    """The canonical JSON text of a JSON value (dict, list, str, int, float, bool, None)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int):
        if abs(value) > 2**53 - 1:
            raise ValueError("an integer beyond 2^53 has no exact JSON number")
        return str(value)
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical_json(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: str(k).encode("utf-16-be"))
        for k in keys:
            if not isinstance(k, str):
                raise ValueError("object keys must be strings")
        return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{canonical_json(value[k])}" for k in keys) + "}"
    raise ValueError(f"not a JSON value: {type(value).__name__}")


def canonical_bytes(value: Any) -> bytes:
    return canonical_json(value).encode("utf-8")
